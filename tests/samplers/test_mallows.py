"""The Mallows kernel on permutations, its mean, discrepancy (the paper's Eq. 8) and Table 4."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import erfinv

from sklearn_shapq.samplers import ORDERING_SOURCES, discrepancy, mallows_kernel, mallows_mean, sample_permutations
from sklearn_shapq.samplers._mallows import sign_features

ALPHA = 1e-3


def mallows_mmd(orderings, lam=5.0):
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
    orderings = np.argsort(rng.random((50, 9)), axis=1)
    np.testing.assert_allclose(np.diag(mallows_kernel(orderings, orderings[:, ::-1])), np.exp(-4.0))
    # rank vectors: the Kendall distance of two orderings is the inversions of one relative to the other
    a, b = orderings[0], orderings[1]
    ranks_a, ranks_b = np.argsort(a), np.argsort(b)
    n_dis = sum((ranks_a[i] < ranks_a[j]) != (ranks_b[i] < ranks_b[j]) for i in range(9) for j in range(i + 1, 9))
    assert mallows_kernel(a, b, 1.0)[0, 0] == pytest.approx(np.exp(-n_dis / 36))
    # relabelling features leaves the kernel unchanged
    relabel = rng.permutation(9)
    np.testing.assert_allclose(mallows_kernel(relabel[a], relabel[b]), mallows_kernel(a, b))


@pytest.mark.slow
@pytest.mark.parametrize("method", list(ORDERING_SOURCES))
@pytest.mark.parametrize("d", [5, 30])
def test_mallows_mmd_accepts_every_sampler(method, d):
    """Ordering 1 of independent sets (one per seed) is a uniform draw: the MMD test accepts it."""
    orderings = np.array([sample_permutations(method, 3, d, random_state=s)[0][1] for s in range(400)])
    statistic, threshold = mallows_mmd(orderings)
    assert abs(statistic) < threshold


def test_mallows_mmd_rejects_a_biased_sampler():
    rng = np.random.default_rng(0)
    biased = np.argsort(rng.random((600, 10)) + np.linspace(0, 0.3, 10), axis=1)
    statistic, threshold = mallows_mmd(biased)
    assert abs(statistic) > threshold


@pytest.mark.slow
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
