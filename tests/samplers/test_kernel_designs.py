"""Greedy Mallows-kernel designs (herding, SBQ) against a direct greedy search, and their per-slot uniformity."""

import math
from itertools import combinations

import numpy as np
import pytest

from sklearn_shapq.samplers import discrepancy, sample_permutations
from sklearn_shapq.samplers._kernel_designs import herding_orderings, sbq_orderings, sbq_weights

from game_helpers import permutation_pvalue

ALPHA = 1e-3


def kernel(a, b, lam):
    """Mallows kernel exp(−λ n_dis / C(d, 2)) of two orderings, discordant pairs of ranks counted by hand."""
    d = len(a)
    ra, rb = np.argsort(a), np.argsort(b)
    n_dis = sum((ra[i] < ra[j]) != (rb[i] < rb[j]) for i, j in combinations(range(d), 2))
    return math.exp(-lam * n_dis / (d * (d - 1) / 2))


def candidates(n, c, d, seed):
    rng = np.random.default_rng(seed)
    every = np.argsort(rng.random((n, c, d)), axis=-1).astype(np.int32)

    def draw(start, stop):
        return every[start:stop]

    return every, draw


def test_herding_is_the_greedy_minimiser_of_the_kernel_sum():
    n, c, d, lam = 8, 5, 5, 4.0
    every, draw = candidates(n, c, d, 0)
    design = herding_orderings(n, d, draw, lam)
    chosen = [every[0, 0]]  # the first pick is the first candidate (uniform)
    for t in range(1, n):
        sums = [sum(kernel(option, p, lam) for p in chosen) for option in every[t]]
        chosen.append(every[t, int(np.argmin(sums))])
    np.testing.assert_array_equal(design, np.array(chosen))


def test_sbq_is_the_greedy_maximiser_of_one_k_inverse_one_with_normalised_weights():
    n, c, d, lam = 7, 4, 5, 4.0
    every, draw = candidates(n, c, d, 1)
    design, weights = sbq_orderings(n, d, draw, lam)

    def gram(points):
        return np.array([[kernel(a, b, lam) for b in points] for a in points]) + 1e-10 * np.eye(len(points))

    chosen = [every[0, 0]]
    for t in range(1, n):
        scores = [np.ones(t + 1) @ np.linalg.solve(gram(chosen + [option]), np.ones(t + 1)) for option in every[t]]
        chosen.append(every[t, int(np.argmax(scores))])
    np.testing.assert_array_equal(design, np.array(chosen))
    expected = np.linalg.solve(gram(chosen), np.ones(n))
    np.testing.assert_allclose(weights, expected / expected.sum(), rtol=1e-8)
    np.testing.assert_allclose(sbq_weights(design, lam), weights, rtol=1e-8)


def test_sbq_weights_are_normalised_and_lower_the_discrepancy():
    orderings, weights = sample_permutations("sbq", 30, 10, random_state=0)
    assert weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert not np.allclose(weights, 1 / 30)
    assert discrepancy(orderings, weights) <= discrepancy(orderings) + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize(("method", "n", "slots"), [("sobol", 8, (0, 5)), ("herding", 6, (0, 3)), ("sbq", 6, (0, 3))])
def test_designs_are_uniform_per_slot_over_seeds(method, n, slots):
    """Each ordering of a design is uniform over seeds (what makes the weighted walk unbiased)."""
    d = 4
    for slot in slots:
        orderings = np.array(
            [sample_permutations(method, n, d, random_state=s)[0][slot] for s in range(12 * math.factorial(d))]
        )
        assert permutation_pvalue(orderings) > ALPHA, (method, slot)
