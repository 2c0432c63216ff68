"""Samplers: uniformity, the Mallows kernel and discrepancy, Table 4, sphere maps, edge cases."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import erfinv
from scipy.stats import chisquare

from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.samplers import (
    SAMPLERS,
    discrepancy,
    keyed_orderings,
    make_source,
    mallows_kernel,
    mallows_mean,
    sample_permutations,
)
from sklearn_shapq.samplers._mallows import sign_features
from sklearn_shapq.samplers._sphere import (
    orthogonal_orderings,
    polar_inverse_cdf,
    polar_to_cartesian,
    sobol_sphere_points,
    sphere_orderings,
    zero_sum_embedding,
)

ALPHA = 1e-3


def _is_permutation_rows(orderings):
    d = orderings.shape[1]
    return bool((np.sort(orderings, axis=1) == np.arange(d)).all())


def _chi_square_pvalue(orderings):
    d = orderings.shape[1]
    index = {p: i for i, p in enumerate(itertools.permutations(range(d)))}
    counts = np.bincount([index[tuple(p)] for p in orderings.tolist()], minlength=len(index))
    return chisquare(counts).pvalue


def _mallows_mmd(orderings, lam=5.0):
    """One-sample MMD statistic on disjoint consecutive pairs and its CLT threshold (spec §4.2)."""
    m = len(orderings) // 2 * 2
    features = sign_features(orderings[:m]).astype(np.float64)
    d = orderings.shape[1]
    n_dis = (d * (d - 1) / 2 - (features[0::2] * features[1::2]).sum(axis=1)) / 2
    kernel = np.exp(-lam * n_dis / (d * (d - 1) / 2))
    e1, e2 = mallows_mean(d, lam), mallows_mean(d, 2 * lam)
    statistic = kernel.mean() - e1
    threshold = math.sqrt(2 * 2 * (e2 - e1**2) / m) * erfinv(1 - ALPHA)
    return statistic, threshold


def _slot_samples(method, n, d, slot, seeds):
    """Ordering ``slot`` of independent sets (one per seed): independent uniform draws if unbiased."""
    return np.array([sample_permutations(method, n, d, random_state=s)[0][slot] for s in seeds])


# ----------------------------------------------------------------------------------------- uniformity


@pytest.mark.parametrize("d", [4, 5])
def test_mc_is_uniform_over_all_orderings(d):
    orderings = sample_permutations("mc", 60 * math.factorial(d), d, random_state=d)[0]
    assert _is_permutation_rows(orderings)
    assert _chi_square_pvalue(orderings) > ALPHA


@pytest.mark.parametrize("d", [4, 5])
def test_antithetic_is_uniform_per_slot(d):
    orderings = sample_permutations("antithetic", 2 * 60 * math.factorial(d), d, random_state=d)[0]
    assert (orderings[1::2] == orderings[0::2, ::-1]).all()
    for slot in (0, 1):
        assert _chi_square_pvalue(orderings[slot::2]) > ALPHA


@pytest.mark.parametrize("d", [4, 5])
def test_orthogonal_is_uniform_per_slot(d):
    rng = np.random.default_rng(d)
    blocks = orthogonal_orderings(rng.standard_normal((40 * math.factorial(d), d - 1, d - 1)))
    assert blocks.shape[1] == 2 * (d - 1)
    for slot in range(blocks.shape[1]):
        assert _chi_square_pvalue(blocks[:, slot]) > ALPHA


@pytest.mark.parametrize(("method", "n", "slots"), [("sobol", 8, (0, 5)), ("herding", 6, (0, 3)), ("sbq", 6, (0, 3))])
def test_qmc_designs_are_uniform_per_slot_over_seeds(method, n, slots):
    d = 4
    for slot in slots:
        orderings = _slot_samples(method, n, d, slot, range(12 * math.factorial(d)))
        assert _chi_square_pvalue(orderings) > ALPHA, (method, slot)


def test_misprinted_polar_map_is_detected():
    """The corrected polar map is uniform; the paper's Algorithm 4 as printed (``i < d − 2``) is not."""
    rng = np.random.default_rng(0)  # d = 5: angles of S^3 with densities sin^2, sin^1 and the azimuth
    u = rng.random((3000, 3))
    angles = np.column_stack([polar_inverse_cdf(u[:, 0], 2), polar_inverse_cdf(u[:, 1], 1), 2 * np.pi * u[:, 2]])
    points = polar_to_cartesian(angles)
    assert _chi_square_pvalue(sphere_orderings(points)) > ALPHA
    points[:, -2] /= np.cos(angles[:, -1])  # drop the last cos factor, as the misprint does
    assert _chi_square_pvalue(sphere_orderings(points)) < ALPHA


