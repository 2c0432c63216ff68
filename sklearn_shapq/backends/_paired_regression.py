"""Normal equations of the regression on complementary pairs (Leverage SHAP): array code and numba kernels.

A pair p holds a coalition S_p and its complement N ∖ S_p, both of kernel weight w_p. With centred
masks c = z_S − |S| / d (the complement's is −c), the pair adds 2 w_p c cᵀ to the normal matrix and
w_p c (b_S − b_{N∖S}) to the right side, so both are sums over the pairs' first coalitions only.
The pairs are split into groups (the jackknife's, and the classes listed whole); each group gets
its own sums, from which the estimator forms the full system and the leave-one-group-out ones.

* **Array path** (:func:`paired_normal_matrices_array`, :func:`paired_right_sides_array`; the GPU's
  and CI's twins): float masks, centred and weighted, and one batched product per group, in a
  Python loop over the few groups.
* **Numba path** (:func:`paired_normal_matrices_numba`, :func:`paired_right_sides_numba`; the CPU's):
  with a = |S| / d, Σ w c cᵀ = Σ w z zᵀ − u 1ᵀ − 1 uᵀ + (Σ w a²) 11ᵀ with u = Σ w a z, and
  Σ w c δ = Σ w δ z − (Σ w a δ) 1, so a pair costs |S|² / 2 additions for the matrix and |S| per
  output for the right side instead of d² and d, without temporaries; games on
  :func:`~sklearn_shapq.backends._threads.run_ranges` threads. Equal to the array path up to
  the order of the additions.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from sklearn_shapq.backends._threads import run_ranges

_MIN_THREAD_ADDITIONS = 1 << 17
"""Additions per thread below which a second thread is not worth starting."""


def paired_normal_matrices_array(first_masks: Any, weights: Any, groups: np.ndarray, n_groups: int, xp: Any) -> Any:
    """Return the normal matrix of each group of pairs, (B, n_groups, d, d), by array code on ``xp``.

    Arguments as :meth:`~sklearn_shapq.backends.ArrayBackend.paired_normal_matrices`.
    """
    centred, weighted = _centred_weighted(first_masks, weights, xp)
    by_feature = weighted.transpose(0, 2, 1)
    members = _group_members(groups, n_groups, xp)
    # a loop over the few groups: one batched product each
    return xp.stack([2 * xp.matmul(by_feature[:, :, m], centred[:, m]) for m in members], axis=1)


def paired_right_sides_array(
    first_masks: Any, weights: Any, groups: np.ndarray, n_groups: int, pair_targets: Any, xp: Any
) -> Any:
    """Return the right side of each group of pairs, (B, n_groups, d, k), by array code on ``xp``.

    Arguments as :meth:`~sklearn_shapq.backends.ArrayBackend.paired_right_sides`.
    """
    _, weighted = _centred_weighted(first_masks, weights, xp)
    members = _group_members(groups, n_groups, xp)
    return xp.stack([xp.einsum("bpi,bpk->bik", weighted[:, m], pair_targets[:, m]) for m in members], axis=1)


def _centred_weighted(first_masks: Any, weights: Any, xp: Any) -> tuple[Any, Any]:
    """Return centred masks z − |S| / d and the same times the pair's weight, (B, P, d) floats."""
    z = first_masks.astype(xp.float64)
    centred = z - z.sum(axis=2, keepdims=True) / z.shape[2]
    return centred, centred * xp.asarray(weights, dtype=xp.float64)[None, :, None]


def _group_members(groups: np.ndarray, n_groups: int, xp: Any) -> list:
    """Return the pair indices of each group 0 … n_groups − 1, on ``xp``."""
    groups = np.asarray(groups)
    return [xp.asarray(np.flatnonzero(groups == g)) for g in range(n_groups)]


