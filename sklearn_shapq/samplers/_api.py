"""Public entry point ``sample_permutations``: a weighted set of orderings from any sampler."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import check_positive_int
from sklearn_shapq.samplers._kernel_designs import herding_orderings, sbq_orderings
from sklearn_shapq.samplers._keyed import draw_seed, keyed_orderings
from sklearn_shapq.samplers._mallows import DEFAULT_LAMBDA, check_lambda
from sklearn_shapq.samplers._sphere import orthogonal_orderings, sobol_orderings

SAMPLERS = ("mc", "antithetic", "orthogonal", "sobol", "herding", "sbq")
DEFAULT_CANDIDATES = 25
"""Uniform candidates per greedy step of herding and SBQ (the paper's value)."""

SBQ_MAX_PERMUTATIONS = 2000
"""Largest SBQ design: its greedy steps cost O(n²) each (about 6 s for 2000 orderings)."""

ENUMERATING_SAMPLERS = ("herding", "sbq")
MAX_ENUMERATED_FEATURES = 8


def sample_permutations(
    method: str,
    n_permutations: int,
    n_features: int,
    *,
    random_state: Any = None,
    lam: float = DEFAULT_LAMBDA,
    n_candidates: int = DEFAULT_CANDIDATES,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw a weighted set of permutations for Shapley estimation.

    Every method gives orderings that are each uniform on the permutations, so the weighted
    estimator Σ_k w_k g_i(p_k) is unbiased and, since Σ w = 1, exactly efficient.

    Parameters
    ----------
    method : {"mc", "antithetic", "orthogonal", "sobol", "herding", "sbq"}
        - "mc": i.i.d. uniform orderings from the keyed bijective generator.
        - "antithetic": pairs of an ordering and its reverse (rows 2i, 2i + 1); an odd count ends
          with one extra independent ordering.
        - "orthogonal": orthogonal spherical codes: a Haar-random orthonormal basis of R^{d−1} and
          its antipodes give blocks of 2 (d − 1) orderings (pairs of reverses); the last block is
          cut short when needed (still unbiased).
        - "sobol": scrambled Sobol points on S^{d−2} through the corrected polar map and an exact
          inverse CDF; d = 2 has no angle to sample and uses antithetic pairs (exact there).
        - "herding": kernel herding with the Mallows kernel, ``n_candidates`` keyed uniform
          candidates per step.
        - "sbq": sequential Bayesian quadrature with the same kernel and candidates; weights are
          the Bayesian-quadrature weights normalised to sum to 1; at most 2000 orderings.
        Herding and SBQ enumerate all d! orderings instead when ``n_permutations >= d!``
        (d <= 8): their greedy steps would only repeat permutations.
    n_permutations : int
        Number of orderings, at least 1.
    n_features : int
        Number of features d, at least 1.
    random_state : None, int or Generator
        Seed; an int gives the same set on every call.
    lam : float, default=4.0
        Mallows bandwidth of herding and SBQ.
    n_candidates : int, default=25
        Candidates per greedy step of herding and SBQ.

    Returns
    -------
    orderings : int32 array of shape (n_permutations, n_features)
        Row k is the order in which features join the coalition.
    weights : float64 array of shape (n_permutations,)
        Weights summing to 1: uniform except for SBQ (and enumeration with repeats).

    Examples
    --------
    >>> orderings, weights = sample_permutations("antithetic", 4, 5, random_state=0)
    >>> bool((orderings[1] == orderings[0][::-1]).all()), float(weights.sum())
    (True, 1.0)
    >>> orderings, weights = sample_permutations("sbq", 20, 10, random_state=0)
    >>> orderings.shape, round(float(weights.sum()), 12)
    ((20, 10), 1.0)
    """
    if method not in SAMPLERS:
        raise ValueError(f"Unknown permutation sampler {method!r}; choose one of {SAMPLERS}.")
    n, d = check_positive_int(n_permutations, "n_permutations"), check_positive_int(n_features, "n_features")
    lam = check_lambda(lam)
    n_candidates = check_positive_int(n_candidates, "n_candidates")
    rng = make_generator(random_state, stream=1)
    uniform = np.full(n, 1.0 / n)
    if d == 1:
        return np.zeros((n, 1), dtype=np.int32), uniform
    if method == "mc":
        return np.asarray(keyed_orderings(draw_seed(rng), np.arange(n), d)), uniform
    if method == "antithetic" or (method == "sobol" and d == 2):
        return antithetic_set(draw_seed(rng), n, d), uniform
    if method == "orthogonal":
        n_blocks = -(-n // (2 * (d - 1)))
        return orthogonal_orderings(rng.standard_normal((n_blocks, d - 1, d - 1))).reshape(-1, d)[:n], uniform
    if method == "sobol":
        return sobol_orderings(n, d, rng), uniform
    if is_enumerated(n, d):
        return enumerated_orderings(n, d, rng)
    if method == "sbq" and n > SBQ_MAX_PERMUTATIONS:
        raise ValueError(
            f"sbq builds at most {SBQ_MAX_PERMUTATIONS} orderings (its cost grows as n³); got {n}. "
            "Use 'herding' (n²) for larger sets."
        )
    draw = candidate_source(draw_seed(rng), d, n_candidates)
    if method == "herding":
        return herding_orderings(n, d, draw, lam), uniform
    return sbq_orderings(n, d, draw, lam)


def antithetic_set(seed: int, n: int, d: int) -> np.ndarray:
    """N orderings: keyed ordering i at row 2i, its reverse at row 2i + 1, an odd one last."""
    keyed = np.asarray(keyed_orderings(seed, np.arange((n + 1) // 2), d))
    pairs = np.stack([keyed, keyed[:, ::-1]], axis=1).reshape(-1, d)
    return np.ascontiguousarray(pairs[:n])


def candidate_source(seed: int, d: int, n_candidates: int):
    """Candidates of greedy steps from the keyed generator: step t uses counters t·c … t·c + c − 1."""

    def draw(start: int, stop: int) -> np.ndarray:
        counters = np.arange(start * n_candidates, stop * n_candidates)
        return np.asarray(keyed_orderings(seed, counters, d)).reshape(stop - start, n_candidates, d)

    return draw


def is_enumerated(n: int, d: int) -> bool:
    """Whether herding and SBQ enumerate all d! orderings instead of choosing n greedily."""
    return d <= MAX_ENUMERATED_FEATURES and n >= math.factorial(d)


def enumerated_orderings(n: int, d: int, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All d! orderings in a random order, cycled to n rows; each permutation gets 1/d! in total.

    The weights depend only on (n, d). A prefix shorter than d! is a uniform sample without
    replacement, so early stopping stays unbiased with uniform weights.
    """
    every = np.array(list(itertools.permutations(range(d))), dtype=np.int32)
    if rng is not None:
        every = every[rng.permutation(len(every))]
    index = np.arange(n) % len(every)
    copies = np.bincount(index, minlength=len(every))
    return every[index], 1.0 / (len(every) * copies[index])