@pytest.mark.parametrize("method", SAMPLERS)
@pytest.mark.parametrize("d", [5, 30])
def test_mallows_mmd_accepts_every_sampler(method, d):
    orderings = _slot_samples(method, 3, d, 1, range(400))
    statistic, threshold = _mallows_mmd(orderings)
    assert abs(statistic) < threshold


def test_mallows_mmd_rejects_a_biased_sampler():
    rng = np.random.default_rng(0)
    biased = np.argsort(rng.random((600, 10)) + np.linspace(0, 0.3, 10), axis=1)
    statistic, threshold = _mallows_mmd(biased)
    assert abs(statistic) > threshold


# ------------------------------------------------------------------------------- kernel, discrepancy


@pytest.mark.parametrize("d", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("lam", [0.5, 4.0])
def test_mallows_mean_matches_brute_force(d, lam):
    every = np.array(list(itertools.permutations(range(d))))
    gram = mallows_kernel(every, every, lam)
    np.testing.assert_allclose(gram.mean(axis=1), mallows_mean(d, lam), rtol=1e-12)
    assert np.linalg.eigvalsh(gram).min() > -1e-9  # positive semi-definite on all of S_d


def test_mallows_mean_table():
    expected = {2: 0.509158, 3: 0.280746, 10: 0.153035, 200: 0.135949, 256: 0.135812}
    for d, value in expected.items():
        assert round(mallows_mean(d), 6) == value
    assert mallows_mean(2) == pytest.approx((1 + np.exp(-4.0)) / 2)


def test_kernel_uses_rank_vectors_and_antipode_is_exp_minus_lambda():
    rng = np.random.default_rng(0)
    orderings = sample_permutations("mc", 50, 9, random_state=1)[0]
    np.testing.assert_allclose(np.diag(mallows_kernel(orderings, orderings[:, ::-1])), np.exp(-4.0))
    # rank vectors: the Kendall distance of two orderings is the inversions of one relative to the other
    a, b = orderings[0], orderings[1]
    ranks_a, ranks_b = np.argsort(a), np.argsort(b)
    n_dis = sum((ranks_a[i] < ranks_a[j]) != (ranks_b[i] < ranks_b[j]) for i in range(9) for j in range(i + 1, 9))
    assert mallows_kernel(a, b, 1.0)[0, 0] == pytest.approx(np.exp(-n_dis / 36))
    # relabelling features leaves the kernel unchanged
    relabel = rng.permutation(9)
    np.testing.assert_allclose(mallows_kernel(relabel[a], relabel[b]), mallows_kernel(a, b))


@pytest.mark.parametrize(("method", "pair_kernel"), [("mc", None), ("antithetic", np.exp(-4.0))])
def test_discrepancy_matches_closed_form_expectation(method, pair_kernel):
    d, n = 6, 10
    mu = mallows_mean(d)
    expected = (1 - mu) / n if pair_kernel is None else (1 + pair_kernel - 2 * mu) / n
    squares = np.array([discrepancy(sample_permutations(method, n, d, random_state=s)[0]) ** 2 for s in range(400)])
    assert abs(squares.mean() - expected) < 4 * squares.std() / np.sqrt(len(squares))


# Table 4 of the paper (thesis digits), d = 10: mean and std of the discrepancy over 25 trials.
TABLE4_D10 = {
    ("antithetic", 10): (0.263626, 0.010),
    ("orthogonal", 10): (0.244233, 0.003),
    ("sobol", 10): (0.258403, 0.007),
    ("herding", 10): (0.241113, 0.002),
    ("sbq", 10): (0.240285, 0.002),
    ("antithetic", 100): (0.083784, 0.004),
    ("orthogonal", 100): (0.070014, 0.002),
    ("sobol", 100): (0.068875, 0.002),
    ("herding", 100): (0.058985, 0.001),
    ("sbq", 100): (0.055803, 0.000),
}


@pytest.mark.parametrize(("method", "n"), list(TABLE4_D10))
def test_table4_discrepancy_at_d10(method, n):
    paper_mean, paper_std = TABLE4_D10[(method, n)]
    ours = [discrepancy(*sample_permutations(method, n, 10, random_state=s)) for s in range(8)]
    assert abs(np.mean(ours) - paper_mean) <= 2 * paper_std + 0.003


def test_sbq_weights_are_normalised_and_lower_the_discrepancy():
    orderings, weights = sample_permutations("sbq", 30, 10, random_state=0)
    assert weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert not np.allclose(weights, 1 / 30)
    assert discrepancy(orderings, weights) <= discrepancy(orderings) + 1e-12


def test_discrepancy_validates_weights_and_lambda():
    orderings = sample_permutations("mc", 4, 5, random_state=0)[0]
    for bad in ([[0, 1, 2, 3], [0, 1, 2, 3_000_000]], [[0, 0, 0, 0]], [[0.5, 1.5, 2.0, 3.0]]):
        with pytest.raises(ValueError, match="orderings"):
            discrepancy(np.array(bad))
        with pytest.raises(ValueError, match="orderings"):
            mallows_kernel(np.array([[0, 1, 2, 3]]), np.array(bad))
    with pytest.raises(ValueError, match="weights"):
        discrepancy(orderings, np.ones(3))
    with pytest.raises(ValueError, match="lam"):
        discrepancy(orderings, lam=-1)


# ----------------------------------------------------------------------------------------- sphere maps


def test_zero_sum_embedding_is_the_dense_basis():
    d = 7
    basis = np.zeros((d - 1, d))
    for k in range(1, d):
        basis[k - 1, :k] = 1
        basis[k - 1, k] = -k
        basis[k - 1] /= np.sqrt(k * (k + 1))
    np.testing.assert_allclose(basis @ basis.T, np.eye(d - 1), atol=1e-12)
    points = np.random.default_rng(0).normal(size=(5, d - 1))
    embedded = zero_sum_embedding(points)
    np.testing.assert_allclose(embedded, points @ basis, atol=1e-12)
    np.testing.assert_allclose(embedded.sum(axis=1), 0, atol=1e-12)


def test_sobol_points_lie_on_the_sphere_with_uniform_second_moments():
    d = 6
    points = sobol_sphere_points(4096, d, np.random.default_rng(0))
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), 1, atol=1e-12)
    np.testing.assert_allclose((points**2).mean(axis=0), 1 / (d - 1), atol=0.01)


