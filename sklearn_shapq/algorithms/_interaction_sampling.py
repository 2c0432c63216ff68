"""Unbiased estimates of pairwise interactions (SII, STII) of any game, from coalitions shared by every pair.

Every coalition T enters the pair index of every pair (i, j) with a weight that depends only on
|T| and |T ∩ {i, j}| (the discrete derivative written out on coalitions):

    I_ij = Σ_T γ_ij(T) v(T),  γ_ij(T) = c_t + (b_t − c_t)(x_i + x_j) + (a_t − 2 b_t + c_t) x_i x_j,

with x the indicator of T, t = |T|, a_t = w(t − 2), b_t = −w(t − 1), c_t = w(t) (zero outside
0 … d − 2) and w(s) the index's weight of a derivative at a coalition of size s:
s! (d − s − 2)! / (d − 1)! for SII, 2 / (d C(d − 1, s)) for STII. So one table of sampled
coalitions serves all d (d − 1) / 2 pairs at once as matrix products (SHAP-IQ's sample reuse).

The estimator (:func:`sampled_pair_interactions`):

- The border sizes 0 … k and d − k … d are enumerated (k ≥ 1, as large as the budget allows
  while leaving sampled units: :func:`pair_design`; SHAP-IQ's and KernelSHAP-IQ's border trick):
  their part of the sum is exact.
- They also give, at no further cost, a surrogate g fixed by the game (no draws), so subtracting
  it keeps the estimate unbiased: the game's pairs are those of g, in closed form, plus those of
  the residual r = v − g, estimated. With k = 1, g is additive, g(T) = v(∅) + Σ_{u∈T} β_u with
  β_u = ½ [(v({u}) − v(∅)) + (v(N) − v(N∖{u}))]: its pairs are zero and it removes the main
  effects from the sampled terms. With k ≥ 2, g is of order 2,
  g(T) = v(∅) + Σ_{u∈T} β_u + Σ_{{u,v}⊆T} β_uv, from the pair's derivatives at the bottom,
  D⁻ = v({u,v}) − v({u}) − v({v}) + v(∅), and at the top, D⁺ = v(N) − v(N∖{u}) − v(N∖{v}) +
  v(N∖{u,v}): β_uv = minmod(D⁻, D⁺) (the one nearer zero when they agree in sign, else zero),
  and β_u = ½ [(v({u}) − v(∅)) + (v(N) − v(N∖{u}))] − ½ Σ_v β_uv (g's slopes at the bottom and
  the top average those of v). g's derivative of pair uv is β_uv at every coalition, and the
  weights of SII and of Shapley–Taylor each sum to one, so g's pair index is β_uv; the sampled
  terms keep what varies across sizes. A game of order 2 (D⁻ = D⁺) is then its surrogate: exact,
  with zero standard errors. Measured (``benchmarks/bench_interactions.py``, d = 10, 200 and 500
  evaluations): on games split by background rows the limited pairs had 0.6-0.9x the error of
  the additive g and 0.7-0.9x that of β_uv = ½ (D⁻ + D⁺), which lost to the additive g on an
  MLP (a pair's derivative changing sign between the bottom and the top).
- The middle sizes k + 1 … d − k − 1 (M of them) are sampled: a unit draws a size uniformly
  (q(T) = 1 / (M C(d, t)), nearly proportional to Σ_ij |γ_ij(T)|, which is flat in t) and a
  uniform coalition T of that size, and evaluates T and its complement (q(T) = q(N∖T)); the
  unit's term Z = ½ [r(T) γ(T) + r(N∖T) γ(N∖T)] / q(T) has expectation Σ_{middle T} γ r
  exactly. The units of a game are i.i.d., so the standard error of their mean is the sample
  standard deviation / √n, with n − 1 degrees of freedom.
- For SII the row sums Σ_{j≠i} SII_ij = (v(N) − v(N∖{i})) − (v({i}) − v(∅)) depend on the borders
  alone, and the estimate's row sums are exact (each term beyond sizes 0, 1, d − 1 and d sums to
  zero along a row).

Draws are addressed by a game's key alone (:func:`~sklearn_shapq.samplers.keyed_uniforms`), so a
game gets the same estimate in any block.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln

from sklearn_shapq.samplers import keyed_uniforms

PAIR_INDICES = ("SII", "STII")
"""The pair indices :func:`sampled_pair_interactions` estimates."""

MIN_UNITS = 8
"""Sampled units :func:`pair_design` leaves at least before it enumerates another border size."""


@dataclass
class PairEstimate:
    """Pair estimates of a block of B games.

    Attributes
    ----------
    pairs : array of shape (B, p, p, n_outputs)
        The pair index (zero diagonal), symmetric.
    pairs_stderr : array of shape (B, p, p, n_outputs)
        Standard errors of ``pairs`` (0 when enumerated).
    row_sums_stderr : array of shape (B, p, n_outputs)
        Standard errors of Σ_{j≠i} pairs_ij (the pairs of a row are correlated: they share coalitions).
    singles : array of shape (B, p, n_outputs)
        v({i}) − v(∅), exact (the Möbius singletons, STII's diagonal).
    dof : ndarray of shape (B,)
        Degrees of freedom of the standard errors (inf when enumerated).
    n_evals : ndarray of shape (B,)
        Evaluations of each game, v(∅) and v(N) included.
    """

    pairs: Any
    pairs_stderr: Any
    row_sums_stderr: Any
    singles: Any
    dof: Any
    n_evals: Any


def minimum_pair_evals(n_players: int) -> int:
    """Fewest evaluations :func:`sampled_pair_interactions` takes: the 2d + 2 border coalitions and two units."""
    return 2 * n_players + 6


def pair_design(max_evals: int, n_players: int) -> tuple[int, int]:
    """Return (k, n_units): the border sizes enumerated at each end and the sampled units that ``max_evals`` leave.

    k is the largest border with sizes left to sample (k ≤ (d − 2) / 2) whose coalitions, 2 +
    2 Σ_{s=1…k} C(d, s) with ∅ and N, leave at least :data:`MIN_UNITS` units (two evaluations
    each); k = 1 always (``max_evals`` ≥ :func:`minimum_pair_evals`).

    Examples
    --------
    >>> pair_design(100, 10), pair_design(200, 10), pair_design(500, 10)
    ((1, 39), (2, 44), (3, 74))
    """
    d, border = n_players, 1
    while border + 1 <= (d - 2) // 2 and border_evals(border + 1, d) + 2 * MIN_UNITS <= max_evals:
        border += 1
    return border, max(0, (int(max_evals) - border_evals(border, d)) // 2)


def border_evals(border: int, n_players: int) -> int:
    """Return the evaluations of the enumerated sizes 0 … k and d − k … d: 2 + 2 Σ_{s=1…k} C(d, s).

    Examples
    --------
    >>> border_evals(1, 10), border_evals(2, 10)
    (22, 112)
    """
    return 2 + 2 * sum(math.comb(n_players, s) for s in range(1, border + 1))


def border_coalitions(border: int, n_players: int) -> np.ndarray:
    """Return the coalitions of sizes 1 … k, size by size, players in lexicographic order: (Σ C(d, s), d) bool.

    Their complements are those of sizes d − k … d − 1.

    Examples
    --------
    >>> border_coalitions(2, 3).astype(int).tolist()
    [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]]
    """
    d = n_players
    blocks = []
    for size in range(1, border + 1):
        members = np.array(list(itertools.combinations(range(d), size)), dtype=np.intp).reshape(-1, size)
        block = np.zeros((len(members), d), dtype=bool)
        np.put_along_axis(block, members, True, axis=1)
        blocks.append(block)
    return np.concatenate(blocks)


def _log_pair_weight(sizes: np.ndarray, n_players: int, index: str) -> np.ndarray:
    """Return log w(s) of the derivatives at coalitions of sizes ``sizes`` (all in 0 … d − 2)."""
    d = n_players
    s = np.asarray(sizes, dtype=np.float64)
    if index == "SII":  # s! (d − s − 2)! / (d − 1)!
        return gammaln(s + 1) + gammaln(d - s - 1) - gammaln(d)
    # STII: 2 / (d C(d − 1, s))
    return np.log(2.0 / d) - (gammaln(d) - gammaln(s + 1) - gammaln(d - s))


def coalition_weights(sizes: np.ndarray, n_players: int, index: str, log_scale: Any = 0.0) -> np.ndarray:
    """(a_t, b_t, c_t) · exp(log_scale) of coalitions of sizes ``sizes``: shape (3, len(sizes)).

    a_t = w(t − 2) (both players of a pair in T), b_t = −w(t − 1) (one), c_t = w(t) (neither), zero
    where the size is out of range. ``log_scale`` (broadcast with ``sizes``) multiplies them in
    logs, so that large importance weights 1/q(T) times small w never overflow.

    Examples
    --------
    >>> coalition_weights(np.array([0, 1, 2, 3]), 3, "SII").round(3).tolist()
    [[0.0, 0.0, 0.5, 0.5], [0.0, -0.5, -0.5, 0.0], [0.5, 0.5, 0.0, 0.0]]
    """
    d = n_players
    t = np.asarray(sizes, dtype=np.int64)
    scale = np.broadcast_to(np.asarray(log_scale, dtype=np.float64), t.shape)
    out = np.zeros((3,) + t.shape)
    for row, shift, sign in ((0, 2, 1.0), (1, 1, -1.0), (2, 0, 1.0)):
        s = t - shift
        valid = (s >= 0) & (s <= d - 2)
        safe = np.where(valid, s, 0)
        out[row] = np.where(valid, sign * np.exp(_log_pair_weight(safe, d, index) + scale), 0.0)
    return out


def pair_sums(masks: Any, alpha: Any, beta: Any, delta: Any, xp: Any = np) -> Any:
    """Σ_c [α_c + β_c (x_ci + x_cj) + δ_c x_ci x_cj] for every (i, j), as matrix products.

    Parameters
    ----------
    masks : float array of shape (B, C, p)
        Indicators x of C coalitions of each of B games.
    alpha, beta, delta : arrays of shape (B, C, k)

    Returns
    -------
    array of shape (B, p, p, k)
        The diagonal holds the formula at i = j (callers overwrite it).

    Examples
    --------
    >>> x = np.array([[[1.0, 0.0], [1.0, 1.0]]])
    >>> one = np.ones((1, 2, 1))
    >>> pair_sums(x, 0 * one, 0 * one, one)[0, :, :, 0].tolist()
    [[2.0, 1.0], [1.0, 1.0]]
    """
    n_games, n_coalitions, p = masks.shape
    k = alpha.shape[2]
    flipped = masks.transpose(0, 2, 1)  # (B, p, C)
    constant = alpha.sum(axis=1)[:, None, None, :]
    linear = xp.matmul(flipped, beta)  # (B, p, k)
    weighted = (masks[:, :, :, None] * delta[:, :, None, :]).reshape(n_games, n_coalitions, p * k)
    quadratic = xp.matmul(flipped, weighted).reshape(n_games, p, p, k)
    return constant + linear[:, :, None, :] + linear[:, None, :, :] + quadratic


def unit_coalitions(keys: np.ndarray, n_units: int, n_players: int, border: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Draw the sampled coalitions of games ``keys`` (B,): masks (B, n_units, p) and sizes (B, n_units).

    A unit's size is uniform on the middle sizes k + 1 … d − k − 1 (k = ``border``) and its
    coalition uniform among those of that size (the first t players of a uniform ordering); unit u
    of a game takes the draws u (d + 1) … u (d + 1) + d of the game's key, whatever the other games.

    Examples
    --------
    >>> masks, sizes = unit_coalitions(np.array([7], dtype=np.uint64), 3, 6)
    >>> masks.shape, bool((masks.sum(axis=2) == sizes).all()), bool(((2 <= sizes) & (sizes <= 4)).all())
    ((1, 3, 6), True, True)
    """
    d, middle = n_players, n_players - 2 * border - 1
    counters = np.broadcast_to(np.arange(n_units * (d + 1), dtype=np.int64), (len(keys), n_units * (d + 1)))
    uniforms = keyed_uniforms(np.asarray(keys, dtype=np.uint64), counters).reshape(len(keys), n_units, d + 1)
    sizes = border + 1 + np.minimum((uniforms[:, :, 0] * middle).astype(np.int64), middle - 1)
    ranks = np.argsort(np.argsort(uniforms[:, :, 1:], axis=2, kind="stable"), axis=2, kind="stable")
    return ranks < sizes[:, :, None], sizes


