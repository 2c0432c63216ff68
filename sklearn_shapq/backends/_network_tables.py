"""Interventional games of multilayer perceptrons on all 2^p coalitions, from the layers' weights.

For one explained row x and one background row z, the first layer's input of the hybrid row of a
coalition S is a sum over the players: b + Σ_{i ∈ S} x_i W_i + Σ_{i ∉ S} z_i W_i (a player's columns
summed), or, for a kernel machine's distance units, Σ_{i ∈ S} ‖x_i − w‖² + Σ_{i ∉ S} ‖z_i − w‖² (sums of
non-negative terms, so a hybrid row at an anchor has u = 0 exactly, as the model's own distance). A
coalition is a set H of the high players and a set L of the :data:`BLOCK_PLAYERS` low ones: the sums over
every L are built once per pair of rows by doubling (the sets with player j are those without it, each
with j's term in, and the sets without it take j's term out), so the first layer of a block of coalitions
(one H, every L) is one addition per unit and coalition, and each later layer one matrix product over the
block. The raw scores of the 2^p
coalitions go through the output's link and are averaged over the background rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np
from scipy.spatial.distance import cdist
from threadpoolctl import threadpool_limits

from sklearn_shapq.backends._linked_trees import LINKS, NO_KNOTS, _apply_link
from sklearn_shapq.backends._threads import run_ranges

HIDDEN_ACTIVATIONS = ("identity", "logistic", "tanh", "relu")
"""The hidden layers' activations of scikit-learn's networks (its names), by code (their position)."""
KERNEL_PROFILES = ("gaussian", "matern_0.5", "matern_1.5", "matern_2.5", "rational_quadratic", "power")
"""A kernel machine's units: its kernel as a function of u, a squared scaled distance (the first five) or a dot
product plus a constant ("power": u^a). "gaussian" exp(−u/2); "matern_ν" Matérn's closed forms in r = √u;
"rational_quadratic" (1 + u/(2a))^(−a). The parameter a is the activation's."""
ACTIVATIONS = HIDDEN_ACTIVATIONS + KERNEL_PROFILES
"""Every activation the tables run, by code (their position)."""
BLOCK_PLAYERS = 8
"""The low players, whose 2^8 coalitions (with each set of the others) are a block: one matrix product per layer."""


def network_sums(
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    activation: str,
    inputs: np.ndarray,
    parameter: float = 0.0,
    distance: bool = False,
) -> np.ndarray:
    """Return the network's raw scores (n, k) on rows ``inputs`` (n, d): its last affine layer, before the link.

    ``activation`` one of :data:`ACTIVATIONS`, with its ``parameter`` (a kernel profile's); ``distance``: the first
    layer's input is the squared distance to each unit's weights, plus its bias (a kernel machine's distance units).

    Examples
    --------
    >>> weights, biases = (np.array([[1.0, -1.0]]), np.array([[2.0], [3.0]])), (np.zeros(2), np.array([0.5]))
    >>> network_sums(weights, biases, "relu", np.array([[1.0], [-2.0]])).tolist()
    [[2.5], [6.5]]
    """
    if distance:
        values = cdist(inputs, np.asarray(weights[0]).T, "sqeuclidean") + biases[0]
    else:
        values = inputs @ weights[0] + biases[0]
    code = ACTIVATIONS.index(activation)
    for weight, bias in zip(weights[1:], biases[1:], strict=True):  # the kernel's own activation, then the layer
        flat = np.ascontiguousarray(values).ravel()
        _activate_units(flat, flat.size, code, parameter, flat)
        values = flat.reshape(values.shape) @ weight + bias
    return values