def test_antipode_is_the_reversed_ordering():
    points = np.random.default_rng(0).normal(size=(20, 8))
    np.testing.assert_array_equal(sphere_orderings(-points), sphere_orderings(points)[:, ::-1])


def test_orthogonal_block_pairs_are_reverses_and_nearly_uncorrelated():
    d = 40
    block = sample_permutations("orthogonal", 2 * (d - 1), d, random_state=0)[0]
    np.testing.assert_array_equal(block[1::2], block[0::2, ::-1])
    kendall = 1 - 2 * (-np.log(mallows_kernel(block[0::2], block[0::2], 1.0)))  # K_tau from lam = 1
    off_diagonal = kendall[~np.eye(d - 1, dtype=bool)]
    assert np.abs(off_diagonal).max() <= 0.5 + 0.1  # Theorem 2: |K_tau| <= 1/2 + o(1)


# ------------------------------------------------------------------------------------------ edge cases


@pytest.mark.parametrize("method", SAMPLERS)
@pytest.mark.parametrize(("n", "d"), [(1, 1), (3, 1), (1, 2), (5, 2), (7, 3), (7, 4), (30, 5)])
def test_every_sampler_gives_weighted_permutations(method, n, d):
    orderings, weights = sample_permutations(method, n, d, random_state=0)
    assert orderings.shape == (n, d) and orderings.dtype == np.int32
    assert _is_permutation_rows(orderings)
    assert weights.shape == (n,) and weights.sum() == pytest.approx(1.0, abs=1e-12)


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
        totals = {p: 0.0 for p in every}
        for p, w in zip(orderings.tolist(), weights, strict=True):
            totals[tuple(p)] += w
        np.testing.assert_allclose(list(totals.values()), 1 / 24)


