"""RunningMoments: Chan's merge in any chunking equals one pass (numpy's mean and variance)."""

import numpy as np
import pytest

from sklearn_shapq.algorithms import RunningMoments
from sklearn_shapq.backends import ArrayBackend


def _chunks(n, rng):
    """Random cut points of n samples into chunks (empty chunks included)."""
    cuts = np.sort(rng.integers(0, n + 1, size=rng.integers(0, 8)))
    return np.concatenate([[0], cuts, [n]])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("offset", [0.0, 1e8])
def test_any_chunking_equals_one_pass(seed, offset):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    samples = offset + rng.normal(size=(n, 3, 2)) * rng.uniform(0.1, 10.0, size=(3, 2))
    moments = RunningMoments((3, 2))
    bounds = _chunks(n, rng)
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        if stop > start:
            moments.merge(*RunningMoments.of(samples[start:stop], axis=0))
    np.testing.assert_array_equal(moments.count, n)
    np.testing.assert_allclose(moments.mean, samples.mean(axis=0), rtol=1e-14, atol=1e-12)
    if n > 1:  # relative to the spread, not the offset: the merge is stable
        np.testing.assert_allclose(moments.variance(), samples.var(axis=0, ddof=1), rtol=1e-7)
        np.testing.assert_allclose(moments.stderr(), samples.std(axis=0, ddof=1) / np.sqrt(n), rtol=1e-7)


def test_one_sample_at_a_time_is_stable():
    rng = np.random.default_rng(0)
    samples = 1e9 + rng.normal(size=500)
    moments = RunningMoments((1,))
    for value in samples:
        moments.merge(1, np.array([value]), np.zeros(1))
    assert moments.count[0] == 500
    np.testing.assert_allclose(moments.mean, [samples.mean()], rtol=1e-15)
    np.testing.assert_allclose(moments.variance(), [samples.var(ddof=1)], rtol=1e-6)


def test_of_is_two_pass():
    samples = np.array([[1.0, 10.0], [3.0, 10.0], [5.0, 13.0]])
    count, mean, m2 = RunningMoments.of(samples, axis=0)
    assert count == 3
    np.testing.assert_array_equal(mean, [3.0, 11.0])
    np.testing.assert_allclose(m2, [8.0, 6.0])
    count, mean, m2 = RunningMoments.of(samples, axis=1)
    assert count == 2
    np.testing.assert_allclose(m2, [40.5, 24.5, 32.0])


def test_merge_into_some_rows_only():
    rng = np.random.default_rng(1)
    samples = rng.normal(size=(4, 10, 3))  # 4 rows, 10 samples each
    moments = RunningMoments((4, 3))
    moments.merge(*RunningMoments.of(samples[:, :4], axis=1))
    rows = np.array([0, 2])
    moments.merge(*RunningMoments.of(samples[rows, 4:], axis=1), where=rows)
    np.testing.assert_array_equal(moments.count[:, 0], [10, 4, 10, 4])
    for r in range(4):
        kept = samples[r] if r in rows else samples[r, :4]
        np.testing.assert_allclose(moments.mean[r], kept.mean(axis=0), rtol=1e-13)
        np.testing.assert_allclose(moments.variance()[r], kept.var(axis=0, ddof=1), rtol=1e-12)


def test_subset_is_a_copy_of_some_cells():
    moments = RunningMoments((3, 2))
    moments.merge(*RunningMoments.of(np.arange(18.0).reshape(3, 3, 2), axis=1))
    part = moments.subset(np.array([2, 0]))
    np.testing.assert_array_equal(part.mean, moments.mean[[2, 0]])
    np.testing.assert_array_equal(part.count, moments.count[[2, 0]])
    part.mean[:] = -1.0
    assert (moments.mean >= 0).all()


def test_fewer_than_two_samples():
    moments = RunningMoments((2,))
    np.testing.assert_array_equal(moments.variance(), [0.0, 0.0])
    moments.merge(np.array([1, 2]), np.array([5.0, 1.0]), np.array([0.0, 2.0]))
    np.testing.assert_array_equal(moments.variance(), [0.0, 2.0])
    assert np.isnan(moments.variance(undefined=np.nan)[0]) and moments.variance(undefined=np.nan)[1] == 2.0
    assert np.isnan(moments.stderr(undefined=np.nan)[0])
    np.testing.assert_allclose(moments.stderr()[1], 1.0)


def test_generic_array_namespace():
    rng = np.random.default_rng(2)
    samples = rng.normal(size=(30, 4))
    xp = ArrayBackend(np).xp
    moments = RunningMoments((4,), xp)
    for start in range(0, 30, 7):
        moments.merge(*RunningMoments.of(samples[start : start + 7], axis=0))
    np.testing.assert_allclose(moments.variance(), samples.var(axis=0, ddof=1), rtol=1e-12)
