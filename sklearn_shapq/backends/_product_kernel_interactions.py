"""Exact pairwise interactions of two-factor product games: array code (numpy on the CPU, cupy on a GPU).

The game of one (row, anchor, reference) term is v(S) = Π_{u∈S} a_u Π_{u∉S} b_u (a_u = k_u(x_u, X_iu),
b_u = k_u(r_lu, X_iu), or 1 for PKeX). With D_u = a_u − b_u and F_u(t) = b_u + t D_u (Beta integrals
of the coalition weights):

- SII_ij = D_i D_j ∫₀¹ Π_{u≠i,j} F_u(t) dt (weights s!(p−s−2)!/(p−1)! = ∫ tˢ(1−t)^{p−2−s} dt);
- STII_ij = 2 D_i D_j ∫₀¹ (1 − t) Π_{u≠i,j} F_u(t) dt (weights 2/(p C(p−1, s)) = 2 ∫ tˢ(1−t)^{p−1−s} dt);
- φ_i = D_i ∫₀¹ Π_{u≠i} F_u(t) dt, and v({i}) − v(∅) = D_i Π_{u≠i} b_u.

The integrands have degree p − 1 at most, so Gauss–Legendre on ⌈p/2⌉ nodes is exact. With
P_m = Π_u F_u(t_m) and Y_um = D_u / F_u(t_m), SII = Y diag(ω P) Yᵀ off the diagonal: the pairs of
all terms of a row are one matrix product with inner dimension terms × nodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.backends._product_kernel import (
    check_pair_arguments,
    factor_tensor,
    player_factors,
    unit_gauss_legendre,
)
from sklearn_shapq.backends._threads import run_ranges

PAIR_INDICES = ("sii", "stii")
"""The pair indices of :func:`pair_interactions_array`: Shapley interaction (SII) and Shapley–Taylor (STII)."""
INTERACTION_BLOCK_BYTES = 2 * 2**20
"""Temporaries of one block of (row, anchor, reference) terms in :func:`pair_interactions_array`."""
_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)
_MIN_THREAD_WORK = 1 << 22
"""Multiply-adds (queries × anchors × references × nodes × p²) below which a thread is not worth starting."""


def leave_one_out_products(factors: Any, xp: Any) -> Any:
    """Π_{u≠j} factors[..., u] for every j, by prefix and suffix products (no division: zeros are fine).

    Examples
    --------
    >>> leave_one_out_products(np.array([2.0, 0.0, 5.0]), np).tolist()
    [0.0, 10.0, 0.0]
    """
    ones = xp.ones(factors.shape[:-1] + (1,), dtype=xp.float64)
    prefix = xp.concatenate([ones, xp.cumprod(factors[..., :-1], axis=-1)], axis=-1)
    suffix = xp.flip(xp.cumprod(xp.flip(factors[..., 1:], axis=-1), axis=-1), axis=-1)
    return prefix * xp.concatenate([suffix, ones], axis=-1)


def pair_interactions_array(
    xp: Any,
    queries: Any,
    anchors: Any,
    references: Any,
    kinds: np.ndarray,
    gammas: np.ndarray,
    weights: Any,
    index: str = "sii",
    max_bytes: int = INTERACTION_BLOCK_BYTES,
    players: Any = None,
) -> tuple[Any, Any]:
    """Exact order-2 interactions of Σ_i w_qi mean_l of the two-factor games of (query, anchor, reference).

    Parameters
    ----------
    xp : module
        numpy or cupy.
    queries : array of shape (Q, d)
        Explained rows.
    anchors : array of shape (n, d)
    references : array of shape (L, d) or None
        None: absent factors are 1 (PKeX).
    kinds, gammas : ndarray of shape (d,)
        Factor kinds (:data:`FACTOR_KINDS` codes) and scales.
    weights : array of shape (1 or Q, n, k)
    index : {"sii", "stii"}, default="sii"
        The pair index.
    max_bytes : int
        Temporaries of one block of terms (their blocking does not depend on Q, so a row's value
        does not depend on its batch).
    players : int array of shape (d,), optional
        Each column's player (feature groups).

    Returns
    -------
    pairs : array of shape (Q, p, p, k)
        SII_ij or STII_ij off the diagonal, 0 on it.
    singles : array of shape (Q, p, k)
        "sii": the Shapley values φ_i; "stii": the Möbius singletons v({i}) − v(∅).

    Notes
    -----
    F_u(t) is a convex combination of two kernel factors in [0, 1], so it has no cancellation; it
    is clamped to the smallest normal number, so a factor that underflows to 0 cannot make 0/0.
    The clamp changes a term by at most |w| · 1e-290 or so (the product P then underflows as well).

    Examples
    --------
    >>> pairs, phi = pair_interactions_array(
    ...     np, np.zeros((1, 2)), np.ones((1, 2)), None, np.zeros(2, np.int8), np.ones(2), np.ones((1, 1, 1))
    ... )
    >>> z = np.exp(-1.0)  # both factors; v(S) = z^|S|
    >>> bool(np.isclose(pairs[0, 0, 1, 0], (z - 1) ** 2)), bool(np.isclose(phi[0, 0, 0], (z - 1) * (1 + z) / 2))
    (True, True)
    """
    if index not in PAIR_INDICES:
        raise ValueError(f"index must be one of {PAIR_INDICES}, got {index!r}.")
    order, starts = check_pair_arguments(queries, anchors, references, kinds, gammas, weights, "quadrature", players)
    n_queries = queries.shape[0]
    n_players = starts.size - 1
    n_anchors, k = anchors.shape[0], weights.shape[2]
    tau_host, omega_host = unit_gauss_legendre(n_players)
    n_nodes = tau_host.size
    node_weights = xp.asarray(omega_host if index == "sii" else 2.0 * omega_host * (1.0 - tau_host))
    tau = xp.asarray(tau_host)[:, None]  # (M, 1)
    n_refs = 1 if references is None else references.shape[0]

    # blocks: references × anchors of fixed sizes, then as many queries as fit
    term_bytes = 8 * max(queries.shape[1], n_nodes * (2 * n_players + 2))
    refs_per_block = int(max(1, min(n_refs, max_bytes // term_bytes)))
    anchors_per_block = int(max(1, min(n_anchors, max_bytes // (term_bytes * refs_per_block))))
    queries_per_block = int(max(1, min(n_queries, max_bytes // (term_bytes * refs_per_block * anchors_per_block))))
    # two scratch buffers reused by every block (fresh large arrays would cost page faults each time)
    block_size = queries_per_block * anchors_per_block * refs_per_block * n_nodes * n_players
    line_buffer, scaled_buffer = xp.empty(block_size), xp.empty(block_size)

    def factors(left: Any, right: Any) -> Any:
        return player_factors(factor_tensor(left, right, kinds, gammas, xp), order, starts, xp)

    pairs = xp.zeros((n_queries, n_players, n_players, k))
    singles = xp.zeros((n_queries, n_players, k))
    for i0 in range(0, n_anchors, anchors_per_block):
        i1 = min(i0 + anchors_per_block, n_anchors)
        for l0 in range(0, n_refs, refs_per_block):
            l1 = min(l0 + refs_per_block, n_refs)
            if references is None:
                absent = xp.ones((i1 - i0, 1, n_players))
            else:
                absent = xp.moveaxis(factors(references[l0:l1], anchors[i0:i1]), 0, 1)  # (n_b, L_b, p)
            if index == "stii":
                absent_products = leave_one_out_products(absent, xp)  # Π_{u≠j} b_u
            for q0 in range(0, n_queries, queries_per_block):
                q1 = min(q0 + queries_per_block, n_queries)
                w = weights[0:1] if weights.shape[0] == 1 else weights[q0:q1]  # (1 or Q_b, n, k)
                w = w[:, i0:i1, None, None, :]  # (., n_b, 1, 1, k)
                diff = factors(queries[q0:q1], anchors[i0:i1])[:, :, None, :] - absent[None]  # (Q_b, n_b, L_b, p)
                shape = diff.shape[:3] + (n_nodes, n_players)
                size = int(np.prod(shape))
                line = line_buffer[:size].reshape(shape)  # F = b + t D: (Q_b, n_b, L_b, M, p)
                xp.multiply(tau, diff[:, :, :, None, :], out=line)
                line += absent[None, :, :, None, :]
                if references is not None:  # F >= 1 − t > 0 without references
                    xp.maximum(line, _SMALLEST_NORMAL, out=line)
                column = xp.prod(line, axis=-1)[..., None] * (node_weights[:, None] / n_refs) * w  # (…, M, k)
                ratio = xp.divide(diff[:, :, :, None, :], line, out=line)  # Y = D / F
                ratio = ratio.reshape(q1 - q0, -1, n_players)  # (Q_b, T, p)
                column = column.reshape(q1 - q0, ratio.shape[1], k)  # (Q_b, T, k)
                left = ratio.transpose(0, 2, 1)
                scaled = scaled_buffer[:size].reshape(ratio.shape)
                for o in range(k):  # a loop over the outputs only
                    xp.multiply(ratio, column[:, :, o, None], out=scaled)
                    pairs[q0:q1, :, :, o] += xp.matmul(left, scaled)
                if index == "sii":
                    singles[q0:q1] += xp.matmul(left, column)
                else:
                    moebius = (diff * absent_products[None]).sum(axis=2)  # (Q_b, n_b, p)
                    singles[q0:q1] += xp.matmul(moebius.transpose(0, 2, 1), w[:, :, 0, 0, :]) / n_refs
    diagonal = xp.arange(n_players)
    pairs[:, diagonal, diagonal] = 0.0
    return pairs, singles


def pair_interactions_threaded(
    queries: np.ndarray,
    anchors: np.ndarray,
    references: np.ndarray | None,
    kinds: np.ndarray,
    gammas: np.ndarray,
    weights: np.ndarray,
    index: str = "sii",
    max_bytes: int = INTERACTION_BLOCK_BYTES,
    players: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pair_interactions_array` in numpy on ranges of queries, from the package's threads.

    numpy releases the GIL in its loops and products, so ranges of rows run in parallel; the caller
    limits BLAS to one thread (BLAS threads on top of these only wait for each other). A row's
    values do not depend on its range.
    """
    if index not in PAIR_INDICES:
        raise ValueError(f"index must be one of {PAIR_INDICES}, got {index!r}.")
    _, starts = check_pair_arguments(queries, anchors, references, kinds, gammas, weights, "quadrature", players)
    n_queries, n_players, k = queries.shape[0], starts.size - 1, weights.shape[2]
    pairs = np.empty((n_queries, n_players, n_players, k))
    singles = np.empty((n_queries, n_players, k))

    def call(start: int, stop: int) -> None:
        w = weights if weights.shape[0] == 1 else weights[start:stop]
        pairs[start:stop], singles[start:stop] = pair_interactions_array(
            np, queries[start:stop], anchors, references, kinds, gammas, w, index, max_bytes, players
        )

    n_refs = 1 if references is None else references.shape[0]
    row_work = anchors.shape[0] * n_refs * unit_gauss_legendre(n_players)[0].size * n_players * n_players
    run_ranges(call, n_queries, max(1, _MIN_THREAD_WORK // max(1, row_work)), ranges_per_thread=2)
    return pairs, singles
