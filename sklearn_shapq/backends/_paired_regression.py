"""Leverage SHAP's paired regression, full and leave-one-group-out: array code and a numba Cholesky kernel.

The system of a set of pair groups is Σ 2 w c cᵀ + 11ᵀ / d, c the centred mask of a pair's first coalition;
group 0 is never left out. It is solved through the system plus :data:`RIDGE` · mean diagonal · I, refined
once. Notes in ``doc/architecture.md``.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from sklearn_shapq.backends._threads import run_ranges

_MIN_THREAD_ADDITIONS = 1 << 17
"""Additions per thread below which a second thread is not worth starting."""

RIDGE = 1e-10
"""Ridge of a system, relative to the mean diagonal of its normal matrix."""

_REDUCTIONS_IN_ANY_ORDER = {"reassoc", "contract"}
"""LLVM flags of the Cholesky kernel: its sums may be reassociated into SIMD lanes (NaN and infinity kept),
so the last bits of Leverage SHAP's values follow the CPU's SIMD width."""


def paired_regression_array(
    first_masks: Any,
    weights: Any,
    groups: np.ndarray,
    n_groups: int,
    pair_targets: Any,
    leave_outs: bool,
    xp: Any,
) -> tuple[Any, Any]:
    """Full (B, d, n_outputs) and leave-one-group-out solutions (B, n_groups − 1, d, n_outputs) or None, by array code.

    Arguments as :meth:`~sklearn_shapq.backends.ArrayBackend.paired_regression`.
    """
    centred, weighted = _centred_weighted(first_masks, weights, xp)
    by_feature = weighted.transpose(0, 2, 1)
    members = _group_members(groups, n_groups, xp)
    # a loop over the few groups: one batched product each
    normal = xp.stack([2 * xp.matmul(by_feature[:, :, m], centred[:, m]) for m in members], axis=1)
    right = xp.stack([xp.einsum("bpi,bpk->bik", weighted[:, m], pair_targets[:, m]) for m in members], axis=1)
    full_normal, full_right = normal.sum(axis=1), right.sum(axis=1)
    full = _solve_array(full_normal, full_right, xp)
    if not leave_outs:
        return full, None
    return full, _solve_array(full_normal[:, None] - normal[:, 1:], full_right[:, None] - right[:, 1:], xp)


def _solve_array(normal: Any, right: Any, xp: Any) -> Any:
    """X of (normal + 11ᵀ / d) x = right through the ridged system, refined once; batched over the leading axes."""
    d = normal.shape[-1]
    ridge = RIDGE * xp.maximum(xp.trace(normal, axis1=-2, axis2=-1) / d, 1e-300)[..., None, None]
    system = normal + 1.0 / d
    ridged = system + ridge * xp.eye(d)
    solution = xp.linalg.solve(ridged, right)
    return solution + xp.linalg.solve(ridged, right - xp.matmul(system, solution))  # the ridge's bias: λ to λ²


def _centred_weighted(first_masks: Any, weights: Any, xp: Any) -> tuple[Any, Any]:
    """Return centred masks z − |S| / d and the same times the pair's weight, (B, P, d) floats."""
    z = first_masks.astype(xp.float64)
    centred = z - z.sum(axis=2, keepdims=True) / z.shape[2]
    return centred, centred * xp.asarray(weights, dtype=xp.float64)[None, :, None]


def _group_members(groups: np.ndarray, n_groups: int, xp: Any) -> list:
    """Return the pair indices of each group 0 … n_groups − 1, on ``xp``."""
    groups = np.asarray(groups)
    return [xp.asarray(np.flatnonzero(groups == g)) for g in range(n_groups)]