def paired_normal_matrices_numba(
    first_masks: np.ndarray, weights: np.ndarray, groups: np.ndarray, n_groups: int
) -> np.ndarray:
    """Return the normal matrix of each group of pairs, (B, n_groups, d, d), by a numba kernel on threads.

    Arguments as :meth:`~sklearn_shapq.backends.ArrayBackend.paired_normal_matrices`.
    """
    masks, weights, groups = _kernel_inputs(first_masks, weights, groups, n_groups)
    n_games, n_pairs, d = masks.shape
    out = np.zeros((n_games, n_groups, d, d), dtype=np.float64)

    def games(start: int, stop: int) -> None:
        _normal_kernel(masks, weights, groups, out, start, stop)

    run_ranges(games, n_games, _MIN_THREAD_ADDITIONS // max(1, n_pairs * d * d // 8))
    return out


def paired_right_sides_numba(
    first_masks: np.ndarray, weights: np.ndarray, groups: np.ndarray, n_groups: int, pair_targets: np.ndarray
) -> np.ndarray:
    """Return the right side of each group of pairs, (B, n_groups, d, k), by a numba kernel on threads.

    Arguments as :meth:`~sklearn_shapq.backends.ArrayBackend.paired_right_sides`.
    """
    masks, weights, groups = _kernel_inputs(first_masks, weights, groups, n_groups)
    n_games, n_pairs, d = masks.shape
    if pair_targets.shape[:2] != (n_games, n_pairs):
        raise ValueError(f"pair_targets must have shape ({n_games}, {n_pairs}, k), got {pair_targets.shape}.")
    targets = np.ascontiguousarray(pair_targets, dtype=np.float64)
    out = np.zeros((n_games, n_groups, d, targets.shape[2]), dtype=np.float64)

    def games(start: int, stop: int) -> None:
        _right_side_kernel(masks, weights, groups, targets, out, start, stop)

    run_ranges(games, n_games, _MIN_THREAD_ADDITIONS // max(1, n_pairs * d * targets.shape[2] // 2))
    return out


def _kernel_inputs(
    first_masks: np.ndarray, weights: np.ndarray, groups: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return contiguous masks, weights and groups; groups checked against ``n_groups`` (the kernels index by them)."""
    masks = np.ascontiguousarray(first_masks, dtype=np.bool_)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    groups = np.ascontiguousarray(groups, dtype=np.intp)
    if weights.shape != (masks.shape[1],) or groups.shape != (masks.shape[1],):
        raise ValueError(f"weights and groups must have shape ({masks.shape[1]},), one per pair.")
    if groups.size and (groups.min() < 0 or groups.max() >= n_groups):
        raise ValueError(f"groups must lie in [0, {n_groups}).")
    return masks, weights, groups


@numba.njit(nogil=True, cache=True)
def _normal_kernel(
    masks: np.ndarray, weights: np.ndarray, groups: np.ndarray, out: np.ndarray, start: int, stop: int
) -> None:  # pragma: no cover - numba
    n_pairs, d = masks.shape[1], masks.shape[2]
    n_groups = out.shape[1]
    members = np.empty(d, dtype=np.intp)
    spread = np.empty((n_groups, d))  # u = Σ w a z of each group
    square = np.empty(n_groups)  # Σ w a² of each group
    for b in range(start, stop):
        spread[:] = 0.0
        square[:] = 0.0
        for p in range(n_pairs):
            g, w = groups[p], weights[p]
            size = 0
            for i in range(d):
                if masks[b, p, i]:
                    members[size] = i
                    size += 1
            a = size / d
            for ii in range(size):
                i = members[ii]
                for jj in range(ii, size):  # Σ w z zᵀ, upper triangle
                    out[b, g, i, members[jj]] += w
                spread[g, i] += w * a
            square[g] += w * a * a
        for g in range(n_groups):
            for i in range(d):
                for j in range(i, d):
                    value = 2.0 * (out[b, g, i, j] - spread[g, i] - spread[g, j] + square[g])
                    out[b, g, i, j] = value
                    out[b, g, j, i] = value


@numba.njit(nogil=True, cache=True)
def _right_side_kernel(
    masks: np.ndarray,
    weights: np.ndarray,
    groups: np.ndarray,
    targets: np.ndarray,
    out: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    n_pairs, d = masks.shape[1], masks.shape[2]
    n_groups, n_outputs = out.shape[1], out.shape[3]
    shift = np.empty((n_groups, n_outputs))  # Σ w a δ of each group
    for b in range(start, stop):
        shift[:] = 0.0
        for p in range(n_pairs):
            g, w = groups[p], weights[p]
            size = 0
            for i in range(d):
                if masks[b, p, i]:
                    size += 1
                    for k in range(n_outputs):
                        out[b, g, i, k] += w * targets[b, p, k]
            a = size / d
            for k in range(n_outputs):
                shift[g, k] += w * a * targets[b, p, k]
        for g in range(n_groups):
            for i in range(d):
                for k in range(n_outputs):
                    out[b, g, i, k] -= shift[g, k]
