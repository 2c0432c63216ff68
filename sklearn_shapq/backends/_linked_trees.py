"""Interventional games of a link of tree sums (a boosted classifier's probability): all 2^p coalitions.

For one explained row x and one background row z, the trees' sum m(S) = Σ_t tree_t(x_S, z_{N∖S}) is a
sum over the leaves x and z reach together of the leaf's value times [A ⊆ S] [B ∩ S = ∅] (the walk
of :mod:`~sklearn_shapq.backends._tree_shapley`), whose Möbius coefficients are (−1)^|T| on A ∪ T, T ⊆ B.
Adding them per leaf and summing over subsets (the zeta transform) gives m on every coalition in
O(p 2^p); the link (a sigmoid, a softmax, exp) of m plus the model's constant, averaged over the
background rows, is the game of a row on all 2^p coalitions: its exact indices follow from the table.
A link keeps the polynomial leaf tables from applying, so this is for a few players only.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np

from sklearn_shapq.backends._threads import run_ranges
from sklearn_shapq.backends._tree_shapley import LEAF_MOEBIUS, TreeArrays, walk_buffers, walk_pair

LINKS = ("identity", "sigmoid", "softmax", "exp", "interp")
"""The maps from the trees' sums (plus the constant) to the explained outputs, by code (their position); "interp"
is the piecewise-linear function through ``knots`` (an isotonic calibration's), constant beyond its ends."""
NO_KNOTS = np.zeros((2, 0))
"""The knots of every link but "interp"."""


@numba.njit(nogil=True, cache=True)
def _apply_link(
    table: np.ndarray, link: int, log_odds: bool, clip: float, knots: np.ndarray
) -> None:  # pragma: no cover - numba
    """Map each coalition's sums (C, K) through the link in place; then the log-odds of the clipped result."""
    n_coalitions, n_outputs = table.shape
    if link == 4:
        for k in range(n_outputs):
            table[:, k] = np.interp(table[:, k], knots[0], knots[1])
    for c in range(n_coalitions):
        if link == 1:
            for k in range(n_outputs):
                table[c, k] = 1.0 / (1.0 + math.exp(-table[c, k]))
        elif link == 2:
            top = table[c, 0]
            for k in range(1, n_outputs):
                top = max(top, table[c, k])
            total = 0.0
            for k in range(n_outputs):
                table[c, k] = math.exp(table[c, k] - top)
                total += table[c, k]
            for k in range(n_outputs):
                table[c, k] /= total
        elif link == 3:
            for k in range(n_outputs):
                table[c, k] = math.exp(table[c, k])
        if log_odds:
            for k in range(n_outputs):
                p = min(max(table[c, k], clip), 1.0 - clip)
                table[c, k] = math.log(p / (1.0 - p))


@numba.njit(nogil=True, cache=True)
def _zeta_transform(flat: np.ndarray, n_players: int, n_outputs: int) -> None:  # pragma: no cover - numba
    """Sum each coalition's entries over its subsets in place: m(S) = Σ_{U ⊆ S} Möbius(U).

    ``flat`` holds 2^p coalitions of ``n_outputs`` entries each. Players go three at a time (eight coalitions
    in registers, one pass over memory) and then one at a time; each entry gets the same additions in the same
    order as player after player, one pass each.
    """
    size = flat.shape[0]
    first = 0
    while first + 2 < n_players:
        span = (1 << first) * n_outputs  # the coalitions without player `first` and their outputs: contiguous
        for high in range(0, size, 8 * span):
            for low in range(high, high + span):
                a0, a1, a2, a3 = flat[low], flat[low + span], flat[low + 2 * span], flat[low + 3 * span]
                a4, a5, a6, a7 = flat[low + 4 * span], flat[low + 5 * span], flat[low + 6 * span], flat[low + 7 * span]
                a1 += a0  # player first
                a3 += a2
                a5 += a4
                a7 += a6
                a2 += a0  # player first + 1
                a3 += a1
                a6 += a4
                a7 += a5
                flat[low + span], flat[low + 2 * span], flat[low + 3 * span] = a1, a2, a3
                flat[low + 4 * span] = a4 + a0  # player first + 2
                flat[low + 5 * span] = a5 + a1
                flat[low + 6 * span] = a6 + a2
                flat[low + 7 * span] = a7 + a3
        first += 3
    for j in range(first, n_players):
        span = (1 << j) * n_outputs
        for high in range(0, size, 2 * span):
            for low in range(span):
                flat[high + span + low] += flat[high + low]


@numba.njit(nogil=True, cache=True)
def _linked_table_kernel(
    rows: np.ndarray,
    background: np.ndarray,
    player_of_column: np.ndarray,
    n_players: int,
    offset: np.ndarray,
    link: int,
    log_odds: bool,
    clip: float,
    knots: np.ndarray,
    part_rows: int,
    out: np.ndarray,
    start: int,
    stop: int,
    feature: np.ndarray,
    threshold: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    missing_left: np.ndarray,
    value: np.ndarray,
    roots: np.ndarray,
    category_of_node: np.ndarray,
    category_left: np.ndarray,
    strict: bool,
    max_depth: int,
) -> None:  # pragma: no cover - numba
    parts = background.shape[0] // part_rows
    n_outputs = value.shape[1]
    n_coalitions = 1 << n_players
    table = np.empty((n_coalitions, n_outputs))
    flat = table.reshape(n_coalitions * n_outputs)
    work = walk_buffers(n_players, max_depth)
    no_weights, no_values = np.zeros((2, 1, 1)), np.zeros((1, 1, 1))
    for i in range(start, stop):
        for b in range(background.shape[0]):
            table[:] = 0.0
            for k in range(n_outputs):
                table[0, k] = offset[k]
            for t in range(roots.shape[0]):
                walk_pair(
                    rows[i],
                    background[b],
                    roots[t],
                    feature,
                    threshold,
                    left,
                    right,
                    missing_left,
                    value,
                    category_of_node,
                    category_left,
                    strict,
                    player_of_column[i],
                    work,
                    LEAF_MOEBIUS,
                    no_weights,
                    no_weights,
                    False,
                    no_values[0],
                    no_values,
                    table,
                )
            _zeta_transform(flat, n_players, n_outputs)
            _apply_link(table, link, log_odds, clip, knots)
            game = i * parts + b // part_rows
            for c in range(n_coalitions):
                for k in range(n_outputs):
                    out[game, c, k] += table[c, k]


def apply_link(
    sums: np.ndarray, link: str, log_odds: bool = False, clip: float = 0.0, knots: np.ndarray | None = None
) -> np.ndarray:
    """Return ``sums`` (n, n_outputs) through ``link`` (as :func:`linked_tree_table` maps each coalition's).

    Examples
    --------
    >>> apply_link(np.array([[0.0, np.log(3.0)]]), "softmax").tolist()
    [[0.25, 0.75]]
    """
    out = np.array(sums, dtype=np.float64, order="C", ndmin=2)
    _apply_link(out, LINKS.index(link), log_odds, clip, _knots(knots))
    return out


def linked_tree_table(
    trees: TreeArrays,
    rows: np.ndarray,
    background: np.ndarray,
    offset: np.ndarray,
    player_of_column: np.ndarray,
    n_players: int,
    link: str,
    log_odds: bool = False,
    clip: float = 0.0,
    knots: np.ndarray | None = None,
    parts: int = 1,
) -> np.ndarray:
    """Return each row's interventional game on all 2^p coalitions: mean_z link(m_z(S) + offset).

    Parameters
    ----------
    trees : TreeArrays
    rows : ndarray of shape (n, d)
    background : ndarray of shape (N, d)
    offset : ndarray of shape (n_outputs,)
        The constant the model adds to the trees' sums before the link.
    player_of_column : int ndarray of shape (d,) or (n, d)
        Each column's player (a feature group's columns share one), or each row's; −1 for a column in no
        coalition (it always takes the background row's value).
    n_players : int
        p, at most 30 (the table holds 2^p coalitions per row).
    link : {"identity", "sigmoid", "softmax", "exp", "interp"}
        "softmax" across the outputs (one per class); the others output by output.
    log_odds : bool, default=False
        Then log(p / (1 − p)) of the result clipped to [clip, 1 − clip].
    clip : float, default=0.0
    knots : ndarray of shape (2, K), optional
        The "interp" link's increasing x and their y.
    parts : int, default=1
        Games per row: the mean over each of ``parts`` consecutive equal parts of the background.

    Returns
    -------
    ndarray of shape (n · parts, 2^p, n_outputs)
        Game ``r · parts + j`` is row r's on part j; entry ``c`` is the coalition whose players are the set bits
        of ``c``. Each mean over background rows runs in one fixed order, alone or in a batch.

    Examples
    --------
    A stump on column 0 (x₀ ≤ 0: 0, else 1) through a sigmoid, one background row sending column 0 left.

    >>> stump = TreeArrays(
    ...     feature=np.array([0, -1, -1]), threshold=np.zeros(3), left=np.array([1, -1, -1]),
    ...     right=np.array([2, -1, -1]), missing_left=np.zeros(3, bool), value=np.array([[0.0], [0.0], [1.0]]),
    ...     roots=np.array([0]), strict=False, float32_inputs=False, float32_sums=False, max_depth=1,
    ... )
    >>> table = linked_tree_table(stump, np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]]), np.zeros(1),
    ...                           np.arange(2), 2, "sigmoid")
    >>> table[0, :, 0].round(4).tolist()  # ∅, {0}, {1}, {0, 1}
    [0.5, 0.7311, 0.5, 0.7311]
    """
    rows, background = trees.inputs(rows), trees.inputs(background)
    structure = (*trees.node_arrays, trees.strict, trees.max_depth)
    table_of = (rows, background, offset, player_of_column, n_players, trees.value.shape[1])
    return linked_table(_linked_table_kernel, structure, *table_of, link, log_odds, clip, knots, parts)


def linked_table(
    kernel: Callable[..., None],
    structure: tuple,
    rows: np.ndarray,
    background: np.ndarray,
    offset: np.ndarray,
    player_of_column: np.ndarray,
    n_players: int,
    n_outputs: int,
    link: str,
    log_odds: bool,
    clip: float,
    knots: np.ndarray | None,
    parts: int,
) -> np.ndarray:
    """Run a linked-table kernel on the rows' ranges in parallel and return each part's mean (n · parts, 2^p, k).

    ``kernel(rows, background, players, n_players, offset, link, log_odds, clip, knots, part_rows, out, start,
    stop, *structure)`` adds each pair of rows' table through the link into ``out[r · parts + j]``; the other
    parameters are those of :func:`linked_tree_table`, ``structure`` what the kernel reads (trees, weights).

    Raises
    ------
    ValueError
        More than 30 players, or ``parts`` does not divide the background.
    """
    if not 0 <= n_players <= 30:
        raise ValueError(f"n_players={n_players}: the table of 2^p coalitions takes p <= 30.")
    if parts < 1 or background.shape[0] % parts:
        raise ValueError(f"parts={parts} does not divide the {background.shape[0]} background rows into equal parts.")
    n, per_part = rows.shape[0], background.shape[0] // parts
    out = np.zeros((n * parts, 1 << n_players, n_outputs))
    players = np.asarray(player_of_column, dtype=np.int64)  # each row's: (d,) or (n, d)
    players = np.ascontiguousarray(np.broadcast_to(players, (n, players.shape[-1])))
    constant = np.ascontiguousarray(offset, dtype=np.float64).reshape(n_outputs)
    code, curve = LINKS.index(link), _knots(knots)

    def call(start: int, stop: int) -> None:
        kernel(
            rows,
            background,
            players,
            n_players,
            constant,
            code,
            log_odds,
            clip,
            curve,
            per_part,
            out,
            start,
            stop,
            *structure,
        )

    run_ranges(call, n, 1, ranges_per_thread=4)
    out /= per_part
    return out


def _knots(knots: np.ndarray | None) -> np.ndarray:
    """Return the "interp" link's knots (2, K) as contiguous floats, or :data:`NO_KNOTS`."""
    return NO_KNOTS if knots is None else np.ascontiguousarray(knots, dtype=np.float64).reshape(2, -1)