def paired_regression_numba(
    first_masks: np.ndarray,
    weights: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    pair_targets: np.ndarray,
    leave_outs: bool,
) -> tuple[np.ndarray, Any]:
    """Full and leave-one-group-out solutions as :func:`paired_regression_array`, by one numba kernel on threads."""
    masks, weights, groups = _kernel_inputs(first_masks, weights, groups, n_groups)
    n_games, n_pairs, d = masks.shape
    if pair_targets.shape[:2] != (n_games, n_pairs):
        raise ValueError(f"pair_targets must have shape ({n_games}, {n_pairs}, k), got {pair_targets.shape}.")
    targets = np.ascontiguousarray(pair_targets, dtype=np.float64)
    n_outputs = targets.shape[2]
    full = np.empty((n_games, d, n_outputs), dtype=np.float64)
    leave_out = np.empty((n_games, n_groups - 1 if leave_outs else 0, d, n_outputs), dtype=np.float64)
    failed = np.zeros(n_games, dtype=np.bool_)

    def games(start: int, stop: int) -> None:
        # scratch of one range, allocated here: each np.empty in a kernel is another specialisation to
        # compile (0.1 s of a first call on an empty numba cache)
        sums = n_groups + 2
        scratch = (
            np.empty((sums, d, d)),
            np.empty((sums, d)),
            np.empty(sums),
            np.empty((sums, d, n_outputs)),
            np.empty((sums, n_outputs)),
            np.empty(d, dtype=np.intp),
            np.empty((d, d)),
            np.empty((d, n_outputs)),
            np.empty(d),
            np.empty(d),
            np.empty((d, n_outputs)),
        )
        _regression_kernel(masks, weights, groups, n_groups, targets, full, leave_out, failed, *scratch, start, stop)

    systems = 1 + leave_out.shape[1]
    work = n_pairs * d * (d + 2 * n_outputs) // 2 + systems * (d**3 // 6 + d * d * (1 + n_outputs))
    run_ranges(games, n_games, _MIN_THREAD_ADDITIONS // max(1, work))
    if failed.any():  # a pivot not positive: rounding beat the ridge; LAPACK's pivoted LU for those games
        again = np.flatnonzero(failed)
        full[again], redone = paired_regression_array(
            masks[again], weights, groups, n_groups, targets[again], leave_outs, np
        )
        if leave_outs:
            leave_out[again] = redone
    return full, leave_out if leave_outs else None


def compile_regression_kernel() -> None:
    """Compile :func:`paired_regression_numba`'s kernel, or load it from numba's cache, by one regression of one player.

    The kernel has one signature (:func:`_kernel_inputs` fixes every dtype), so the tiny call compiles
    what any later call runs.
    """
    if not _regression_kernel.signatures:
        one = np.ones((1, 1, 1))
        paired_regression_numba(one.astype(bool), one[0, 0], np.zeros(1, dtype=np.intp), 1, one, leave_outs=False)


def _kernel_inputs(
    first_masks: np.ndarray, weights: np.ndarray, groups: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return contiguous masks, weights and groups; groups checked against ``n_groups`` (the kernel indexes by them)."""
    masks = np.ascontiguousarray(first_masks, dtype=np.bool_)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    groups = np.ascontiguousarray(groups, dtype=np.intp)
    if weights.shape != (masks.shape[1],) or groups.shape != (masks.shape[1],):
        raise ValueError(f"weights and groups must have shape ({masks.shape[1]},), one per pair.")
    if groups.size and (groups.min() < 0 or groups.max() >= n_groups):
        raise ValueError(f"groups must lie in [0, {n_groups}).")
    return masks, weights, groups


@numba.njit(nogil=True, cache=True)
def _regression_kernel(
    masks: np.ndarray,
    weights: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    targets: np.ndarray,
    full: np.ndarray,
    leave_out: np.ndarray,
    failed: np.ndarray,
    outer: np.ndarray,
    spread: np.ndarray,
    square: np.ndarray,
    cross: np.ndarray,
    shift: np.ndarray,
    members: np.ndarray,
    system: np.ndarray,
    rhs: np.ndarray,
    inverse: np.ndarray,
    diagonal: np.ndarray,
    residual: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    n_pairs, d, n_outputs = masks.shape[1], masks.shape[2], targets.shape[2]
    # scratch: the sums of each group, of all groups (index n_groups) and of none (n_groups + 1:
    # zeros, what the full system leaves out): Σ w z zᵀ (lower triangle) in ``outer``, u = Σ w a z in
    # ``spread``, Σ w a², Σ w δ z and Σ w a δ; a pair's members; the system, its right side and 1 / L_jj
    every, none = n_groups, n_groups + 1
    for b in range(start, stop):
        outer[:] = 0.0
        spread[:] = 0.0
        square[:] = 0.0
        cross[:] = 0.0
        shift[:] = 0.0
        for p in range(n_pairs):
            g, w = groups[p], weights[p]
            size = 0
            for i in range(d):  # without a branch: the masks' bits are random
                members[size] = i
                size += masks[b, p, i]
            a = size / d
            # the O(d) sums go to the group and to all groups at once; Σ w z zᵀ to the group only, and
            # is totalled after by contiguous passes (a second scatter of |S|² / 2 cost more)
            for ii in range(size):
                i = members[ii]
                for jj in range(ii + 1):
                    outer[g, i, members[jj]] += w
                spread[g, i] += w * a
                spread[every, i] += w * a
                for k in range(n_outputs):
                    cross[g, i, k] += w * targets[b, p, k]
                    cross[every, i, k] += w * targets[b, p, k]
            square[g] += w * a * a
            square[every] += w * a * a
            for k in range(n_outputs):
                shift[g, k] += w * a * targets[b, p, k]
                shift[every, k] += w * a * targets[b, p, k]
        for g in range(n_groups):  # Σ w z zᵀ of all groups: contiguous rows, in SIMD lanes
            for i in range(d):  # loops, not a reshaped view and a call: 0.1 s less to compile
                for j in range(d):
                    outer[every, i, j] += outer[g, i, j]
        solved = True
        # one loop for the full system (g = 0) and those without group g: each call site of the
        # inlined _form_system is compiled again (0.2 s of a first call on an empty numba cache)
        for g in range(leave_out.shape[1] + 1):
            if not solved:  # the array path solves this game again
                break
            _form_system(outer, spread, square, cross, shift, every, g if g else none, system, rhs)
            solved = _solve_in_place(system, rhs, inverse, diagonal, residual)
            into = leave_out[b, g - 1] if g else full[b]
            for i in range(d):  # loops: numba's array assignment (into[:] = rhs) compiles for seconds
                for k in range(n_outputs):
                    into[i, k] = rhs[i, k]
        failed[b] = not solved


@numba.njit(nogil=True, cache=True, inline="always")
def _form_system(
    outer: np.ndarray,
    spread: np.ndarray,
    square: np.ndarray,
    cross: np.ndarray,
    shift: np.ndarray,
    every: int,
    without: int,
    system: np.ndarray,
    rhs: np.ndarray,
) -> None:  # pragma: no cover - numba
    """Write the lower triangle of Σ 2 w c cᵀ and the right side Σ w c δ of all groups but group ``without``.

    With a = |S| / d: Σ w c cᵀ = Σ w z zᵀ − u 1ᵀ − 1 uᵀ + (Σ w a²) 11ᵀ and Σ w c δ = Σ w δ z − (Σ w a δ) 1.
    """
    d, n_outputs, g = system.shape[0], rhs.shape[1], without
    square_kept = square[every] - square[g]
    for i in range(d):
        spread_i = spread[every, i] - spread[g, i]
        for j in range(i + 1):
            kept = outer[every, i, j] - outer[g, i, j]
            system[i, j] = 2.0 * (kept - spread_i - (spread[every, j] - spread[g, j]) + square_kept)
        for k in range(n_outputs):
            rhs[i, k] = cross[every, i, k] - cross[g, i, k] - (shift[every, k] - shift[g, k])


@numba.njit(nogil=True, cache=True, fastmath=_REDUCTIONS_IN_ANY_ORDER)
def _solve_in_place(
    system: np.ndarray, rhs: np.ndarray, inverse: np.ndarray, diagonal: np.ndarray, residual: np.ndarray
) -> bool:  # pragma: no cover - numba
    """Solve (system + 11ᵀ / d) x = rhs into ``rhs``, refined once; False if a pivot is not positive.

    By Cholesky of the ridged system: the ridge λ I biases the solution by about λ relative; one step of
    iterative refinement with the same factor (x += (A + λ I)⁻¹ (rhs − A x)) leaves λ². The upper triangle
    of ``system`` and ``diagonal`` (d,) keep A while its lower triangle becomes the factor L; ``inverse``
    (d,) is scratch for 1 / L_jj (products instead of divisions on the factor's chain of dependencies),
    ``residual`` (d, n_outputs) for the right side of the refinement.
    """
    d, n_outputs = system.shape[0], rhs.shape[1]
    trace = 0.0
    for i in range(d):
        trace += system[i, i]
    mean_diagonal = trace / d
    ridge = RIDGE * (mean_diagonal if mean_diagonal > 1e-300 else 1e-300)  # not max(): one overload less to compile
    for i in range(d):
        for j in range(i + 1):
            system[i, j] += 1.0 / d
        for j in range(i):
            system[j, i] = system[i, j]
        diagonal[i] = system[i, i]
        system[i, i] += ridge
    for i in range(d):  # L Lᵀ, row by row (the lower triangle only)
        for j in range(i):
            value = system[i, j]
            for m in range(j):
                value -= system[i, m] * system[j, m]
            system[i, j] = value * inverse[j]
        value = system[i, i]
        for m in range(i):
            value -= system[i, m] * system[i, m]
        if not value > 0.0:
            return False
        system[i, i] = np.sqrt(value)
        inverse[i] = 1.0 / system[i, i]
    for k in range(n_outputs):
        for i in range(d):
            residual[i, k] = rhs[i, k]
    _substitute(system, inverse, rhs)
    for k in range(n_outputs):  # rhs − A x, A from the upper triangle and the diagonal
        for i in range(d):
            value = residual[i, k] - diagonal[i] * rhs[i, k]
            for j in range(i):
                value -= system[j, i] * rhs[j, k]
            for j in range(i + 1, d):
                value -= system[i, j] * rhs[j, k]
            residual[i, k] = value
    _substitute(system, inverse, residual)
    for k in range(n_outputs):
        for i in range(d):
            rhs[i, k] += residual[i, k]
    return True


@numba.njit(nogil=True, cache=True, inline="always")
def _substitute(factor: np.ndarray, inverse: np.ndarray, rhs: np.ndarray) -> None:  # pragma: no cover - numba
    """Solve L Lᵀ x = rhs into ``rhs``, L the lower triangle of ``factor`` with 1 / L_jj in ``inverse``."""
    d, n_outputs = factor.shape[0], rhs.shape[1]
    for k in range(n_outputs):
        for i in range(d):  # L y = rhs
            value = rhs[i, k]
            for m in range(i):
                value -= factor[i, m] * rhs[m, k]
            rhs[i, k] = value * inverse[i]
        for i in range(d - 1, -1, -1):  # Lᵀ x = y
            value = rhs[i, k]
            for m in range(i + 1, d):
                value -= factor[m, i] * rhs[m, k]
            rhs[i, k] = value * inverse[i]