def sampled_pair_interactions(
    game: Any, games: Any, keys: np.ndarray, n_units: int, index: str = "SII", border: int = 1
) -> PairEstimate:
    """Unbiased estimates of the pair index of games ``games`` (B,) of ``game``, with standard errors.

    Costs :func:`border_evals` (the enumerated sizes, v(∅) and v(N) included) and 2 ``n_units``
    evaluations per game (module docstring: the enumerated borders, the surrogate fixed by them,
    complementary units of uniform size in the middle).

    Parameters
    ----------
    game : Game
        Any game with ``grid``, ``empty_value`` and ``full_value`` (d = ``game.n_players`` ≥ 4).
    games : int array of shape (B,)
    keys : uint64 ndarray of shape (B,)
        The games' keys; a game's draws depend on its key alone.
    n_units : int
        Complementary pairs of sampled coalitions per game (at least 2).
    index : {"SII", "STII"}, default="SII"
    border : int, default=1
        The sizes 0 … ``border`` and d − ``border`` … d are enumerated (1 ≤ border ≤ (d − 2) / 2;
        :func:`pair_design` picks it from a budget); from 2 on, the surrogate is of order 2.

    Returns
    -------
    PairEstimate

    Examples
    --------
    >>> from sklearn_shapq.games import TableGame
    >>> table = np.random.default_rng(0).normal(size=16)  # a game of 4 players
    >>> estimate = sampled_pair_interactions(TableGame(table), np.array([0]), np.array([1], dtype=np.uint64), 8)
    >>> estimate.pairs.shape, estimate.dof
    ((1, 4, 4, 1), array([7.]))

    The row sums Σ_j SII_ij = (v(N) − v(N∖{i})) − (v({i}) − v(∅)) come out exact:

    >>> singles = 1 << np.arange(4)
    >>> exact = table[15] - table[15 - singles] - table[singles] + table[0]
    >>> bool(np.allclose(estimate.pairs[0, :, :, 0].sum(1), exact))
    True
    """
    if index not in PAIR_INDICES:
        raise ValueError(f"index must be one of {PAIR_INDICES}; got {index!r}.")
    backend = game.backend
    xp = backend.xp
    d = game.n_players
    if d < 4 or n_units < 2:
        raise ValueError(f"Sampled pairs need d >= 4 players and 2 units; got d={d}, n_units={n_units}.")
    if not 1 <= border <= (d - 2) // 2:
        raise ValueError(f"border must lie in [1, {(d - 2) // 2}] for d={d}; got {border}.")
    games_host = np.asarray(backend.to_numpy(games), dtype=np.int64)
    n_games = len(games_host)
    games_device = backend.to_device(games_host)
    empty = game.empty_value[games_device]  # (B, k)
    full = game.full_value[games_device]

    unit_masks, unit_sizes = unit_coalitions(keys, n_units, d, border)
    low = border_coalitions(border, d)  # sizes 1 … k; their complements: sizes d − k … d − 1
    n_low = len(low)
    enumerated = np.concatenate([low, ~low])
    masks = np.concatenate(
        [np.broadcast_to(enumerated, (n_games, 2 * n_low, d)), unit_masks, ~unit_masks], axis=1
    )  # (B, 2 C + 2n, d)
    values = game.grid(games_device, backend.to_device(masks))  # (B, 2 C + 2n, k)
    masks_float = backend.to_device(masks.astype(np.float64))
    singles = values[:, :d] - empty[:, None, :]  # v({u}) − v(∅)
    lasts = full[:, None, :] - values[:, n_low : n_low + d]  # v(N) − v(N ∖ {u})
    slopes = 0.5 * (singles + lasts)  # the surrogate's β_u
    surrogate = empty[:, None, :] + xp.matmul(masks_float, slopes)  # g(T) of every evaluated coalition
    surrogate_full = empty + slopes.sum(axis=1)
    surrogate_pairs = None
    if border >= 2:  # β_uv: the pair's derivatives at the bottom and the top, limited (minmod)
        first, second = np.triu_indices(d, 1)  # the order of the size-2 coalitions
        bottom = values[:, d : d + len(first)] - empty[:, None, :] - singles[:, first] - singles[:, second]
        top = lasts[:, first] + lasts[:, second] - (full[:, None, :] - values[:, n_low + d : n_low + d + len(first)])
        surrogate_pairs = xp.zeros((n_games, d, d, values.shape[2]))
        agree = bottom * top > 0.0
        surrogate_pairs[:, first, second] = xp.where(agree, xp.sign(bottom) * xp.minimum(abs(bottom), abs(top)), 0.0)
        surrogate_pairs[:, second, first] = surrogate_pairs[:, first, second]
        correction = -0.5 * surrogate_pairs.sum(axis=2)  # β_u less ½ Σ_v β_uv
        quadratic = xp.matmul(masks_float, surrogate_pairs.reshape(n_games, d, -1)).reshape(
            n_games, masks.shape[1], d, -1
        )
        surrogate = surrogate + xp.matmul(masks_float, correction) + 0.5 * (masks_float[..., None] * quadratic).sum(2)
        surrogate_full = surrogate_full + correction.sum(axis=1) + 0.5 * surrogate_pairs.sum(axis=(1, 2))
    residual = values - surrogate

    # the enumerated sizes (rows 0 … 2 C − 1 of the table) and N (r(∅) = 0)
    enumerated_sizes = enumerated.sum(axis=1)
    a, b, c = (backend.to_device(w) for w in coalition_weights(enumerated_sizes, d, index))
    border_residual = residual[:, : 2 * n_low]
    exact = pair_sums(
        masks_float[:, : 2 * n_low],
        border_residual * c[None, :, None],
        border_residual * (b - c)[None, :, None],
        border_residual * (a - 2 * b + c)[None, :, None],
        xp,
    )
    full_residual = full - surrogate_full  # r(N), weight a_d = w(d − 2) for every pair
    exact = exact + full_residual[:, None, None, :] * float(coalition_weights(np.array([d]), d, index)[0, 0])
    if surrogate_pairs is not None:  # g's own pairs
        exact = exact + surrogate_pairs

    # the sampled units: Z = ½ [r(T) γ(T) + r(N∖T) γ(N∖T)] / q(T), 1/q(T) = M C(d, t)
    middle = d - 2 * border - 1
    log_inverse_q = np.log(middle) + gammaln(d + 1) - gammaln(unit_sizes + 1) - gammaln(d - unit_sizes + 1)
    a1, b1, c1 = (backend.to_device(w) for w in coalition_weights(unit_sizes, d, index, log_inverse_q - np.log(2)))
    a2, b2, c2 = (backend.to_device(w) for w in coalition_weights(d - unit_sizes, d, index, log_inverse_q - np.log(2)))
    inside = residual[:, 2 * n_low : 2 * n_low + n_units]  # r(T)
    outside = residual[:, 2 * n_low + n_units :]  # r(N ∖ T)
    alpha = inside * c1[..., None] + outside * a2[..., None]
    beta = inside * (b1 - c1)[..., None] + outside * (b2 - a2)[..., None]
    delta = inside * (a1 - 2 * b1 + c1)[..., None] + outside * (a2 - 2 * b2 + c2)[..., None]
    x = masks_float[:, 2 * n_low : 2 * n_low + n_units]
    total = pair_sums(x, alpha, beta, delta, xp)
    # Z² has the same form: α², 2αβ + β² on (x_i + x_j), 2β² + 2αδ + 4βδ + δ² on x_i x_j (x binary)
    squares = pair_sums(
        x, alpha**2, 2 * alpha * beta + beta**2, 2 * beta**2 + 2 * alpha * delta + 4 * beta * delta + delta**2, xp
    )
    mean = total / n_units
    variance = xp.maximum(squares - total * mean, 0.0) / (n_units * (n_units - 1))
    # Σ_{j≠i} Z_ij of a unit: (d − 1) α + β t + x_i (β (d − 2) + δ (t − 1))
    t = backend.to_device(unit_sizes.astype(np.float64))[:, :, None]
    row_units = ((d - 1) * alpha + beta * t)[:, :, None, :] + x[:, :, :, None] * (beta * (d - 2) + delta * (t - 1.0))[
        :, :, None, :
    ]
    row_variance = row_units.var(axis=1, ddof=1) / n_units

    pairs = exact + mean
    diagonal = xp.arange(d)
    pairs[:, diagonal, diagonal] = 0.0
    variance[:, diagonal, diagonal] = 0.0
    return PairEstimate(
        pairs=pairs,
        pairs_stderr=xp.sqrt(variance),
        row_sums_stderr=xp.sqrt(row_variance),
        singles=singles,
        dof=np.full(n_games, n_units - 1.0),
        n_evals=np.full(n_games, border_evals(border, d) + 2 * n_units),
    )
