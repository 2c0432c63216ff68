"""sample_permutations: weighted sets of orderings from every sampler, uniformity, edge cases, seeds."""

import math

import numpy as np
import pytest

from sklearn_shapq._random import make_generator
from sklearn_shapq.samplers import ORDERING_SOURCES, keyed_orderings, sample_permutations
from sklearn_shapq.samplers._keyed import draw_seed

from game_helpers import is_permutation_rows, permutation_pvalue

ALPHA = 1e-3
SAMPLERS = list(ORDERING_SOURCES)


@pytest.mark.parametrize("method", SAMPLERS)
@pytest.mark.parametrize(("n", "d"), [(1, 1), (3, 1), (1, 2), (5, 2), (7, 3), (7, 4), (30, 5)])
def test_every_sampler_gives_weighted_permutations(method, n, d):
    orderings, weights = sample_permutations(method, n, d, random_state=0)
    assert orderings.shape == (n, d) and orderings.dtype == np.int32
    assert is_permutation_rows(orderings)
    assert weights.shape == (n,) and weights.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("d", [4, 5])
def test_mc_is_uniform_over_all_orderings(d):
    orderings = sample_permutations("mc", 60 * math.factorial(d), d, random_state=d)[0]
    assert permutation_pvalue(orderings) > ALPHA


@pytest.mark.parametrize("d", [4, 5])
def test_antithetic_is_uniform_per_slot(d):
    orderings = sample_permutations("antithetic", 2 * 60 * math.factorial(d), d, random_state=d)[0]
    assert (orderings[1::2] == orderings[0::2, ::-1]).all()
    for slot in (0, 1):
        assert permutation_pvalue(orderings[slot::2]) > ALPHA


def test_odd_antithetic_and_partial_orthogonal_blocks():
    odd = sample_permutations("antithetic", 5, 6, random_state=0)[0]
    np.testing.assert_array_equal(odd[[1, 3]], odd[[0, 2], ::-1])
    assert not (odd[4] == odd[3][::-1]).all()
    partial = sample_permutations("orthogonal", 13, 4, random_state=0)[0]  # blocks of 6: 6 + 6 + 1
    np.testing.assert_array_equal(partial[1:12:2], partial[0:12:2, ::-1])


def test_small_d_designs_enumerate_every_ordering():
    for method in ("herding", "sbq"):
        orderings, weights = sample_permutations(method, 30, 4, random_state=0)
        every = {tuple(p) for p in orderings.tolist()}
        assert len(every) == 24
        totals = dict.fromkeys(every, 0.0)
        for p, w in zip(orderings.tolist(), weights, strict=True):
            totals[tuple(p)] += w
        np.testing.assert_allclose(list(totals.values()), 1 / 24)


def test_sobol_with_two_features_alternates_the_two_orderings():
    orderings = sample_permutations("sobol", 4, 2, random_state=0)[0]
    np.testing.assert_array_equal(orderings[1::2], orderings[0::2, ::-1])


def test_invalid_arguments():
    with pytest.raises(ValueError, match="halton"):
        sample_permutations("halton", 3, 3)
    with pytest.raises(ValueError, match="n_permutations"):
        sample_permutations("mc", 0, 3)
    with pytest.raises(ValueError, match="n_features"):
        sample_permutations("mc", 3, 0)
    with pytest.raises(ValueError, match="lam"):
        sample_permutations("herding", 3, 3, lam=np.inf)
    with pytest.raises(ValueError, match="n_candidates"):
        sample_permutations("herding", 3, 3, n_candidates=0)
    with pytest.raises(ValueError, match="herding"):
        sample_permutations("sbq", 2001, 10)  # greedy SBQ: at most 2000 orderings


@pytest.mark.parametrize("method", SAMPLERS)
def test_same_seed_same_set_and_other_seed_other_set(method):
    a = sample_permutations(method, 12, 7, random_state=3)
    b = sample_permutations(method, 12, 7, random_state=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    c = sample_permutations(method, 12, 7, random_state=4)
    assert not np.array_equal(a[0], c[0])


def test_mc_uses_the_keyed_generator_at_row_key_zero():
    seed = int(np.random.default_rng(np.random.SeedSequence([3, 1])).integers(0, 2**64, dtype=np.uint64))
    assert seed == draw_seed(make_generator(3, stream=1))
    np.testing.assert_array_equal(
        sample_permutations("mc", 12, 7, random_state=3)[0], keyed_orderings(seed, np.arange(12), 7)
    )


def test_generators_are_advanced_and_the_global_state_untouched():
    np.random.seed(123)  # noqa: NPY002 -- the global state must stay untouched
    state = np.random.get_state()  # noqa: NPY002
    generator = np.random.default_rng(5)
    first = sample_permutations("mc", 5, 6, random_state=generator)[0]
    second = sample_permutations("mc", 5, 6, random_state=generator)[0]
    assert not np.array_equal(first, second)
    assert sample_permutations("mc", 5, 6, random_state=np.random.RandomState(5))[0].shape == (5, 6)
    after = np.random.get_state()  # noqa: NPY002
    assert after[0] == state[0] and np.array_equal(after[1], state[1]) and after[2:] == state[2:]


@pytest.mark.parametrize("method", ["mc", "antithetic"])
@pytest.mark.parametrize("n", [1, 4, 7])
def test_antithetic_pairs_and_reproducibility(method, n):
    orderings, weights = sample_permutations(method, n, 6, random_state=0)
    assert orderings.shape == (n, 6) and is_permutation_rows(orderings)
    np.testing.assert_allclose(weights, 1 / n)
    if method == "antithetic":
        for i in range(n // 2):
            np.testing.assert_array_equal(orderings[2 * i + 1], orderings[2 * i][::-1])
    np.testing.assert_array_equal(orderings, sample_permutations(method, n, 6, random_state=0)[0])
