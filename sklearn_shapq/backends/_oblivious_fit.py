"""Fits of boosted oblivious trees on coalition masks: array code (numpy, cupy) and a numba kernel.

Squared loss, XGBoost's gain, deterministic; leaves move by ``rate · G / (H + λ)``. Notes in ``doc/architecture.md``.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from sklearn_shapq.backends._threads import run_ranges

_MIN_THREAD_ADDITIONS = 1 << 18
"""Additions of gradient and weight sums per thread below which a second thread is not worth starting."""


def fit_oblivious_array(
    masks: Any, targets: Any, weights: Any, n_trees: int, depth: int, learning_rate: float, l2: float, xp: Any
) -> tuple[Any, Any, Any]:
    """Fit by array code on ``xp``: players (T, B, M, D), leaves (T, B, M, 2^D), predictions (B, n, M).

    Arguments as :meth:`~sklearn_shapq.backends.ArrayBackend.fit_oblivious_trees`; ``depth`` at most d.
    """
    rows, n, d = masks.shape
    problems = targets.shape[2]
    by_player = xp.ascontiguousarray(masks.transpose(0, 2, 1))  # (B, d, n): a player's column, contiguous
    inputs = xp.concatenate([masks, xp.ones((rows, n, 1), dtype=bool)], axis=2).astype(xp.float64)
    targets, weights = targets.transpose(0, 2, 1), weights.transpose(0, 2, 1)  # (B, M, n): problem-major
    predictions = xp.zeros(targets.shape, dtype=xp.float64)
    players = xp.zeros((n_trees, rows, problems, depth), dtype=xp.intp)
    leaves = xp.zeros((n_trees, rows, problems, 2**depth), dtype=xp.float64)
    row_index = xp.arange(rows)[:, None]
    for tree in range(n_trees):  # boosting rounds and levels: a loop over the few trees and levels
        columns = xp.stack([(targets - predictions) * weights, weights], axis=-1)  # gradient and weight
        node = xp.zeros(targets.shape, dtype=xp.intp)
        used = xp.zeros((rows, problems, d), dtype=bool)
        sums = _node_sums(inputs, node, columns, 1, xp)  # (B, M, nodes, 2, d + 1): the root
        for level in range(depth):
            inside, outside = sums[..., :d], sums[..., d:] - sums[..., :d]
            gain = (_leaf_gain(inside, l2) + _leaf_gain(outside, l2)).sum(axis=2)  # (B, M, d)
            chosen = xp.argmax(xp.where(used, -xp.inf, gain), axis=2)  # (B, M)
            used |= xp.arange(d) == chosen[..., None]
            players[tree, :, :, level] = chosen
            bit = by_player[row_index, chosen]  # (B, M, n)
            width = inputs if level < depth - 1 else inputs[..., d:]  # the leaves need the totals only
            # children 2l + 1 sum the coalitions of parent l with the player; children 2l are the
            # parent's sums less those
            ones = _node_sums(width, node, columns * bit[..., None], 2**level, xp)
            zeros = sums[..., -width.shape[2] :] - ones
            sums = xp.stack([zeros, ones], axis=3).reshape(rows, problems, 2 ** (level + 1), 2, width.shape[2])
            node = 2 * node + bit
        weight = sums[..., 1, 0] + l2
        values = learning_rate * sums[..., 0, 0] / (weight + (weight == 0))  # (B, M, 2^D); empty: 0
        leaves[tree] = values
        predictions += xp.take_along_axis(values, node, axis=2)
    return players, leaves, predictions.transpose(0, 2, 1)


def _node_sums(inputs: Any, node: Any, columns: Any, n_nodes: int, xp: Any) -> Any:
    """``out[b, m, l, c, j] = Σ_s [node[b, m, s] = l] · inputs[b, s, j] · columns[b, m, s, c]``: (B, M, L, C, w)."""
    rows, n, width = inputs.shape
    problems, n_columns = columns.shape[1], columns.shape[3]
    spread = (node[..., None] == xp.arange(n_nodes))[..., None] * columns[..., None, :]  # (B, M, n, L, C)
    spread = spread.transpose(0, 2, 1, 3, 4).reshape(rows, n, -1)
    sums = xp.matmul(inputs.transpose(0, 2, 1), spread)  # (B, w, M L C)
    return sums.reshape(rows, width, problems, n_nodes, n_columns).transpose(0, 2, 3, 4, 1)


def _leaf_gain(sums: Any, l2: float) -> Any:
    """G² / (H + λ) of gradient and weight sums (axis −2), 0 where a side is empty."""
    gradient, weight = sums[..., 0, :], sums[..., 1, :]
    return gradient**2 / (weight + l2 + (weight + l2 == 0))


def fit_oblivious_numba(
    masks: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    n_trees: int,
    depth: int,
    learning_rate: float,
    l2: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit by a numba kernel on threads: :func:`fit_oblivious_array`'s result up to rounding (and ties it moves)."""
    masks = np.asarray(masks, dtype=bool)
    rows, n, d = masks.shape
    problems = targets.shape[2]
    flipped = masks.sum(axis=2) > d // 2  # (B, n): listed by the players it lacks
    listed = masks ^ flipped[..., None]
    counts = listed.sum(axis=2).astype(np.int64)
    members = np.argsort(~listed, axis=2, kind="stable").astype(np.int64)  # (B, n, d): the listed players first
    arrays = (
        np.ascontiguousarray(masks.view(np.uint8)),
        members,
        counts,
        np.ascontiguousarray(flipped),
        np.ascontiguousarray(targets.transpose(0, 2, 1), dtype=np.float64),  # (B, M, n)
        np.ascontiguousarray(weights.transpose(0, 2, 1), dtype=np.float64),
    )
    players = np.zeros((rows, problems, n_trees, depth), dtype=np.intp)
    leaves = np.zeros((rows, problems, n_trees, 2**depth), dtype=np.float64)
    predictions = np.zeros((rows, problems, n), dtype=np.float64)
    outputs = (players, leaves, predictions)
    settings = (n_trees, depth, float(learning_rate), float(l2))
    additions_per_item = n_trees * (int(counts.mean()) + 1) * n * (depth + 1)  # of one (row, problem)
    n_leaves = 2**depth

    def items(start: int, stop: int) -> None:
        # scratch of one range, allocated here: each np.empty in a kernel is another specialisation to
        # compile (0.1 s of a first call on an empty numba cache)
        scratch = (
            np.empty(n),
            np.empty(n),
            np.empty(n, dtype=np.int64),
            np.empty(d, dtype=np.bool_),
            np.empty((2, n_leaves, d)),
            np.empty((2, n_leaves, d)),
            np.empty((2, n_leaves)),
            np.empty((2, n_leaves)),
            np.empty((2, n_leaves)),
            np.empty((2, n_leaves)),
        )
        _fit_kernel(*arrays, *settings, *outputs, *scratch, start, stop)

    run_ranges(items, rows * problems, _MIN_THREAD_ADDITIONS // max(1, additions_per_item))
    return players.transpose(2, 0, 1, 3), leaves.transpose(2, 0, 1, 3), predictions.transpose(0, 2, 1)


def compile_fit_kernel() -> None:
    """Compile :func:`fit_oblivious_numba`'s kernel, or load it from numba's cache, by one tree on one coalition.

    The kernel has one signature (:func:`fit_oblivious_numba` fixes every dtype), so the tiny call
    compiles what any later call runs.
    """
    if not _fit_kernel.signatures:
        one = np.ones((1, 1, 1))
        fit_oblivious_numba(one.astype(bool), one, one, 1, 1, 1.0, 1.0)


@numba.njit(nogil=True, cache=True)
def _fit_kernel(
    masks: np.ndarray,
    members: np.ndarray,
    counts: np.ndarray,
    flipped: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    n_trees: int,
    depth: int,
    learning_rate: float,
    l2: float,
    players: np.ndarray,
    leaves: np.ndarray,
    predictions: np.ndarray,
    gradient: np.ndarray,
    signed: np.ndarray,
    node: np.ndarray,
    used: np.ndarray,
    listed_g: np.ndarray,
    listed_h: np.ndarray,
    flipped_g: np.ndarray,
    flipped_h: np.ndarray,
    total_g: np.ndarray,
    total_h: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    n, d = masks.shape[1], masks.shape[2]
    problems, n_leaves = targets.shape[1], 1 << depth  # not 2**depth: numba compiles a power loop for it
    # scratch: per coalition its gradient, signed weight and node; the players used; per level (two
    # buffers: this one, the next) and node, sums of gradients (g) and weights (h) of the coalitions:
    # signed over their listed players, of those listed by the players they lack (flipped), and of all
    for item in range(start, stop):  # one (row, problem) per item: each writes its own outputs
        b, m = item // problems, item % problems
        weight, prediction = weights[b, m], predictions[b, m]
        for s in range(n):
            signed[s] = -weight[s] if flipped[b, s] else weight[s]
        for tree in range(n_trees):
            used[:] = False
            for s in range(n):
                node[s] = 0
                gradient[s] = (targets[b, m, s] - prediction[s]) * weight[s]
            n_nodes, now = 1, 0
            for level in range(depth + 1):  # the sums of this level's nodes, then the split
                last = level == depth  # the leaves need the totals only
                for k in range(n_nodes // 2 if level else 1):  # the right children (the root)
                    child = 2 * k + 1 if level else 0
                    total_g[now, child], total_h[now, child] = 0.0, 0.0
                    flipped_g[now, child], flipped_h[now, child] = 0.0, 0.0
                    if not last:
                        listed_g[now, child], listed_h[now, child] = 0.0, 0.0
                for s in range(n):
                    if weight[s] == 0.0 or (level and node[s] % 2 == 0):
                        continue
                    child = node[s]
                    g, h = gradient[s], weight[s]
                    total_g[now, child] += g
                    total_h[now, child] += h
                    if last:
                        continue
                    sign_g = -g if flipped[b, s] else g
                    if flipped[b, s]:
                        flipped_g[now, child] += g
                        flipped_h[now, child] += h
                    for k in range(counts[b, s]):
                        listed_g[now, child, members[b, s, k]] += sign_g
                        listed_h[now, child, members[b, s, k]] += signed[s]
                if level:  # left children: the parent's sums less the right child's
                    parent = 1 - now
                    for k in range(n_nodes // 2):
                        total_g[now, 2 * k] = total_g[parent, k] - total_g[now, 2 * k + 1]
                        total_h[now, 2 * k] = total_h[parent, k] - total_h[now, 2 * k + 1]
                        if last:
                            continue
                        flipped_g[now, 2 * k] = flipped_g[parent, k] - flipped_g[now, 2 * k + 1]
                        flipped_h[now, 2 * k] = flipped_h[parent, k] - flipped_h[now, 2 * k + 1]
                        for j in range(d):
                            listed_g[now, 2 * k, j] = listed_g[parent, k, j] - listed_g[now, 2 * k + 1, j]
                            listed_h[now, 2 * k, j] = listed_h[parent, k, j] - listed_h[now, 2 * k + 1, j]
                if last:
                    break
                best, best_gain = -1, -np.inf
                for j in range(d):
                    if used[j]:
                        continue
                    gain = 0.0
                    for k in range(n_nodes):  # player j in S: the signed listed sums plus the flipped ones
                        g_in = listed_g[now, k, j] + flipped_g[now, k]
                        h_in = listed_h[now, k, j] + flipped_h[now, k]
                        g_out, h_out = total_g[now, k] - g_in, total_h[now, k] - h_in + l2
                        h_in += l2
                        gain += g_in * g_in / (h_in + (h_in == 0.0)) + g_out * g_out / (h_out + (h_out == 0.0))
                    if best < 0 or gain > best_gain:  # the first unused player when every gain is NaN
                        best, best_gain = j, gain
                used[best] = True
                players[b, m, tree, level] = best
                for s in range(n):
                    node[s] = 2 * node[s] + masks[b, s, best]
                n_nodes, now = 2 * n_nodes, 1 - now
            for k in range(n_leaves):
                h = total_h[now, k] + l2
                leaves[b, m, tree, k] = learning_rate * total_g[now, k] / (h + (h == 0.0))
            for s in range(n):
                prediction[s] += leaves[b, m, tree, node[s]]