def test_sobol_with_two_features_uses_antithetic_pairs():
    orderings = sample_permutations("sobol", 4, 2, random_state=0)[0]
    np.testing.assert_array_equal(orderings[1::2], orderings[0::2, ::-1])


def test_invalid_arguments():
    with pytest.raises(ValueError, match="Unknown permutation sampler"):
        sample_permutations("halton", 3, 3)
    with pytest.raises(ValueError, match="n_permutations"):
        sample_permutations("mc", 0, 3)
    with pytest.raises(ValueError, match="n_features"):
        sample_permutations("mc", 3, 0)
    with pytest.raises(ValueError, match="lam"):
        sample_permutations("herding", 3, 3, lam=np.inf)


def test_same_seed_same_set_and_mc_uses_the_keyed_generator():
    for method in SAMPLERS:
        a = sample_permutations(method, 12, 7, random_state=3)
        b = sample_permutations(method, 12, 7, random_state=3)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    rng = np.random.default_rng(np.random.SeedSequence([3, 1]))
    seed = int(rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True))
    np.testing.assert_array_equal(
        sample_permutations("mc", 12, 7, random_state=3)[0], keyed_orderings(seed, np.arange(12), 7)
    )


# ------------------------------------------------------------------------------------- ordering sources


@pytest.mark.parametrize("method", SAMPLERS)
def test_sources_address_orderings_by_row_and_unit(method):
    d, n = 6, 24
    source = make_source(method, n, d, np.random.default_rng(0))
    backend = CpuBackend()
    everything = source.orderings(np.arange(5), 0, source.n_units, backend)
    assert everything.shape == (5, n, d)
    assert _is_permutation_rows(everything.reshape(-1, d))
    last = min(3, source.n_units)
    middle = source.orderings(np.array([3, 1]), 1, last, backend)
    lo, hi = source.unit_bounds[1], source.unit_bounds[last]
    np.testing.assert_array_equal(middle, everything[[3, 1], lo:hi])
    weights = source.unit_weights(source.n_units)
    assert weights.sum() == pytest.approx(1.0, abs=1e-12) and len(weights) == source.n_units
    assert source.unit_weights(last).sum() == pytest.approx(1.0, abs=1e-12)
    if method in ("mc", "antithetic", "orthogonal"):
        assert not (everything[0] == everything[1]).all()  # rows get independent orderings
    else:
        np.testing.assert_array_equal(everything[0], everything[1])  # one shared design


def test_orthogonal_units_are_blocks_when_two_fit_else_pairs():
    d = 5
    assert np.diff(make_source("orthogonal", 16, d, np.random.default_rng(0)).unit_bounds).tolist() == [8, 8]
    assert np.diff(make_source("orthogonal", 12, d, np.random.default_rng(0)).unit_bounds).tolist() == [2] * 6
