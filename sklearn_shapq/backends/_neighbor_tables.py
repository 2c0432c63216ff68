"""Interventional games of k-nearest-neighbour models on all 2^p coalitions, and where their order is a near tie.

For one explained row x and one background row z, the Minkowski distance of the hybrid row to a
training row t, raised to its power, is additive over the columns: D_t(S) = Σ_{j ∉ S} |z_j − t_j|^q +
Σ_{j ∈ S} |x_j − t_j|^q. A walk over the coalitions in Gray-code order changes one player at a time,
so every coalition costs one pass over the training rows (recomputed in full every
:data:`RESET_STEPS` steps, so that rounding does not accumulate), and its prediction is the mean
target of the k nearest (or their mean weighted by 1 / distance). Where the k-th and the (k+1)-th
distances are a near tie the model's own choice decides, so the coalition is reported to the
caller, which asks the model.
"""

from __future__ import annotations

import numba
import numpy as np

from sklearn_shapq.backends._threads import run_ranges

RESET_STEPS = 32
"""Coalitions between two full recomputations of the distances."""


def neighbor_weights(nearest: np.ndarray, power: float, distance_weights: bool) -> np.ndarray:
    """Return the weights (n, k), summing to one, of each row's k nearest given their distance^power (n, k).

    Alike, or with ``distance_weights`` 1 / distance; where some are at distance zero, those alone, alike
    (scikit-learn's rule): what the tables' walk gives each coalition.

    Examples
    --------
    >>> neighbor_weights(np.array([[1.0, 4.0], [0.0, 4.0]]), 2.0, True).tolist()
    [[0.6666666666666666, 0.3333333333333333], [1.0, 0.0]]
    """
    if not distance_weights:
        return np.full(nearest.shape, 1.0 / nearest.shape[1])
    at_zero = (nearest == 0.0).any(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        weights = np.where(at_zero, (nearest == 0.0).astype(np.float64), 1.0 / nearest ** (1.0 / power))
    return weights / weights.sum(axis=1, keepdims=True)


@numba.njit(nogil=True, cache=True)
def _nearest(
    distances: np.ndarray, k: int, tie_rtol: float, order_distance: np.ndarray, order_index: np.ndarray
) -> tuple[int, bool]:  # pragma: no cover - numba
    """Sort the k + 1 nearest into ``order_distance`` and ``order_index``.

    Returns how many of the k there are and whether the k-th and (k+1)-th nearly tie.
    """
    kept = 0
    for t in range(distances.shape[0]):  # the k + 1 smallest, sorted, by insertion
        distance = distances[t]
        if kept == k + 1 and distance >= order_distance[k]:
            continue
        position = kept if kept < k + 1 else k
        while position > 0 and order_distance[position - 1] > distance:
            if position < k + 1:
                order_distance[position], order_index[position] = (
                    order_distance[position - 1],
                    order_index[position - 1],
                )
            position -= 1
        order_distance[position], order_index[position] = distance, t
        kept = min(kept + 1, k + 1)
    if kept <= k:
        return kept, False
    gap = order_distance[k] - order_distance[k - 1]
    return k, gap <= tie_rtol * max(order_distance[k], 1e-300)


@numba.njit(nogil=True, cache=True)
def _weighted_mean(
    targets: np.ndarray, order_index: np.ndarray, n_nearest: int, weights: np.ndarray, alike: bool, value: np.ndarray
) -> None:  # pragma: no cover - numba
    """Write the mean target of the n nearest (``order_index``) into ``value``: alike, or by ``weights``."""
    value[:] = 0.0
    total = 0.0
    for r in range(n_nearest):
        weight = 1.0 if alike else weights[r]
        total += weight
        for c in range(targets.shape[1]):
            value[c] += weight * targets[order_index[r], c]
    value /= total


@numba.njit(nogil=True, cache=True)
def _hybrid_weights(
    row: np.ndarray,
    background_row: np.ndarray,
    train: np.ndarray,
    player_of_column: np.ndarray,
    coalition: int,
    power: float,
    order_index: np.ndarray,
    n_nearest: int,
    weights: np.ndarray,
) -> None:  # pragma: no cover - numba
    """Write 1 / distance of the hybrid row to each of its n nearest into ``weights``.

    The distances are recomputed from the rows (the walk's running sums carry rounding); where some are at
    distance zero, 1 for those and 0 for the others (scikit-learn's rule).
    """
    at_zero = False
    for r in range(n_nearest):
        total = 0.0
        for j in range(train.shape[1]):
            value = row[j] if (coalition >> player_of_column[j]) & 1 else background_row[j]
            total += abs(value - train[order_index[r], j]) ** power
        weights[r] = total
        at_zero = at_zero or total == 0.0
    for r in range(n_nearest):
        if at_zero:
            weights[r] = 1.0 if weights[r] == 0.0 else 0.0
        else:
            weights[r] = 1.0 / weights[r] ** (1.0 / power)


@numba.njit(nogil=True, cache=True)
def _neighbor_table_kernel(
    rows: np.ndarray,
    background: np.ndarray,
    train: np.ndarray,
    targets: np.ndarray,
    player_of_column: np.ndarray,
    n_players: int,
    k: int,
    power: float,
    distance_weights: bool,
    tie_rtol: float,
    out: np.ndarray,
    ties: np.ndarray,
    tie_values: np.ndarray,
    n_ties: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    n_train, n_columns = train.shape
    n_outputs = targets.shape[1]
    n_coalitions = 1 << n_players
    base = np.empty(n_train)
    delta = np.empty((n_players, n_train))
    distances = np.empty(n_train)
    order_distance = np.empty(k + 1)
    order_index = np.empty(k + 1, dtype=np.int64)
    weights = np.empty(k)
    value = np.empty(n_outputs)
    for i in range(start, stop):
        for b in range(background.shape[0]):
            base[:] = 0.0
            delta[:] = 0.0
            for t in range(n_train):
                for j in range(n_columns):
                    from_z = abs(background[b, j] - train[t, j]) ** power
                    base[t] += from_z
                    delta[player_of_column[j], t] += abs(rows[i, j] - train[t, j]) ** power - from_z
            coalition = 0
            for step in range(n_coalitions):
                if step > 0:  # Gray code: one player changes
                    player = 0
                    while not (step >> player) & 1:
                        player += 1
                    coalition ^= 1 << player
                    joined = (coalition >> player) & 1
                if step % RESET_STEPS == 0:
                    for t in range(n_train):
                        total = base[t]
                        for q in range(n_players):
                            if (coalition >> q) & 1:
                                total += delta[q, t]
                        distances[t] = total
                elif joined:
                    for t in range(n_train):
                        distances[t] += delta[player, t]
                else:
                    for t in range(n_train):
                        distances[t] -= delta[player, t]
                n_nearest, tie = _nearest(distances, k, tie_rtol, order_distance, order_index)
                if distance_weights:  # from the hybrid row's exact distances (the running sums carry rounding)
                    hybrid = (rows[i], background[b], train, player_of_column, coalition, power)
                    _hybrid_weights(*hybrid, order_index, n_nearest, weights)
                _weighted_mean(targets, order_index, n_nearest, weights, not distance_weights, value)
                for c in range(n_outputs):
                    out[i, coalition, c] += value[c]
                if tie:
                    slot = n_ties[i]
                    n_ties[i] += 1
                    if slot < ties.shape[1]:
                        ties[i, slot, 0], ties[i, slot, 1] = b, coalition
                        for c in range(n_outputs):
                            tie_values[i, slot, c] = value[c]


def neighbor_table(
    train: np.ndarray,
    targets: np.ndarray,
    rows: np.ndarray,
    background: np.ndarray,
    player_of_column: np.ndarray,
    n_players: int,
    k: int,
    power: float,
    tie_rtol: float,
    ties_per_row: int = 64,
    distance_weights: bool = False,
) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Return each row's k-NN game summed over the background on all 2^p coalitions, and its near ties.

    Parameters
    ----------
    train : ndarray of shape (n_train, d)
        The model's training rows (in its input units).
    targets : ndarray of shape (n_train, n_outputs)
        What the k nearest are averaged over (a regressor's targets, a classifier's one-hot classes).
    rows : ndarray of shape (n, d)
    background : ndarray of shape (N, d)
    player_of_column : int ndarray of shape (d,)
    n_players : int
        p, at most 30.
    k : int
        Neighbours averaged.
    power : float
        q of the Minkowski distance (2: Euclidean, 1: Manhattan); the order of Σ |·|^q is the distance's.
    tie_rtol : float
        A coalition whose k-th and (k+1)-th distances differ by at most this, relative, is a near tie.
    ties_per_row : int, default=64
        Near ties first recorded per explained row; a row with more is computed again, alone, with room
        for all of them.
    distance_weights : bool, default=False
        Weigh the k nearest by 1 / distance (training rows at distance zero, if any, alone and alike).

    Returns
    -------
    sums : ndarray of shape (n, 2^p, n_outputs)
        Σ over the background rows of the k-NN prediction of each hybrid row (entry ``c``: the
        coalition of the set bits of ``c``), each row's sum in one fixed order, alone or in a batch.
    ties : list of int ndarray of shape (m_i, 2)
        Per explained row, the (background row, coalition) of its near ties.
    tie_values : list of ndarray of shape (m_i, n_outputs)
        The predictions of those near ties in ``sums`` (the caller replaces them by the model's).

    Examples
    --------
    Two training rows on one column, k = 1: the hybrid takes x's column 0 or z's.

    >>> sums, ties, _ = neighbor_table(np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[0.0], [10.0]]),
    ...                                np.array([[0.9, 0.0]]), np.array([[0.1, 0.0]]), np.arange(2), 2, 1, 2.0,
    ...                                1e-9)
    >>> sums[0, :, 0].tolist(), len(ties[0])
    ([0.0, 10.0, 0.0, 10.0], 0)
    """
    if not 0 <= n_players <= 30:
        raise ValueError(f"n_players={n_players}: the table of 2^p coalitions takes p <= 30.")
    arrays = (
        np.ascontiguousarray(train, dtype=np.float64),
        np.ascontiguousarray(targets, dtype=np.float64),
        np.ascontiguousarray(background, dtype=np.float64),
        np.ascontiguousarray(player_of_column, dtype=np.int64),
    )
    rows = np.ascontiguousarray(rows, dtype=np.float64)

    def sums_of(some_rows: np.ndarray, capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        settings = (float(power), bool(distance_weights), tie_rtol, capacity)
        return _neighbor_sums(some_rows, *arrays, n_players, k, *settings)

    sums, ties, tie_values, n_ties = sums_of(rows, ties_per_row)
    row_ties = [ties[i, : n_ties[i]] for i in range(rows.shape[0])]
    row_values = [tie_values[i, : n_ties[i]] for i in range(rows.shape[0])]
    for i in np.flatnonzero(n_ties > ties_per_row):  # rare: rows with many near ties (duplicated values)
        again, more, values, _ = sums_of(rows[i : i + 1], int(n_ties[i]))
        sums[i], row_ties[i], row_values[i] = again[0], more[0], values[0]
    return sums, row_ties, row_values


def _neighbor_sums(
    rows: np.ndarray,
    train: np.ndarray,
    targets: np.ndarray,
    background: np.ndarray,
    players: np.ndarray,
    n_players: int,
    k: int,
    power: float,
    distance_weights: bool,
    tie_rtol: float,
    capacity: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Run the kernel over ``rows`` with room for ``capacity`` near ties per row; return them and their counts."""
    n, n_outputs = rows.shape[0], targets.shape[1]
    sums = np.zeros((n, 1 << n_players, n_outputs))
    ties = np.zeros((n, capacity, 2), dtype=np.int64)
    tie_values = np.zeros((n, capacity, n_outputs))
    n_ties = np.zeros(n, dtype=np.int64)

    def call(start: int, stop: int) -> None:
        _neighbor_table_kernel(
            rows,
            background,
            train,
            targets,
            players,
            n_players,
            k,
            power,
            distance_weights,
            tie_rtol,
            sums,
            ties,
            tie_values,
            n_ties,
            start,
            stop,
        )

    run_ranges(call, n, 1, ranges_per_thread=4)
    return sums, ties, tie_values, n_ties
