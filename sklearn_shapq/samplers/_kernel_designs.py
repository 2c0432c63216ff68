"""Greedy kernel designs on permutations under the Mallows kernel: kernel herding and sequential Bayesian quadrature.

Each step keeps the best of a few uniform candidates. SBQ's solves avoid BLAS, whose last bits differed by thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from sklearn_shapq.samplers._blas import single_threaded_blas
from sklearn_shapq.samplers._mallows import gram_from_features, sign_features

CandidateSource = Callable[[int, int], np.ndarray]
"""``draw(start, stop)`` → candidate orderings of greedy steps start … stop − 1, shape (steps, c, d)."""

JITTER = 1e-10
"""Added to the Gram diagonal: duplicates (likely at small d) keep it positive definite."""

_STEPS_PER_DRAW = 64


@numba.njit(cache=True)
def solve_lower(lower: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """X with ``lower @ X = rhs`` (t, t), (t, m) by forward substitution: the same bits in any thread.

    Examples
    --------
    >>> solve_lower(np.array([[2.0, 0.0], [1.0, 4.0]]), np.array([[2.0], [9.0]])).ravel().tolist()
    [1.0, 2.0]
    """
    t, m = rhs.shape
    out = np.empty((t, m))
    for j in range(m):
        for i in range(t):
            total = rhs[i, j]
            for k in range(i):
                total -= lower[i, k] * out[k, j]
            out[i, j] = total / lower[i, i]
    return out


def _greedy_design(n: int, n_features: int, draw: CandidateSource, pick: Callable) -> np.ndarray:
    """Run n greedy steps: ``pick(t, candidate_features, chosen_features)`` → index of the kept candidate."""
    chosen = np.empty((n, n_features), dtype=np.int32)
    features = None
    for start in range(0, n, _STEPS_PER_DRAW):
        candidates = draw(start, min(start + _STEPS_PER_DRAW, n))
        for offset, options in enumerate(candidates):
            t = start + offset
            option_features = sign_features(options)
            if features is None:
                features = np.empty((n, option_features.shape[1]), dtype=option_features.dtype)
            best = pick(t, option_features, features[:t])
            chosen[t], features[t] = options[best], option_features[best]
    return chosen


@single_threaded_blas
def herding_orderings(n: int, n_features: int, draw: CandidateSource, lam: float) -> np.ndarray:
    """Kernel herding: step t keeps the candidate with the smallest Σ_{s<t} K(candidate, chosen_s).

    ``draw`` is a :data:`CandidateSource`; returns int32 orderings (n, n_features).
    """

    def pick(t: int, options: np.ndarray, chosen: np.ndarray) -> int:
        return 0 if t == 0 else int(np.argmin(gram_from_features(options, chosen, lam).sum(axis=1)))

    return _greedy_design(n, n_features, draw, pick)


@single_threaded_blas
def sbq_orderings(n: int, n_features: int, draw: CandidateSource, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Sequential Bayesian quadrature with normalised weights.

    Step t keeps the candidate that most increases 1ᵀK⁻¹1, gain (1 − kᵀa)² / s (a = K⁻¹1, s the
    Schur complement). The weights K⁻¹1 are normalised to sum to 1, which keeps efficiency exact.

    Returns
    -------
    orderings : int32 array of shape (n, n_features)
    weights : float64 array of shape (n,), summing to 1
    """
    factor = np.zeros((n, n))  # lower Cholesky factor L of K + JITTER I over the chosen orderings
    ones_solved = np.zeros(n)  # L⁻¹ 1, grown by one entry per step

    def pick(t: int, options: np.ndarray, chosen: np.ndarray) -> int:
        best, column = 0, np.empty(0)
        if t:
            columns = gram_from_features(options, chosen, lam)  # (c, t)
            solved = solve_lower(factor[:t, :t], np.ascontiguousarray(columns.T))
            schur = np.maximum(1.0 + JITTER - (solved**2).sum(axis=0), JITTER)
            gain = (1.0 - (solved * ones_solved[:t, None]).sum(axis=0)) ** 2 / schur  # kᵀK⁻¹1 = (L⁻¹k)ᵀ(L⁻¹1)
            best = int(np.argmax(gain))
            column = factor[t, :t] = solved[:, best]
        factor[t, t] = np.sqrt(max(1.0 + JITTER - (column * column).sum(), JITTER))
        ones_solved[t] = (1.0 - (column * ones_solved[:t]).sum()) / factor[t, t]
        return best

    chosen = _greedy_design(n, n_features, draw, pick)
    return chosen, _normalised_bq_weights(factor)


def sbq_weights(orderings: np.ndarray, lam: float) -> np.ndarray:
    """Normalised Bayesian-quadrature weights K⁻¹1 / 1ᵀK⁻¹1 of a fixed set of orderings."""
    features = sign_features(orderings)
    gram = gram_from_features(features, features, lam) + JITTER * np.eye(len(orderings))
    return _normalised_bq_weights(np.linalg.cholesky(gram))


def _normalised_bq_weights(factor: np.ndarray) -> np.ndarray:
    """K⁻¹1 / 1ᵀK⁻¹1 from the lower Cholesky factor L of K: L h = 1, then Lᵀ w = h (reversed, lower)."""
    half = solve_lower(factor, np.ones((factor.shape[0], 1)))
    reversed_upper = np.ascontiguousarray(factor.T[::-1, ::-1])  # Lᵀ with rows and columns reversed: lower
    weights = solve_lower(reversed_upper, np.ascontiguousarray(half[::-1]))[::-1, 0]
    return weights / weights.sum()