@numba.njit(nogil=True, cache=True)
def _activate_units(
    values: np.ndarray, n_units: int, activation: int, parameter: float, out: np.ndarray
) -> None:  # pragma: no cover - numba
    """Write the activation (:data:`ACTIVATIONS`' code, its ``parameter``) of the first ``n_units`` values into ``out``.

    A kernel profile's squared distance is taken at least 0 (its rounding near an anchor).
    """
    if activation == 1:
        for u in range(n_units):
            out[u] = 1.0 / (1.0 + math.exp(-values[u]))
    elif activation == 2:  # by exp (faster than libm's tanh here): to 1e-16 absolute, as the model's layer adds
        for u in range(n_units):
            decay = math.exp(-2.0 * abs(values[u]))
            out[u] = math.copysign((1.0 - decay) / (1.0 + decay), values[u])
    elif activation == 3:
        for u in range(n_units):
            out[u] = max(values[u], 0.0)
    elif activation == 4:
        for u in range(n_units):
            out[u] = math.exp(-0.5 * max(values[u], 0.0))
    elif activation == 5:
        for u in range(n_units):
            out[u] = math.exp(-math.sqrt(max(values[u], 0.0)))
    elif activation == 6:
        for u in range(n_units):
            scaled = math.sqrt(3.0 * max(values[u], 0.0))
            out[u] = (1.0 + scaled) * math.exp(-scaled)
    elif activation == 7:
        for u in range(n_units):
            squared = 5.0 * max(values[u], 0.0)
            scaled = math.sqrt(squared)
            out[u] = (1.0 + scaled + squared / 3.0) * math.exp(-scaled)
    elif activation == 8:
        for u in range(n_units):
            out[u] = (1.0 + max(values[u], 0.0) / (2.0 * parameter)) ** -parameter
    elif activation == 9 and parameter == int(parameter) and 1 <= parameter <= 16:  # a degree: by products
        for u in range(n_units):
            power = values[u]
            for _ in range(int(parameter) - 1):
                power *= values[u]
            out[u] = power
    elif activation == 9:
        for u in range(n_units):
            out[u] = values[u] ** parameter
    else:
        for u in range(n_units):
            out[u] = values[u]


