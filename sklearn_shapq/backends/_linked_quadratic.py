"""Interventional games of a quadratic margin and a link of it (a quadratic discriminant's probability): 2^p coalitions.

For one explained row x and one background row z, a quadratic margin m(h) = c + bᵀh + hᵀAh on the hybrid
row h = z + Δ_S (Δ = x − z on the columns of the players in S) is m(S) = m(z) + Σ_{i ∈ S} g_i +
Σ_{i < i' ∈ S} H_ii', with g_i the terms of player i's columns alone and H_ii' those of a column of each.
It is built on every coalition by doubling: the coalitions with player p are those without it plus g_p
plus Σ_{q ∈ S} H_pq, which is itself a table of the players below p, doubled the same way; O(2^p) a
pair of rows. The link of it, averaged over the background rows, is the game of a row on all 2^p
coalitions.
"""

from __future__ import annotations

import numba
import numpy as np

from sklearn_shapq.backends._linked_trees import _apply_link, linked_table


@numba.njit(nogil=True, cache=True)
def _linked_quadratic_kernel(
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
    quadratic: np.ndarray,
    linear: np.ndarray,
) -> None:  # pragma: no cover - numba
    parts = background.shape[0] // part_rows
    n_columns, n_outputs = linear.shape
    n_coalitions = 1 << n_players
    table = np.empty((n_coalitions, n_outputs))
    between = np.empty(n_coalitions)  # Σ_{q ∈ S} H_pq over the coalitions S of the players below p
    single = np.empty((n_players, n_outputs))
    pair = np.empty((n_players, n_players, n_outputs))
    delta = np.empty(n_columns)
    for i in range(start, stop):
        players = player_of_column[i]
        for b in range(background.shape[0]):
            for j in range(n_columns):  # player −1: in no coalition, always z's value
                delta[j] = rows[i, j] - background[b, j] if players[j] >= 0 else 0.0
            single[:] = 0.0
            pair[:] = 0.0
            for k in range(n_outputs):  # m(z), and bᵀΔ + zᵀAΔ + ΔᵀAz of each player (A need not be symmetric)
                margin = offset[k]
                for j in range(n_columns):
                    bent, bent_back = 0.0, 0.0  # (A z)_j and (Aᵀ z)_j
                    for m in range(n_columns):
                        bent += quadratic[j, m, k] * background[b, m]
                        bent_back += quadratic[m, j, k] * background[b, m]
                    margin += (linear[j, k] + bent) * background[b, j]
                    if players[j] >= 0:
                        single[players[j], k] += delta[j] * (linear[j, k] + bent + bent_back)
                table[0, k] = margin
            for j in range(n_columns):
                p = players[j]
                for m in range(n_columns):
                    q = players[m]
                    if p < 0 or q < 0:
                        continue
                    for k in range(n_outputs):
                        term = quadratic[j, m, k] * delta[j] * delta[m]
                        if p == q:
                            single[p, k] += term
                        else:
                            pair[p, q, k] += term
            for p in range(n_players):
                bit = 1 << p
                for k in range(n_outputs):
                    between[0] = 0.0
                    for q in range(p):
                        below = 1 << q
                        crossing = pair[p, q, k] + pair[q, p, k]
                        for c in range(below):
                            between[c + below] = between[c] + crossing
                    for c in range(bit):
                        table[c + bit, k] = table[c, k] + single[p, k] + between[c]
            _apply_link(table, link, log_odds, clip, knots)
            game = i * parts + b // part_rows
            for c in range(n_coalitions):
                for k in range(n_outputs):
                    out[game, c, k] += table[c, k]


def linked_quadratic_table(
    margin: tuple[np.ndarray, np.ndarray],
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
    """Return each row's interventional game on all 2^p coalitions: mean_z link(c + bᵀh + hᵀAh), h the hybrid row.

    Parameters
    ----------
    margin : (ndarray of shape (d, d, n_outputs), ndarray of shape (d, n_outputs))
        A and b of each output's margin.
    rows : ndarray of shape (n, d)
    background : ndarray of shape (N, d)
    offset : ndarray of shape (n_outputs,)
        The margin's constant c.
    player_of_column : int ndarray of shape (d,) or (n, d)
        Each column's player, or each row's; −1 for a column in no coalition (it always takes the background
        row's value).
    n_players : int
        p, at most 30.
    link : {"identity", "sigmoid", "softmax", "exp", "interp"}
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
        As :func:`~sklearn_shapq.backends.linked_linear_table`: game ``r · parts + j`` is row r's on part j,
        entry ``c`` the coalition of the set bits of ``c``; a mean runs in one fixed order, alone or in a batch.

    Examples
    --------
    The margin x0 · x1 from the background row (0, 0) to the row (1, 2): 0 unless both players join.

    >>> quadratic = np.zeros((2, 2, 1))
    >>> quadratic[0, 1, 0] = 1.0
    >>> table = linked_quadratic_table((quadratic, np.zeros((2, 1))), np.array([[1.0, 2.0]]), np.zeros((1, 2)),
    ...                                np.zeros(1), np.arange(2), 2, "identity")
    >>> table[0, :, 0].tolist()  # ∅, {0}, {1}, {0, 1}
    [0.0, 0.0, 0.0, 2.0]
    """
    quadratic = np.ascontiguousarray(margin[0], dtype=np.float64)
    linear = np.ascontiguousarray(margin[1], dtype=np.float64)
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    background = np.ascontiguousarray(background, dtype=np.float64)
    table_of = (rows, background, offset, player_of_column, n_players, linear.shape[1])
    return linked_table(_linked_quadratic_kernel, (quadratic, linear), *table_of, link, log_odds, clip, knots, parts)
