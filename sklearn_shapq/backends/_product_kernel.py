"""Exact Shapley values of two-factor product games: numba kernels, the array twin, the CUDA source.

The game v(S) = Π_{j∈S} a_j Π_{j∉S} b_j (a_j = k_j(q_j, X_ij), b_j = k_j(r_lj, X_ij) or 1) has
φ_j = (a_j − b_j) ψ_j, ψ_j = Σ_{S⊆N∖j} μ(|S|) Π_{k∈S} a_k Π_{k∉S, k≠j} b_k, computed for all j in
O(d²) by "prefix_suffix" (elementary symmetric polynomials) or "quadrature" (Gauss–Legendre on
∫₀¹ Π_{k≠j} (b_k + t (a_k − b_k)) dt). A player's factor is the product of its columns' factors.
"""

from __future__ import annotations

from functools import lru_cache
from math import exp
from typing import Any

import numba
import numpy as np

from sklearn_shapq.backends._threads import run_ranges

FACTOR_KINDS = {"rbf": 0, "laplacian": 1, "cauchy": 2}
"""Per-feature kernel factors: rbf exp(−γ(a−b)²), laplacian exp(−γ|a−b|), cauchy 1/(1+γ(a−b)²)."""

PRODUCT_KERNEL_BACKEND_ALGORITHMS = ("prefix_suffix", "quadrature")
"""The exact O(d²) methods of the backends' ``product_kernel_shapley``."""
PREFIX_SUFFIX_MAX_FEATURES = 1000
"""Beyond this d the raw elementary symmetric polynomials of "prefix_suffix" may overflow."""
_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)
ANCHORS_PER_CHUNK = 256
"""Anchors per work item of the numba kernel: fixed chunks, so a row's value does not depend on its batch."""
_MIN_THREAD_WORK = 1 << 16
"""Inner-loop steps (anchors × games × d²) below which a thread is not worth starting."""


@lru_cache(maxsize=64)
def shapley_weight_vector(d: int) -> np.ndarray:
    """μ(s) = s! (d − s − 1)! / d! for s = 0 … d − 1, by the recurrence (no factorials)."""
    mu = np.empty(d)
    mu[0] = 1.0 / d
    for s in range(d - 1):
        mu[s + 1] = mu[s] * (s + 1) / (d - 1 - s)
    mu.setflags(write=False)
    return mu