@numba.njit(nogil=True, cache=True)
def _network_table_kernel(
    rows: np.ndarray,
    background: np.ndarray,
    first_weight: np.ndarray,
    first_bias: np.ndarray,
    later_weights: np.ndarray,
    later_biases: np.ndarray,
    later_shapes: np.ndarray,
    activation: int,
    parameter: float,
    distance: bool,
    player_of_column: np.ndarray,
    n_players: int,
    link: int,
    log_odds: bool,
    clip: float,
    knots: np.ndarray,
    out: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    n_columns, n_units = first_weight.shape
    n_coalitions, n_outputs = 1 << n_players, out.shape[2]
    n_low = min(n_players, BLOCK_PLAYERS)
    block = 1 << n_low
    widest = n_units
    for layer in range(later_shapes.shape[0]):
        widest = max(widest, later_shapes[layer, 1])
    inside, outside = np.zeros((n_players, n_units)), np.zeros((n_players, n_units))
    shift = np.empty(n_units)
    low = np.empty((block, n_units))
    values, active = np.empty(block * widest), np.empty(block * widest)
    table = np.empty((n_coalitions, n_outputs))
    for i in range(start, stop):
        for b in range(background.shape[0]):
            inside[:] = 0.0
            outside[:] = 0.0
            for c in range(n_columns):  # each player's term, in S (the row's) and out of it (the background row's)
                player = player_of_column[c]
                for u in range(n_units):
                    if distance:
                        gap_in, gap_out = rows[i, c] - first_weight[c, u], background[b, c] - first_weight[c, u]
                        inside[player, u] += gap_in * gap_in
                        outside[player, u] += gap_out * gap_out
                    else:
                        inside[player, u] += rows[i, c] * first_weight[c, u]
                        outside[player, u] += background[b, c] * first_weight[c, u]
            low[0] = 0.0
            for j in range(n_low):  # the low players' sums by doubling: the sets with j, then those without
                half = 1 << j
                for r in range(half):
                    for u in range(n_units):
                        low[half + r, u] = low[r, u] + inside[j, u]
                        low[r, u] += outside[j, u]
            for high in range(n_coalitions >> n_low):
                shift[:] = first_bias
                for j in range(n_low, n_players):
                    terms = inside if high >> (j - n_low) & 1 else outside
                    for u in range(n_units):
                        shift[u] += terms[j, u]
                current = values[: block * n_units].reshape(block, n_units)
                for r in range(block):
                    for u in range(n_units):
                        current[r, u] = shift[u] + low[r, u]
                weight_at, bias_at = 0, 0
                for layer in range(later_shapes.shape[0]):  # the block's coalitions at once: a matrix product
                    n_in, n_out = later_shapes[layer, 0], later_shapes[layer, 1]
                    inputs = active[: block * n_in].reshape(block, n_in)
                    _activate_units(current.ravel(), block * n_in, activation, parameter, inputs.ravel())
                    current = values[: block * n_out].reshape(block, n_out)
                    np.dot(inputs, later_weights[weight_at : weight_at + n_in * n_out].reshape(n_in, n_out), current)
                    for r in range(block):
                        for o in range(n_out):
                            current[r, o] += later_biases[bias_at + o]
                    weight_at, bias_at = weight_at + n_in * n_out, bias_at + n_out
                table[high * block : (high + 1) * block] = current
            _apply_link(table, link, log_odds, clip, knots)
            for c in range(n_coalitions):
                for k in range(n_outputs):
                    out[i, c, k] += table[c, k]
        for c in range(n_coalitions):
            for k in range(n_outputs):
                out[i, c, k] /= background.shape[0]


def network_table(
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    activation: str,
    rows: np.ndarray,
    background: np.ndarray,
    player_of_column: np.ndarray,
    n_players: int,
    link: str,
    log_odds: bool = False,
    clip: float = 0.0,
    parameter: float = 0.0,
    knots: np.ndarray | None = None,
    distance: bool = False,
) -> np.ndarray:
    """Return each row's interventional game on all 2^p coalitions: mean_z link(network(x_S, z_{N∖S})).

    Parameters
    ----------
    weights, biases : sequence of ndarray
        Each layer's (inputs, units) matrix and (units,) intercepts; the last gives the raw score.
    activation : str
        The hidden layers' (:data:`ACTIVATIONS`); ``parameter``: a kernel profile's; ``distance``: the first layer's
        input is the squared distance to each unit's weights plus its bias (:func:`network_sums`).
    rows : ndarray of shape (n, d)
    background : ndarray of shape (N, d)
    player_of_column : int ndarray of shape (d,)
        Each column's player (a feature group's columns share one).
    n_players : int
        p: coalition S is the integer Σ_{j ∈ S} 2^j.
    link : {"identity", "sigmoid", "softmax", "exp", "interp"}
        From the raw score to the output; ``log_odds``: then the log-odds of the result clipped to
        [``clip``, 1 − ``clip``]; ``knots``: the "interp" link's (2, K) increasing x and their y.

    Returns
    -------
    ndarray of shape (n, 2^p, k)

    Notes
    -----
    Each explained row is one thread's, its background rows in order: a row's game is the same bits alone or
    in any batch.

    Examples
    --------
    >>> weights, biases = (np.array([[1.0], [1.0]]), np.array([[1.0]])), (np.zeros(1), np.zeros(1))
    >>> network_table(weights, biases, "relu", np.array([[1.0, 2.0]]), np.zeros((1, 2)), np.arange(2), 2,
    ...               "identity")[0, :, 0].tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    n_layers = len(weights)
    later_shapes = np.array([w.shape for w in weights[1:]], dtype=np.int64).reshape(n_layers - 1, 2)
    later_weights = np.concatenate([np.asarray(w, dtype=np.float64).ravel() for w in weights[1:]] or [np.zeros(0)])
    later_biases = np.concatenate([np.asarray(b, dtype=np.float64) for b in biases[1:]] or [np.zeros(0)])
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    background = np.ascontiguousarray(background, dtype=np.float64)
    out = np.zeros((rows.shape[0], 1 << n_players, weights[-1].shape[1]))
    if background.shape[0] == 0:
        return out

    def call(start: int, stop: int) -> None:
        _network_table_kernel(
            rows,
            background,
            np.ascontiguousarray(weights[0], dtype=np.float64),
            np.asarray(biases[0], dtype=np.float64),
            later_weights,
            later_biases,
            later_shapes,
            ACTIVATIONS.index(activation),
            float(parameter),
            distance,
            np.asarray(player_of_column, dtype=np.int64),
            n_players,
            LINKS.index(link),
            log_odds,
            clip,
            NO_KNOTS if knots is None else np.ascontiguousarray(knots, dtype=np.float64),
            out,
            start,
            stop,
        )

    with threadpool_limits(1, "blas"):  # the kernel's threads each run their own matrix products
        run_ranges(call, rows.shape[0])
    return out
