"""Interventional games of a link of a linear margin (a logistic regression's probability): all 2^p coalitions.

For one explained row x and one background row z, a linear margin on the hybrid row is
m(S) = m(z) + Σ_{i ∈ S} δ_i with δ_i = Σ_{j ∈ player i} w_j (x_j − z_j); it is built on every coalition
by doubling (the coalitions with player i are those without it plus δ_i), O(2^p). The link of it,
averaged over the background rows, is the game of a row on all 2^p coalitions.
"""

from __future__ import annotations

import numba
import numpy as np

from sklearn_shapq.backends._linked_trees import _apply_link, linked_table


@numba.njit(nogil=True, cache=True)
def _linked_linear_kernel(
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
    coef: np.ndarray,
) -> None:  # pragma: no cover - numba
    parts = background.shape[0] // part_rows
    n_columns, n_outputs = coef.shape
    n_coalitions = 1 << n_players
    table = np.empty((n_coalitions, n_outputs))
    delta = np.empty((n_players, n_outputs))
    for i in range(start, stop):
        players = player_of_column[i]
        for b in range(background.shape[0]):
            delta[:] = 0.0
            for k in range(n_outputs):
                table[0, k] = offset[k]
            for j in range(n_columns):
                for k in range(n_outputs):
                    table[0, k] += coef[j, k] * background[b, j]
                    if players[j] >= 0:  # player −1: in no coalition, always z's value
                        delta[players[j], k] += coef[j, k] * (rows[i, j] - background[b, j])
            for player in range(n_players):
                bit = 1 << player
                for c in range(bit):
                    for k in range(n_outputs):
                        table[c + bit, k] = table[c, k] + delta[player, k]
            _apply_link(table, link, log_odds, clip, knots)
            game = i * parts + b // part_rows
            for c in range(n_coalitions):
                for k in range(n_outputs):
                    out[game, c, k] += table[c, k]


def linked_linear_table(
    coef: np.ndarray,
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
    """Return each row's interventional game on all 2^p coalitions: mean_z link(z·w + offset + Σ_{i ∈ S} δ_i).

    Parameters
    ----------
    coef : ndarray of shape (d, n_outputs)
        The margin's weights w, one column per output.
    rows : ndarray of shape (n, d)
    background : ndarray of shape (N, d)
    offset : ndarray of shape (n_outputs,)
        The margin's intercept.
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
        As :func:`~sklearn_shapq.backends.linked_tree_table`: game ``r · parts + j`` is row r's on part j,
        entry ``c`` the coalition of the set bits of ``c``; a mean runs in one fixed order, alone or in a batch.

    Examples
    --------
    >>> table = linked_linear_table(np.array([[1.0], [2.0]]), np.array([[1.0, 1.0]]), np.zeros((1, 2)),
    ...                             np.zeros(1), np.arange(2), 2, "exp")
    >>> np.log(table[0, :, 0]).tolist()  # ∅, {0}, {1}, {0, 1}
    [0.0, 1.0, 2.0, 3.0]
    """
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    background = np.ascontiguousarray(background, dtype=np.float64)
    weights = np.ascontiguousarray(coef, dtype=np.float64)
    table_of = (rows, background, offset, player_of_column, n_players, weights.shape[1])
    return linked_table(_linked_linear_kernel, (weights,), *table_of, link, log_odds, clip, knots, parts)