@lru_cache(maxsize=64)
def unit_gauss_legendre(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes τ and weights ω on [0, 1] integrating polynomials of degree d − 1 exactly."""
    nodes, weights = np.polynomial.legendre.leggauss(max(1, (d + 1) // 2))
    tau, omega = (nodes + 1.0) / 2.0, weights / 2.0
    tau.setflags(write=False)
    omega.setflags(write=False)
    return tau, omega


def factor_tensor(left: Any, right: Any, kinds: Any, gammas: Any, xp: Any = np) -> Any:
    """Per-feature kernel factors k_j(left_aj, right_bj).

    ``left`` (A, d) and ``right`` (B, d) give (A, B, d); ``kinds`` are codes of :data:`FACTOR_KINDS`.
    """
    codes = np.asarray(kinds.get() if hasattr(kinds, "get") else kinds)
    gammas = xp.asarray(gammas, dtype=xp.float64)
    diff = left[:, None, :] - right[None, :, :]
    formulas = {
        0: lambda: xp.exp(-gammas * diff * diff),
        1: lambda: xp.exp(-gammas * xp.abs(diff)),
        2: lambda: 1.0 / (1.0 + gammas * diff * diff),
    }
    present = np.unique(codes).tolist()
    if len(present) == 1:  # the usual case: one kind for every feature
        return formulas[present[0]]()
    out = xp.empty(diff.shape, dtype=xp.float64)
    for code in present:
        columns = xp.asarray(np.flatnonzero(codes == code))
        out[..., columns] = formulas[code]()[..., columns]
    return out


def player_columns(players: Any, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the columns ordered by player and where each player's columns start.

    ``players`` (d,) gives each column's player (None: column j is player j); player p owns columns
    ``order[starts[p]:starts[p + 1]]``, ``order`` of shape (d,), ``starts`` (p + 1,).

    Examples
    --------
    >>> order, starts = player_columns(np.array([0, 1, 0, 2]), 4)
    >>> order.tolist(), starts.tolist()
    ([0, 2, 1, 3], [0, 2, 3, 4])
    """
    if players is None:
        return np.arange(d, dtype=np.int64), np.arange(d + 1, dtype=np.int64)
    players = np.asarray(players)
    order = np.argsort(players, kind="stable")
    starts = np.searchsorted(players[order], np.arange(int(players.max()) + 2))
    return order.astype(np.int64), starts.astype(np.int64)


def player_factors(factors: Any, order: np.ndarray, starts: np.ndarray, xp: Any = np) -> Any:
    """Multiply the column factors (..., d) of each player's columns into its factor: (..., p).

    ``order`` and ``starts`` come from :func:`player_columns`; without groups ``factors`` is returned.
    """
    if starts.size == order.size + 1 and np.array_equal(order, np.arange(order.size)):
        return factors
    out = xp.take(factors, xp.asarray(order[starts[:-1]]), axis=-1)  # the first column of each player
    for p in np.flatnonzero(np.diff(starts) > 1).tolist():
        out[..., p] = xp.prod(factors[..., xp.asarray(order[starts[p] : starts[p + 1]])], axis=-1)
    return out


# ----------------------------------------------------------------------------------------------
# numba (CPU)
# ----------------------------------------------------------------------------------------------


@numba.njit(inline="always", cache=True)
def _factor(kind: int, gamma: float, diff: float) -> float:
    if kind == 0:
        return exp(-gamma * diff * diff)
    if kind == 1:
        return exp(-gamma * abs(diff))
    return 1.0 / (1.0 + gamma * diff * diff)


# Compile time: each kernel below is compiled on its first call for the argument types of that
# call (cache=True keeps it on disk afterwards). Every call passes C-contiguous float64 arrays
# (int8 kinds), so there is one signature per kernel, and ``references`` is None or an array:
# the two are separate specialisations, each compiling only its own ψ variant. No slice
# assignments between arrays (their shape-mismatch error path alone costs two seconds to
# compile) and no parallel=True (parfor compilation cost several seconds): the kernels are
# serial and nogil, and ``pair_shapley_numba`` runs them on threads.

# Only reassociation (and fused multiply-adds) are allowed, so that the inner sums vectorise;
# results differ from strict left-to-right summation by a few ulps.
_FAST = {"reassoc", "contract"}


@numba.njit(fastmath=_FAST, cache=True)
def _psi_quadrature(a, b, tau, omega, table, running, psi):  # pragma: no cover - numba
    # vectorised over the nodes g: table[j, g] = Π_{k<j} F_gk, then a backward sweep; b None is 1
    d = a.shape[0]
    n_nodes = tau.shape[0]
    for g in range(n_nodes):
        running[g] = 1.0
    for j in range(d):
        bj = 1.0
        if b is not None:
            bj = b[j]
        step = a[j] - bj
        row = table[j]
        for g in range(n_nodes):
            row[g] = running[g]
            running[g] *= bj + tau[g] * step
    for g in range(n_nodes):
        running[g] = omega[g]
    for j in range(d - 1, -1, -1):
        bj = 1.0
        if b is not None:
            bj = b[j]
        step = a[j] - bj
        row = table[j]
        total = 0.0
        for g in range(n_nodes):
            total += row[g] * running[g]
            running[g] *= bj + tau[g] * step
        psi[j] = total


@numba.njit(fastmath=_FAST, cache=True)
def _psi_prefix_suffix(a, b, mu, suffix, prefix, psi):  # pragma: no cover - numba
    d = a.shape[0]
    # suffix[j, t] = Σ_u μ(t + u) e_u(features > j), needed for t <= j; b None is 1
    last = suffix[d - 1]
    for t in range(d):
        last[t] = mu[t]
    for j in range(d - 1, 0, -1):
        bj = 1.0
        if b is not None:
            bj = b[j]
        aj = a[j]
        source = suffix[j]
        target = suffix[j - 1]
        for t in range(j):
            target[t] = bj * source[t] + aj * source[t + 1]
    # prefix[t] = e_t(features < j)
    prefix[0] = 1.0
    for j in range(d):
        row = suffix[j]
        total = 0.0
        for t in range(j + 1):
            total += prefix[t] * row[t]
        psi[j] = total
        bj = 1.0
        if b is not None:
            bj = b[j]
        aj = a[j]
        prefix[j + 1] = aj * prefix[j]
        for t in range(j, 0, -1):
            prefix[t] = bj * prefix[t] + aj * prefix[t - 1]
        prefix[0] = bj * prefix[0]


@numba.njit(inline="always", cache=True)
def _pair_factors(kinds, gammas, order, starts, x, anchor, out):  # pragma: no cover - numba
    # out[p] = Π of the factors of player p's columns (see player_columns)
    for p in range(out.shape[0]):
        value = 1.0
        for m in range(starts[p], starts[p + 1]):
            j = order[m]
            value *= _factor(kinds[j], gammas[j], x[j] - anchor[j])
        out[p] = value


@numba.njit(inline="always", cache=True)
def _has_weight(weights, w_row, i):  # pragma: no cover - numba
    for o in range(weights.shape[2]):
        if weights[w_row, i, o] != 0.0:
            return True
    return False


@numba.njit(inline="always", cache=True)
def _add_weighted(weights, w_row, i, contribution, out):  # pragma: no cover - numba
    # out (d, k) += w[w_row, i] ⊗ contribution
    for j in range(out.shape[0]):
        for o in range(out.shape[1]):
            out[j, o] += weights[w_row, i, o] * contribution[j]


@numba.njit(nogil=True, cache=True)
def _pair_items_quadrature(
    queries,
    anchors,
    references,
    kinds,
    gammas,
    order,
    starts,
    weights,
    tau,
    omega,
    n_chunks,
    start,
    stop,
    vectors,
    running,
    table,
    out,
):  # pragma: no cover - numba
    # work item = (query q, chunk c of the anchors); out[q, c] (p, k) is its own; references None: b = 1.
    # p players (order, starts: player_columns). Scratch: vectors (4, p), running (n_nodes,), table (p, n_nodes)
    n_players = starts.shape[0] - 1
    n_anchors = anchors.shape[0]
    chunk = (n_anchors + n_chunks - 1) // n_chunks
    a = vectors[0]
    b = vectors[1]
    psi = vectors[2]
    contribution = vectors[3]
    for item in range(start, stop):
        q = item // n_chunks
        c = item - q * n_chunks
        w_row = 0 if weights.shape[0] == 1 else q
        for i in range(c * chunk, min(n_anchors, (c + 1) * chunk)):
            if not _has_weight(weights, w_row, i):
                continue
            _pair_factors(kinds, gammas, order, starts, queries[q], anchors[i], a)
            for j in range(n_players):
                contribution[j] = 0.0
            if references is None:
                _psi_quadrature(a, None, tau, omega, table, running, psi)
                for j in range(n_players):
                    contribution[j] += (a[j] - 1.0) * psi[j]
            else:
                for r in range(references.shape[0]):
                    _pair_factors(kinds, gammas, order, starts, references[r], anchors[i], b)
                    _psi_quadrature(a, b, tau, omega, table, running, psi)
                    for j in range(n_players):
                        contribution[j] += (a[j] - b[j]) * psi[j]
            _add_weighted(weights, w_row, i, contribution, out[q, c])


@numba.njit(nogil=True, cache=True)
def _pair_items_prefix_suffix(
    queries,
    anchors,
    references,
    kinds,
    gammas,
    order,
    starts,
    weights,
    mu,
    n_chunks,
    start,
    stop,
    vectors,
    prefix,
    table,
    out,
):  # pragma: no cover - numba
    # the twin of _pair_items_quadrature with the O(p²) prefix × μ-suffix sums; scratch: vectors
    # (4, p), prefix (p + 1,), table (p, p + 1)
    n_players = starts.shape[0] - 1
    n_anchors = anchors.shape[0]
    chunk = (n_anchors + n_chunks - 1) // n_chunks
    a = vectors[0]
    b = vectors[1]
    psi = vectors[2]
    contribution = vectors[3]
    for item in range(start, stop):
        q = item // n_chunks
        c = item - q * n_chunks
        w_row = 0 if weights.shape[0] == 1 else q
        for i in range(c * chunk, min(n_anchors, (c + 1) * chunk)):
            if not _has_weight(weights, w_row, i):
                continue
            _pair_factors(kinds, gammas, order, starts, queries[q], anchors[i], a)
            for j in range(n_players):
                contribution[j] = 0.0
            if references is None:
                _psi_prefix_suffix(a, None, mu, table, prefix, psi)
                for j in range(n_players):
                    contribution[j] += (a[j] - 1.0) * psi[j]
            else:
                for r in range(references.shape[0]):
                    _pair_factors(kinds, gammas, order, starts, references[r], anchors[i], b)
                    _psi_prefix_suffix(a, b, mu, table, prefix, psi)
                    for j in range(n_players):
                        contribution[j] += (a[j] - b[j]) * psi[j]
            _add_weighted(weights, w_row, i, contribution, out[q, c])


def check_pair_arguments(
    queries: Any, anchors: Any, references: Any, kinds: Any, gammas: Any, weights: Any, algorithm: str, players: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a ``product_kernel_shapley`` call (the kernels trust it) and return :func:`player_columns`."""
    n_queries, d = queries.shape
    if algorithm not in PRODUCT_KERNEL_BACKEND_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {PRODUCT_KERNEL_BACKEND_ALGORITHMS}, got {algorithm!r}.")
    if anchors.ndim != 2 or anchors.shape[1] != d or (references is not None and references.shape[1:] != (d,)):
        raise ValueError("queries, anchors and references must have the same number of features.")
    if np.shape(kinds) != (d,) or np.shape(gammas) != (d,):
        raise ValueError(f"kinds and gammas must have shape ({d},).")
    if weights.ndim != 3 or weights.shape[0] not in (1, n_queries) or weights.shape[1] != anchors.shape[0]:
        raise ValueError(f"weights must have shape (1 or {n_queries}, {anchors.shape[0]}, k), got {weights.shape}.")
    if players is not None and (
        np.shape(players) != (d,)
        or np.asarray(players).dtype.kind not in "iu"
        or np.min(players) < 0
        or np.any(np.bincount(players) == 0)
    ):
        raise ValueError(f"players must give each of the {d} columns a player 0 … p − 1, each with a column.")
    order, starts = player_columns(players, d)
    n_players = starts.size - 1
    if algorithm == "prefix_suffix" and n_players > PREFIX_SUFFIX_MAX_FEATURES:
        raise ValueError(
            f"algorithm='prefix_suffix' overflows beyond d = {PREFIX_SUFFIX_MAX_FEATURES} players (got {n_players}); "
            "use 'quadrature'."
        )
    return order, starts


def pair_shapley_numba(
    queries: np.ndarray,
    anchors: np.ndarray,
    references: np.ndarray | None,
    kinds: np.ndarray,
    gammas: np.ndarray,
    weights: np.ndarray,
    algorithm: str,
    players: np.ndarray | None = None,
) -> np.ndarray:
    """Σ_i w_qi mean_l φ(q, i, l) by the numba kernel, (Q, n_players, n_outputs)."""
    order, starts = check_pair_arguments(queries, anchors, references, kinds, gammas, weights, algorithm, players)
    n_queries, n_players = queries.shape[0], starts.size - 1
    n_anchors = anchors.shape[0]
    n_chunks = max(1, -(-n_anchors // ANCHORS_PER_CHUNK))
    # no references (or none at all): b = 1, the kernels' specialisation for references=None
    refs = (
        None if references is None or references.shape[0] == 0 else np.ascontiguousarray(references, dtype=np.float64)
    )
    n_refs = 1 if refs is None else refs.shape[0]
    arrays = (
        np.ascontiguousarray(queries, dtype=np.float64),
        np.ascontiguousarray(anchors, dtype=np.float64),
        refs,
        np.ascontiguousarray(kinds, dtype=np.int8),
        np.ascontiguousarray(gammas, dtype=np.float64),
        order,
        starts,
        np.ascontiguousarray(weights, dtype=np.float64),
    )
    if algorithm == "quadrature":
        kernel, tables = _pair_items_quadrature, unit_gauss_legendre(n_players)
        width = tables[0].shape[0]
    else:
        kernel, tables = _pair_items_prefix_suffix, (shapley_weight_vector(n_players),)  # type: ignore[assignment]
        width = n_players + 1
    out = np.zeros((n_queries, n_chunks, n_players, weights.shape[2]))

    def items(start: int, stop: int) -> None:
        # scratch allocated here, one set per thread (numba would compile the allocations)
        kernel(
            *arrays,
            *tables,
            n_chunks,
            start,
            stop,
            np.empty((4, n_players)),
            np.empty(width),
            np.empty((n_players, width)),
            out,
        )

    # work of one item: its anchors times the games per anchor times O(d + p²)
    pair_work = n_refs * (queries.shape[1] + n_players * n_players)
    min_items = max(1, _MIN_THREAD_WORK // max(1, ((n_anchors + n_chunks - 1) // n_chunks) * pair_work))
    run_ranges(items, n_queries * n_chunks, min_items, ranges_per_thread=4)  # uneven: HSIC's triangle
    total = out[:, 0].copy()
    for c in range(1, n_chunks):  # chunk by chunk, in order: the same sums for any number of queries
        total += out[:, c]
    return total / n_refs


# ----------------------------------------------------------------------------------------------
# array twin (numpy in CI, cupy on a GPU)
# ----------------------------------------------------------------------------------------------


def pair_contributions_quadrature(a: Any, b: Any, xp: Any) -> Any:
    """Return (a − b) ψ for factor arrays a, b broadcasting to (..., d), by Gauss–Legendre quadrature.

    ψ_j = Σ_g ω_g P_g / F_gj, F_g = b + τ_g (a − b), P_g = Π_k F_gk (the CUDA kernel's form); F is
    clamped to the smallest normal number, so underflow cannot make 0/0.
    """
    d = a.shape[-1]
    tau, omega = unit_gauss_legendre(d)
    diff = a - b
    moving = diff != 0
    total = xp.zeros(xp.broadcast_shapes(a.shape, b.shape), dtype=xp.float64)
    for t, w in zip(tau.tolist(), omega.tolist(), strict=True):  # a loop over nodes only
        factors = xp.maximum(b + t * diff, _SMALLEST_NORMAL)
        total += w * xp.prod(factors, axis=-1, keepdims=True) / factors
    return xp.where(moving, diff * total, 0.0)


def pair_contributions_prefix_suffix(a: Any, b: Any, xp: Any) -> Any:
    """Return (a − b) ψ for factor arrays a, b broadcasting to (..., d), by prefix × μ-suffix sums."""
    a, b = xp.broadcast_arrays(a, b)
    shape, d = a.shape, a.shape[-1]
    a = a.reshape(-1, d)
    b = b.reshape(-1, d)
    mu = xp.asarray(shapley_weight_vector(d))
    suffix = xp.zeros((a.shape[0], d, d + 1))
    suffix[:, d - 1, :d] = mu
    for j in range(d - 1, 0, -1):  # loops over features only, vectorised over pairs
        suffix[:, j - 1, :j] = b[:, j, None] * suffix[:, j, :j] + a[:, j, None] * suffix[:, j, 1 : j + 1]
    prefix = xp.zeros((a.shape[0], d + 1))
    prefix[:, 0] = 1.0
    psi = xp.empty_like(a)
    for j in range(d):
        psi[:, j] = (prefix[:, : j + 1] * suffix[:, j, : j + 1]).sum(axis=1)
        shifted = prefix[:, : j + 1].copy()
        prefix[:, : j + 1] *= b[:, j, None]
        prefix[:, 1 : j + 2] += a[:, j, None] * shifted
    return ((a - b) * psi).reshape(shape)


def pair_shapley_array(
    xp: Any,
    queries: Any,
    anchors: Any,
    references: Any,
    kinds: np.ndarray,
    gammas: np.ndarray,
    weights: Any,
    algorithm: str,
    max_bytes: int,
    players: Any = None,
    contributions: Any = None,
    bytes_per_pair: int | None = None,
) -> Any:
    """Σ_i w_qi mean_l φ(q, i, l) in array code, blocked over queries and anchors: (Q, n_players, n_outputs).

    ``contributions(queries, anchors, references) -> (Q_b, n_b, p)`` is a block's mean_l (a − b) ψ
    (default: the array code of ``algorithm``; the CUDA backend passes its kernel).
    """
    order, starts = check_pair_arguments(queries, anchors, references, kinds, gammas, weights, algorithm, players)
    n_queries, d = queries.shape
    n_players = starts.size - 1
    n_anchors = anchors.shape[0]
    if bytes_per_pair is None:
        n_refs = 1 if references is None else references.shape[0]
        bytes_per_pair = 8 * n_refs * max(d, n_players * (6 if algorithm == "quadrature" else 2 * (n_players + 2)))
    anchors_per_block = int(max(1, min(n_anchors, max_bytes // bytes_per_pair)))
    queries_per_block = int(max(1, max_bytes // (bytes_per_pair * anchors_per_block)))
    if contributions is None:
        pair_fn = pair_contributions_quadrature if algorithm == "quadrature" else pair_contributions_prefix_suffix

        def factors(left: Any, right: Any) -> Any:
            return player_factors(factor_tensor(left, right, kinds, gammas, xp), order, starts, xp)

        def contributions(q: Any, x: Any, refs: Any) -> Any:
            a = factors(q, x)[:, :, None, :]  # (Q_b, n_b, 1, p)
            if refs is None:
                return pair_fn(a, xp.ones(1), xp)[:, :, 0]
            b = xp.moveaxis(factors(refs, x), 0, 1)[None]  # (1, n_b, L, p)
            return pair_fn(a, b, xp).mean(axis=2)

    out = xp.zeros((n_queries, n_players, weights.shape[2]))
    for q0 in range(0, n_queries, queries_per_block):
        q1 = min(q0 + queries_per_block, n_queries)
        w_rows = slice(0, 1) if weights.shape[0] == 1 else slice(q0, q1)
        for i0 in range(0, n_anchors, anchors_per_block):
            i1 = min(i0 + anchors_per_block, n_anchors)
            block = contributions(queries[q0:q1], anchors[i0:i1], references)  # (Q_b, n_b, p)
            out[q0:q1] += xp.matmul(block.transpose(0, 2, 1), weights[w_rows, i0:i1])
    return out


# ----------------------------------------------------------------------------------------------
# CUDA (cupy RawKernel): one thread per (query, anchor), Method B in the division form above
# ----------------------------------------------------------------------------------------------

CUDA_PAIR_QUADRATURE_KERNEL = "sklearn_shapq_pair_quadrature"
CUDA_PAIR_QUADRATURE = r"""
// NVRTC has no C++ standard headers (<cfloat> fails to compile there): the smallest normal double, spelled out
#define SMALLEST_NORMAL 2.2250738585072014e-308
// MAX_NODES (an upper bound on the Gauss-Legendre nodes) is defined in front of this source.
// F is clamped to SMALLEST_NORMAL: where a factor underflows to 0 and the other is subnormal, F would
// round to 0 with a - b != 0, and 0/0 would follow.
__device__ __forceinline__ double factor(signed char kind, double gamma, double diff) {
    if (kind == 0) return exp(-gamma * diff * diff);
    if (kind == 1) return exp(-gamma * fabs(diff));
    return 1.0 / (1.0 + gamma * diff * diff);
}

// the factor of player p: the product of the factors of its columns order[starts[p]:starts[p + 1]]
__device__ __forceinline__ double player_factor(
    const signed char* kinds, const double* gammas, const long long* order, const long long* starts,
    long long p, const double* x, const double* anchor)
{
    double value = 1.0;
    for (long long m = starts[p]; m < starts[p + 1]; ++m) {
        const long long j = order[m];
        value *= factor(kinds[j], gammas[j], x[j] - anchor[j]);
    }
    return value;
}

extern "C" __global__ void sklearn_shapq_pair_quadrature(
    const double* queries, const double* anchors, const double* references, const signed char* kinds,
    const double* gammas, const long long* order, const long long* starts, const double* tau,
    const double* omega, const int n_nodes, const long long n_queries, const long long n_anchors,
    const long long n_references, const long long d, const long long n_players, double* out)
{
    const long long pair = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (pair >= n_queries * n_anchors) return;
    const long long q = pair / n_anchors;
    const long long i = pair - q * n_anchors;
    const double* x = queries + q * d;
    const double* anchor = anchors + i * d;
    double* contribution = out + pair * n_players;
    const long long n_games = n_references > 0 ? n_references : 1;
    double product[MAX_NODES];
    for (long long p = 0; p < n_players; ++p) contribution[p] = 0.0;
    for (long long r = 0; r < n_games; ++r) {
        const double* ref = references + r * d;
        for (int g = 0; g < n_nodes; ++g) product[g] = 1.0;
        for (long long p = 0; p < n_players; ++p) {
            const double a = player_factor(kinds, gammas, order, starts, p, x, anchor);
            const double b = n_references > 0 ? player_factor(kinds, gammas, order, starts, p, ref, anchor) : 1.0;
            for (int g = 0; g < n_nodes; ++g) product[g] *= fmax(b + tau[g] * (a - b), SMALLEST_NORMAL);
        }
        for (long long p = 0; p < n_players; ++p) {
            const double a = player_factor(kinds, gammas, order, starts, p, x, anchor);
            const double b = n_references > 0 ? player_factor(kinds, gammas, order, starts, p, ref, anchor) : 1.0;
            const double diff = a - b;
            if (diff == 0.0) continue;
            double psi = 0.0;
            for (int g = 0; g < n_nodes; ++g) psi += omega[g] * product[g] / fmax(b + tau[g] * diff, SMALLEST_NORMAL);
            contribution[p] += diff * psi / (double)n_games;
        }
    }
}
"""
