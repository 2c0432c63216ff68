"""Interventional games of additive tree ensembles: numba kernels for predictions and exact leaf sums.

For one explained row x and one background row z, the game v(S) = f(x_S, z_{N∖S}) of a tree is a
sum over its leaves of the leaf's value times u(S) = [A ⊆ S] [B ∩ S = ∅]: A holds the players whose
features only x sends down the leaf's path, B those only z sends (a player both fail is a leaf
never reached; one both pass does not matter). A depth-first walk that follows x and z together
visits exactly these leaves. Every order-1 and order-2 index that weighs the Möbius coefficients
``m(A ∪ T) = (−1)^|T|``, T ⊆ B, by their size is a table entry in ``(|A|, |B|)`` per leaf: the caller
passes the tables (Laberge and Pequignot 2022 give the Shapley case).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from sklearn_shapq.backends._threads import run_ranges

_MIN_THREAD_ROWS = 4
"""Explained rows below which a thread is not worth starting."""


@dataclass(frozen=True)
class TreeArrays:
    """Additive trees in flat arrays: f(x) = Σ_t tree_t(x) (an offset is the caller's).

    Attributes
    ----------
    feature : int64 ndarray of shape (n_nodes,)
        The split's column; −1 at a leaf.
    threshold : float64 ndarray of shape (n_nodes,)
        The split's threshold (unused at a leaf); NaN at a categorical split, which ``category_left`` decides.
    left, right : int64 ndarray of shape (n_nodes,)
        The children's positions in these arrays.
    missing_left : bool ndarray of shape (n_nodes,)
        Where NaN goes.
    value : float64 ndarray of shape (n_nodes, n_outputs)
        Leaf values, scaled (learning rate, forest mean).
    roots : int64 ndarray of shape (n_trees,)
        Each tree's first node.
    strict : bool
        ``x < threshold`` goes left (xgboost); else ``x <= threshold`` (scikit-learn).
    float32_inputs : bool
        The model compares its inputs rounded to float32 (scikit-learn's trees, xgboost).
    float32_sums : bool
        The model sums its leaves in float32 (xgboost): its outputs match the trees' to float32 only.
    max_depth : int
        The most splits from a root to a leaf.
    category_of_node : int64 ndarray of shape (n_nodes,), optional
        A categorical split's row of ``category_left``, −1 at other nodes (default: no categorical split); read
        only where the threshold is NaN, so numeric splits cost no more than without categories.
    category_left : bool ndarray of shape (n_categorical_splits, n_codes), optional
        Whether a categorical split sends each category code left; a value goes by its code truncated toward
        zero (−0.5 and 2.7 as 0 and 2, as LightGBM reads them); a NaN, a value of −1 or less, or one past
        ``n_codes`` goes where NaN goes (``missing_left``).
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    strict: bool
    float32_inputs: bool
    float32_sums: bool
    max_depth: int
    category_of_node: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    category_left: np.ndarray = field(default_factory=lambda: np.zeros((0, 1), dtype=np.bool_))

    def __post_init__(self) -> None:
        if self.category_of_node.size == 0:  # the default: no categorical split (frozen: set here)
            object.__setattr__(self, "category_of_node", np.full(self.feature.shape[0], -1, dtype=np.int64))

    @property
    def node_arrays(
        self,
    ) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
    ]:
        """The node arrays in the kernels' order: feature … roots (as declared), category_of_node, category_left."""
        return (
            self.feature,
            self.threshold,
            self.left,
            self.right,
            self.missing_left,
            self.value,
            self.roots,
            self.category_of_node,
            self.category_left,
        )

    def inputs(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` as float64, rounded through float32 first where the model compares float32."""
        rows = np.asarray(rows, dtype=np.float32 if self.float32_inputs else np.float64)
        return np.ascontiguousarray(rows, dtype=np.float64)


def node_depths(left: np.ndarray, right: np.ndarray, feature: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """Depth of every node reached from ``roots``, level by level (−1 where none reaches it).

    Examples
    --------
    >>> left, right = np.array([1, -1, -1]), np.array([2, -1, -1])
    >>> node_depths(left, right, np.array([0, -1, -1]), np.array([0])).tolist()
    [0, 1, 1]
    """
    depth = np.full(left.shape[0], -1, dtype=np.int64)
    level, frontier = 0, np.asarray(roots, dtype=np.int64)
    while frontier.size:
        depth[frontier] = level
        inner = frontier[feature[frontier] >= 0]
        frontier, level = np.concatenate([left[inner], right[inner]]), level + 1
    return depth


@numba.njit(nogil=True, cache=True, inline="always")  # called per node: inlined
def _goes_left(
    value: float,
    node: int,
    threshold: np.ndarray,
    missing_left: np.ndarray,
    strict: bool,
    category_of_node: np.ndarray,
    category_left: np.ndarray,
) -> bool:
    if value != value:  # NaN
        return missing_left[node]
    split = threshold[node]
    if split != split:  # a categorical split (NaN threshold): its side of the value's code (truncated), out of range
        if value <= -1.0 or value >= category_left.shape[1]:  # the NaN way
            return missing_left[node]
        return category_left[category_of_node[node], int(value)]
    return value < split if strict else value <= split


@numba.njit(nogil=True, cache=True)
def _predict_kernel(
    rows: np.ndarray,
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
    out: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    for i in range(start, stop):
        for t in range(roots.shape[0]):
            node = roots[t]
            while feature[node] >= 0:
                go_left = _goes_left(
                    rows[i, feature[node]], node, threshold, missing_left, strict, category_of_node, category_left
                )
                node = left[node] if go_left else right[node]
            for k in range(value.shape[1]):
                out[i, k] += value[node, k]


def tree_predict(trees: TreeArrays, rows: np.ndarray) -> np.ndarray:
    """Return Σ_t tree_t(row) of every row, each row's sum in tree order (alone or in a batch).

    Parameters
    ----------
    trees : TreeArrays
    rows : ndarray of shape (n, d)

    Returns
    -------
    ndarray of shape (n, n_outputs)
    """
    rows = trees.inputs(rows)
    out = np.zeros((rows.shape[0], trees.value.shape[1]))
    arrays = trees.node_arrays
    run_ranges(lambda start, stop: _predict_kernel(rows, *arrays, trees.strict, out, start, stop), rows.shape[0], 64)
    return out


LEAF_TABLES, LEAF_MOEBIUS = 0, 1
"""What :func:`walk_pair` does at each leaf: add its players' table weights (values and pairs), or add its
Möbius coefficients to a table of all coalitions."""


@numba.njit(nogil=True, cache=True)
def walk_buffers(n_players: int, max_depth: int) -> tuple:  # pragma: no cover - numba
    """Return :func:`walk_pair`'s work arrays (one set per thread; the walk leaves them as it found them)."""
    size = 2 * max_depth + 4
    return (
        np.zeros(n_players, dtype=np.int64),  # splits on the player's columns x fails, on the path
        np.zeros(n_players, dtype=np.int64),  # ... z fails
        np.empty(size, dtype=np.int64),  # ≥ 0: enter the node; −1: leave, undoing the change below
        np.empty(size, dtype=np.int64),  # the player whose side the entry fixes (−1: none)
        np.empty(size, dtype=np.int64),  # 0: only x passes (the player joins A), 1: only z (B)
        np.empty(max_depth + 1, dtype=np.int64),  # the players in A or B, in the order they joined
    )


@numba.njit(nogil=True, cache=True, inline="always")  # called per tree and pair: inlined, no call overhead
def walk_pair(
    x: np.ndarray,
    z: np.ndarray,
    root: int,
    feature: np.ndarray,
    threshold: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    missing_left: np.ndarray,
    value: np.ndarray,
    category_of_node: np.ndarray,
    category_left: np.ndarray,
    strict: bool,
    player_of_column: np.ndarray,
    work: tuple,
    mode: int,
    single_tables: np.ndarray,
    pair_tables: np.ndarray,
    with_pairs: bool,
    singles: np.ndarray,
    pairs: np.ndarray,
    table: np.ndarray,
) -> None:  # pragma: no cover - numba
    """Walk one tree following x and z together; at every leaf reached, add its game [A ⊆ S][B ∩ S = ∅] · value.

    ``mode`` :data:`LEAF_TABLES`: each player's weight ``single_tables[in_B, |A|, |B|]`` into ``singles``
    (p, k), and with ``with_pairs`` each pair's into ``pairs`` (p, p, k). :data:`LEAF_MOEBIUS`: the
    coefficients (−1)^|T| · value on A ∪ T, T ⊆ B, into ``table`` (2^p, k), players as bits (p ≤ 62).
    ``work``: :func:`walk_buffers`. A column of player −1 is in no coalition: it always takes z's value.
    """
    x_fails, z_fails, stack_node, stack_player, stack_side, on_path = work
    n_outputs = value.shape[1]
    top, n_on_path, size_a, size_b, mask_a, mask_b = 1, 0, 0, 0, 0, 0
    stack_node[0], stack_player[0], stack_side[0] = root, -1, 0
    while top > 0:
        top -= 1
        node, player, side = stack_node[top], stack_player[top], stack_side[top]
        if node < 0:  # leave: undo the entry's change
            if side == 0:
                z_fails[player] -= 1
                if z_fails[player] == 0:
                    size_a -= 1
                    n_on_path -= 1
                    if mode == LEAF_MOEBIUS:  # bits only there (p ≤ 62): a shift past 63 is undefined
                        mask_a &= ~(1 << player)
            else:
                x_fails[player] -= 1
                if x_fails[player] == 0:
                    size_b -= 1
                    n_on_path -= 1
                    if mode == LEAF_MOEBIUS:
                        mask_b &= ~(1 << player)
            continue
        if player >= 0:
            if side == 0:
                z_fails[player] += 1
            else:
                x_fails[player] += 1
            if x_fails[player] > 0 and z_fails[player] > 0:  # a leaf below needs x_j and z_j: none
                if side == 0:
                    z_fails[player] -= 1
                else:
                    x_fails[player] -= 1
                continue
            if side == 0 and z_fails[player] == 1:
                size_a += 1
                on_path[n_on_path] = player
                n_on_path += 1
                if mode == LEAF_MOEBIUS:
                    mask_a |= 1 << player
            elif side == 1 and x_fails[player] == 1:
                size_b += 1
                on_path[n_on_path] = player
                n_on_path += 1
                if mode == LEAF_MOEBIUS:
                    mask_b |= 1 << player
            stack_node[top], stack_player[top], stack_side[top] = -1, player, side
            top += 1
        column = feature[node]
        if column < 0 and mode == LEAF_MOEBIUS:  # m(A ∪ T) += (−1)^|T| value for every T ⊆ B
            subset = mask_b
            while True:
                odd, bits = False, subset
                while bits:
                    bits &= bits - 1
                    odd = not odd
                for k in range(n_outputs):
                    table[mask_a | subset, k] += -value[node, k] if odd else value[node, k]
                if subset == 0:
                    break
                subset = (subset - 1) & mask_b
            continue
        if column < 0:  # the leaf tables: each player's (and pair's) weight by |A|, |B| and its side
            for q in range(n_on_path):
                player_q = on_path[q]
                in_b = 1 if x_fails[player_q] > 0 else 0
                weight = single_tables[in_b, size_a, size_b]
                for k in range(n_outputs):
                    singles[player_q, k] += weight * value[node, k]
                if with_pairs:
                    for r in range(q):
                        player_r = on_path[r]
                        pair = pair_tables[in_b + (1 if x_fails[player_r] > 0 else 0), size_a, size_b]
                        for k in range(n_outputs):
                            pairs[player_q, player_r, k] += pair * value[node, k]
                            pairs[player_r, player_q, k] += pair * value[node, k]
            continue
        x_left = _goes_left(x[column], node, threshold, missing_left, strict, category_of_node, category_left)
        z_left = _goes_left(z[column], node, threshold, missing_left, strict, category_of_node, category_left)
        player = player_of_column[column]
        if x_left == z_left or player < 0:  # one way on (a column of no player always takes z's value)
            stack_node[top], stack_player[top] = left[node] if z_left else right[node], -1
            top += 1
        else:
            stack_node[top], stack_player[top], stack_side[top] = left[node] if x_left else right[node], player, 0
            stack_node[top + 1], stack_player[top + 1], stack_side[top + 1] = (
                right[node] if x_left else left[node],
                player,
                1,
            )
            top += 2


@numba.njit(nogil=True, cache=True)
def _leaf_sums_kernel(
    rows: np.ndarray,
    background: np.ndarray,
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
    player_of_column: np.ndarray,
    n_players: int,
    max_depth: int,
    single_tables: np.ndarray,
    pair_tables: np.ndarray,
    with_pairs: bool,
    singles: np.ndarray,
    pairs: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    work = walk_buffers(n_players, max_depth)
    no_table = np.zeros((1, 1))
    for i in range(start, stop):
        pairs_row = pairs[i] if with_pairs else pairs[0]
        for b in range(background.shape[0]):
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
                    player_of_column,
                    work,
                    LEAF_TABLES,
                    single_tables,
                    pair_tables,
                    with_pairs,
                    singles[i],
                    pairs_row,
                    no_table,
                )


def tree_leaf_sums(
    trees: TreeArrays,
    rows: np.ndarray,
    background: np.ndarray,
    player_of_column: np.ndarray,
    n_players: int,
    single_tables: np.ndarray,
    pair_tables: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Sum the leaf tables over the trees and background rows, per explained row (means over the background).

    Parameters
    ----------
    trees : TreeArrays
    rows : ndarray of shape (n, d)
    background : ndarray of shape (N, d)
    player_of_column : int ndarray of shape (d,)
    n_players : int
    single_tables : ndarray of shape (2, D + 1, D + 1)
        A player's weight of a leaf with ``a = |A|``, ``b = |B|``: ``[0, a, b]`` where it is in A, ``[1, a, b]``
        in B (D: at least the most players on a path, min(``trees.max_depth``, ``n_players``)).
    pair_tables : ndarray of shape (3, D + 1, D + 1), optional
        A pair's weight: ``[c, a, b]`` where c of the two are in B.

    Returns
    -------
    singles : ndarray of shape (n, n_players, n_outputs)
    pairs : ndarray of shape (n, n_players, n_players, n_outputs) or None
        Without ``pair_tables``: None. Each row's sums run in one fixed order, alone or in a batch.
    """
    rows, background = trees.inputs(rows), trees.inputs(background)
    n, n_outputs = rows.shape[0], trees.value.shape[1]
    singles = np.zeros((n, n_players, n_outputs))
    with_pairs = pair_tables is not None
    pairs = np.zeros((n, n_players, n_players, n_outputs) if with_pairs else (1, 1, 1, 1))
    pair_weights = pair_tables if pair_tables is not None else np.zeros((3, 1, 1))
    arrays = trees.node_arrays
    players = np.ascontiguousarray(player_of_column, dtype=np.int64)

    def call(start: int, stop: int) -> None:
        _leaf_sums_kernel(
            rows,
            background,
            *arrays,
            trees.strict,
            players,
            n_players,
            trees.max_depth,
            single_tables,
            pair_weights,
            with_pairs,
            singles,
            pairs,
            start,
            stop,
        )

    run_ranges(call, n, _MIN_THREAD_ROWS, ranges_per_thread=4)
    scale = 1.0 / background.shape[0]
    return singles * scale, (pairs * scale if with_pairs else None)
