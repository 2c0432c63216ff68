"""Fits of boosted oblivious trees on coalition masks: array code (numpy, cupy) and a numba kernel.

The surrogate of the cross-fitted control variate (:mod:`sklearn_shapq.estimators._oblivious_boosting`
holds the settings, the ensemble and its exact Shapley values). A tree is *oblivious*: every node
of a level splits on the same player, so a tree of depth D is D players and 2^D leaf values.

Both fits do the same arithmetic, in a different order of the additions:

* **Splits.** Squared loss; a level takes the unused player of largest gain
  ``Σ_nodes G² / (H + λ)`` over both children (XGBoost's gain, Chen & Guestrin 2016), the first
  such player on ties; leaves move by ``rate · G / (H + λ)`` (0 for an empty leaf with λ = 0). No
  row or column subsampling: the fit is deterministic.
* **Histogram subtraction.** A level sums only the coalitions that go to the right children (with
  the level's player) and takes the left children as the parent's sums less those (LightGBM's).
* **Array path** (:func:`fit_oblivious_array`, the GPU's and CI's twins): the sums of every
  (node, player) of every problem are one batched product per level,
  ``masksᵀ @ (one-hot(node) · gradient)``: 2^(l + 1) n (d + 1) M multiply-adds at level l and
  n · M · 2^D floats of one-hot spread, in a Python loop over trees and levels.
* **Numba path** (:func:`fit_oblivious_numba`, the CPU's): one kernel call fits every tree of a
  range of (row, problem) items, adding each coalition's gradient to its node for the players it
  holds (listed once per row): about n · d · (1 + (D − 1) / 2) additions per tree and problem,
  without temporaries, on :func:`~sklearn_shapq.backends._threads.run_ranges` threads.
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
    """Fit by a numba kernel on threads; the result of :func:`fit_oblivious_array` up to rounding.

    Ties between players' gains can fall differently when the sums round differently.
    """
    masks = np.asarray(masks, dtype=bool)
    rows, n, d = masks.shape
    problems = targets.shape[2]
    counts = masks.sum(axis=2).astype(np.int64)  # (B, n): players in each coalition
    members = np.argsort(~masks, axis=2, kind="stable").astype(np.int64)  # (B, n, d): its players first
    arrays = (
        np.ascontiguousarray(masks.view(np.uint8)),
        members,
        counts,
        np.ascontiguousarray(targets.transpose(0, 2, 1), dtype=np.float64),  # (B, M, n)
        np.ascontiguousarray(weights.transpose(0, 2, 1), dtype=np.float64),
    )
    players = np.zeros((rows, problems, n_trees, depth), dtype=np.intp)
    leaves = np.zeros((rows, problems, n_trees, 2**depth), dtype=np.float64)
    predictions = np.zeros((rows, problems, n), dtype=np.float64)
    outputs = (players, leaves, predictions)
    settings = (n_trees, depth, float(learning_rate), float(l2))
    additions_per_item = n_trees * n * d * (depth + 1)
    run_ranges(
        lambda start, stop: _fit_kernel(*arrays, *settings, *outputs, start, stop),
        rows * problems,
        _MIN_THREAD_ADDITIONS // max(1, additions_per_item),
    )
    return players.transpose(2, 0, 1, 3), leaves.transpose(2, 0, 1, 3), predictions.transpose(0, 2, 1)


@numba.njit(nogil=True, cache=True)
def _fit_kernel(
    masks: np.ndarray,
    members: np.ndarray,
    counts: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    n_trees: int,
    depth: int,
    learning_rate: float,
    l2: float,
    players: np.ndarray,
    leaves: np.ndarray,
    predictions: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    n, d = masks.shape[1], masks.shape[2]
    problems, n_leaves = targets.shape[1], 2**depth
    gradient = np.empty(n)
    node = np.empty(n, dtype=np.int64)
    used = np.empty(d, dtype=np.bool_)
    inside = np.empty((2, n_leaves, d))  # gradient sums of (node, player) with the player in S
    inside_weight = np.empty((2, n_leaves, d))
    total = np.empty((2, n_leaves))  # gradient and weight sums of each node
    total_weight = np.empty((2, n_leaves))
    for item in range(start, stop):  # one (row, problem) per item: each writes its own outputs
        b, m = item // problems, item % problems
        weight, prediction = weights[b, m], predictions[b, m]
        for tree in range(n_trees):
            used[:] = False
            inside[0, 0], inside_weight[0, 0] = 0.0, 0.0
            total[0, 0], total_weight[0, 0] = 0.0, 0.0
            for s in range(n):  # the root's sums
                node[s] = 0
                gradient[s] = (targets[b, m, s] - prediction[s]) * weight[s]
                if weight[s] != 0.0:
                    total[0, 0] += gradient[s]
                    total_weight[0, 0] += weight[s]
                    for k in range(counts[b, s]):
                        inside[0, 0, members[b, s, k]] += gradient[s]
                        inside_weight[0, 0, members[b, s, k]] += weight[s]
            n_nodes, now = 1, 0
            for level in range(depth):
                best, best_gain = -1, -np.inf
                for j in range(d):
                    if used[j]:
                        continue
                    gain = 0.0
                    for k in range(n_nodes):
                        g_in, h_in = inside[now, k, j], inside_weight[now, k, j] + l2
                        g_out, h_out = total[now, k] - g_in, total_weight[now, k] - inside_weight[now, k, j] + l2
                        gain += g_in * g_in / (h_in + (h_in == 0.0)) + g_out * g_out / (h_out + (h_out == 0.0))
                    if gain > best_gain:
                        best, best_gain = j, gain
                used[best] = True
                players[b, m, tree, level] = best
                nxt, last = 1 - now, level == depth - 1
                for k in range(n_nodes):  # children 2k + 1: the coalitions of node k with the player
                    total[nxt, 2 * k + 1], total_weight[nxt, 2 * k + 1] = 0.0, 0.0
                    if not last:
                        inside[nxt, 2 * k + 1], inside_weight[nxt, 2 * k + 1] = 0.0, 0.0
                for s in range(n):
                    if masks[b, s, best]:
                        child = 2 * node[s] + 1
                        node[s] = child
                        if weight[s] != 0.0:
                            total[nxt, child] += gradient[s]
                            total_weight[nxt, child] += weight[s]
                            if not last:
                                for k in range(counts[b, s]):
                                    inside[nxt, child, members[b, s, k]] += gradient[s]
                                    inside_weight[nxt, child, members[b, s, k]] += weight[s]
                    else:
                        node[s] = 2 * node[s]
                for k in range(n_nodes):  # children 2k: the parent's sums less those
                    total[nxt, 2 * k] = total[now, k] - total[nxt, 2 * k + 1]
                    total_weight[nxt, 2 * k] = total_weight[now, k] - total_weight[nxt, 2 * k + 1]
                    if not last:
                        for j in range(d):
                            inside[nxt, 2 * k, j] = inside[now, k, j] - inside[nxt, 2 * k + 1, j]
                            inside_weight[nxt, 2 * k, j] = inside_weight[now, k, j] - inside_weight[nxt, 2 * k + 1, j]
                n_nodes, now = 2 * n_nodes, nxt
            for k in range(n_leaves):
                h = total_weight[now, k] + l2
                leaves[b, m, tree, k] = learning_rate * total[now, k] / (h + (h == 0.0))
            for s in range(n):
                prediction[s] += leaves[b, m, tree, node[s]]
