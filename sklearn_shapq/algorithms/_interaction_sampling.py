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
- Regression adjustment (n ≥ :data:`MIN_UNITS`; :func:`regression_players`), leaving each unit
  out: for unit u, an order-2 polynomial h₋ᵤ is fitted by ridge regression to r at the enumerated
  coalitions and at every other unit, the middle sizes' share of h₋ᵤ's pairs is exact (its
  coefficients of x_u x_v less its enumerated share), and unit u estimates that of r − h₋ᵤ. h₋ᵤ
  never sees unit u's draws, so each unit's term is unbiased, and so is their mean. One fit on all
  units gives every h₋ᵤ by the leave-one-out identities of ridge regression (one solve per game).
  The fit has every main effect and the pairs of m players: all d where 1 + d + d (d − 1) / 2
  coefficients fit in :data:`MAX_REGRESSION_FEATURES` (d ≤ 32), else the m with the largest slopes
  |β_u|. Its ridge prior lets a pair's coefficient grow with its players' slopes (weak heredity:
  :func:`_pair_penalties`). Slopes and selection are fixed by the enumerated borders, which are
  exact, so they are no draw and the estimate stays unbiased; the pairs not fitted are left to the
  units. Variance: that of the units' terms over n, widened by :data:`REGRESSION_STDERR_WIDENING`
  (the fits vary with the other units' draws), with n − 1 degrees of freedom. Measured
  (``benchmarks/bench_interactions.py``): against four folds of cross-fitting and one ridge for every
  coefficient, 0.57-0.92x the error at 10d-20d (d = 10, 30 and 100), about the same at 50d.
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

MIN_UNITS = 16
"""Fewest sampled units of the regression adjustment (fewer left 95% intervals covering 89% on a
test game); :func:`pair_design` enumerates another border size only while this many units remain
(a larger border without the regression lost to a smaller one with it).
"""

MAX_REGRESSION_FEATURES = 529
"""Most coefficients of the regression's order-2 fit per game (all pairs at d = 32):
1 + d main terms and the pairs of the players it selects (:func:`regression_players`)."""

RIDGE_PER_ROW = 3e-4
"""Ridge penalty of the order-2 fit, per fitted coalition (features are 0/1), times each coefficient's
factor (:func:`_pair_penalties`): of 1e-3, 3e-4 and 1e-4 on ``benchmarks/bench_interactions.py --wide``
(d = 10 and 30, 10d-50d), the lowest error in 5 of 9 cells and within 6% of the lowest in all."""

PAIR_RIDGE_FACTOR = 5.0
"""Ridge factor of a pair's coefficient between two players of average border slopes (scaled by
1 / √(s_u s_v), :func:`_pair_penalties`): of 1, 2, 3, 5, 10, 30 and 100 (s's power 0.25 to 1) at
d = 30 (``--wide``, 10d and 20d), 2-10 with the power 0.5 the lowest, within 2%."""

MAIN_RIDGE_FACTOR = 0.1
"""Ridge factor of a main effect's coefficient (the residual's, after the border surrogate): 0.03-0.3
had about the same error at d = 30, 3 and 10 had 8% and 45% more."""

REGRESSION_STDERR_WIDENING = 1.3
"""Factor on the regression-adjusted standard errors, which hold the fits fixed (and leave out how the
units' fits differ): 95% intervals covered 89-94% of the pairs without it and 95-98% with it on the
test games at d = 8 (``tests/explainers/test_permutation_interactions.py``)."""


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
        Degrees of freedom of the standard errors: n_units − 1.
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
    >>> pair_design(130, 10)  # border 2 would leave 9 units, too few for the regression
    (1, 54)
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


def regression_players(n_players: int, n_units: int) -> int:
    """Return m, the players whose pairs the regression adjustment fits (0: no regression).

    The fit has 1 + d + m (m − 1) / 2 coefficients, at most :data:`MAX_REGRESSION_FEATURES`: m = d
    where all pairs fit (d ≤ 32), else the largest m that does (at least 2), given at least
    :data:`MIN_UNITS` units. The ridge keeps a fit of more coefficients than evaluations stable, and
    it did better so: at d = 30 with 10d evaluations, all 435 pairs had 0.87x the error of the
    pairs of the 23 players that as many coefficients as evaluations allow
    (``benchmarks/bench_interactions.py --wide``).

    Examples
    --------
    >>> regression_players(10, 39), regression_players(30, 119), regression_players(100, 399)
    (10, 30, 29)
    >>> regression_players(10, 15)  # too few units
    0
    """
    d = n_players
    room = MAX_REGRESSION_FEATURES - 1 - d
    if n_units < MIN_UNITS or room < 1:
        return 0
    m = int((1 + math.isqrt(1 + 8 * room)) // 2)  # the largest m with m (m − 1) / 2 <= room
    return min(m, d)


def regression_adjusted(n_players: int, n_units: int) -> bool:
    """Whether :func:`sampled_pair_interactions` adjusts the middle sizes by the order-2 regression."""
    return regression_players(n_players, n_units) > 0


def sampled_pair_bytes(n_players: int, border: int, n_units: int, n_outputs: int) -> int:
    """Bytes per game :func:`sampled_pair_interactions` holds at once: its coalitions, values and products, its fit.

    Examples
    --------
    >>> sampled_pair_bytes(10, 1, 8, 1) < sampled_pair_bytes(10, 1, 16, 1)  # 16 units: the regression too
    True
    """
    d, k = n_players, n_outputs
    coalitions = border_evals(border, d) + 2 * n_units
    total = 8 * coalitions * (2 * d + 4 * k + d * k) + 64 * d * d * k
    m = regression_players(d, n_units)
    if m:  # the units' features (and their stacked copy), A⁻¹ Uᵀ and its copy by unit, the enumerated ones, the system
        n_features = 1 + d + m * (m - 1) // 2
        total += 8 * ((8 * n_units + coalitions) * n_features + 2 * n_features * n_features)
    return total


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
    complementary units of uniform size in the middle, the regression adjustment where
    :func:`regression_adjusted`: one ridge solve of 1 + d + m (m − 1) / 2 coefficients per game, with
    as many right sides again and 2 ``n_units``, m from :func:`regression_players`).

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
    surrogate, surrogate_full, surrogate_pairs = _border_surrogate(
        values, singles, lasts, empty, full, masks_float, border, n_low, xp
    )
    residual = values - surrogate
    full_residual = full - surrogate_full

    # the enumerated sizes (rows 0 … 2 C − 1 of the table), N, and ∅ (r(∅) = 0)
    enumerated_sizes = enumerated.sum(axis=1)
    exact = _enumerated_pairs(
        masks_float[:, : 2 * n_low], enumerated_sizes, residual[:, : 2 * n_low], 0.0 * empty, full_residual, index, xp
    )
    if surrogate_pairs is not None:  # g's own pairs
        exact = exact + surrogate_pairs
    units = _Units(
        masks_float[:, 2 * n_low : 2 * n_low + n_units],
        residual[:, 2 * n_low : 2 * n_low + n_units],
        residual[:, 2 * n_low + n_units :],
        unit_sizes,
        border,
    )
    n_selected = regression_players(d, n_units)
    if n_selected:
        selected = None if n_selected == d else _largest_slopes(singles, lasts, n_selected, xp)
        middle, variance, row_variance = _leave_one_out_middle(
            units,
            enumerated,
            residual[:, : 2 * n_low],
            full_residual,
            index,
            xp,
            _pair_penalties(singles, lasts, selected, xp),
            selected,
        )
        dof = n_units - 1.0
    else:
        middle, variance, row_variance = _unit_moments(units, index, xp)
        dof = n_units - 1.0

    pairs = exact + middle
    diagonal = xp.arange(d)
    pairs[:, diagonal, diagonal] = 0.0
    variance[:, diagonal, diagonal] = 0.0
    return PairEstimate(
        pairs=pairs,
        pairs_stderr=xp.sqrt(variance),
        row_sums_stderr=xp.sqrt(row_variance),
        singles=singles,
        dof=np.full(n_games, dof),
        n_evals=np.full(n_games, border_evals(border, d) + 2 * n_units),
    )


def _border_surrogate(
    values: Any, singles: Any, lasts: Any, empty: Any, full: Any, masks_float: Any, border: int, n_low: int, xp: Any
) -> tuple[Any, Any, Any]:
    """Return g at every evaluated coalition (B, C, k), g(N) (B, k) and g's pairs (B, d, d, k), None if additive.

    g is fixed by the enumerated sizes (module docstring): additive for ``border`` 1, of order 2
    (minmod of the bottom and top pair derivatives) from 2. ``singles`` are v({u}) − v(∅) and
    ``lasts`` v(N) − v(N ∖ {u}), (B, d, k) each.
    """
    d = masks_float.shape[2]
    slopes = 0.5 * (singles + lasts)
    surrogate = empty[:, None, :] + xp.matmul(masks_float, slopes)
    surrogate_full = empty + slopes.sum(axis=1)
    if border < 2:
        return surrogate, surrogate_full, None
    first, second = (xp.asarray(i) for i in np.triu_indices(d, 1))  # the order of the size-2 coalitions
    bottom = values[:, d : d + len(first)] - empty[:, None, :] - singles[:, first] - singles[:, second]
    top = lasts[:, first] + lasts[:, second] - (full[:, None, :] - values[:, n_low + d : n_low + d + len(first)])
    pairs = xp.zeros((values.shape[0], d, d, values.shape[2]))
    agree = bottom * top > 0.0
    pairs[:, first, second] = xp.where(agree, xp.sign(bottom) * xp.minimum(abs(bottom), abs(top)), 0.0)
    pairs[:, second, first] = pairs[:, first, second]
    correction = -0.5 * pairs.sum(axis=2)  # β_u less ½ Σ_v β_uv
    surrogate = surrogate + xp.matmul(masks_float, correction) + _quadratic(masks_float, pairs, xp)
    surrogate_full = surrogate_full + correction.sum(axis=1) + 0.5 * pairs.sum(axis=(1, 2))
    return surrogate, surrogate_full, pairs


def _largest_slopes(singles: Any, lasts: Any, m: int, xp: Any) -> Any:
    """Return the m players (B, m), ascending, of the largest slopes Σ_k |β_u| of each game (ties: lower index).

    β_u = ½ [(v({u}) − v(∅)) + (v(N) − v(N ∖ {u}))], from the enumerated borders: exact values, so
    the choice is the same whatever the draws.
    """
    size = abs(singles + lasts).sum(axis=2)  # 2 Σ_k |β_u|: the same order
    return xp.sort(xp.argsort(-size, axis=1, kind="stable")[:, :m], axis=1)


def _quadratic(masks_float: Any, pairs: Any, xp: Any) -> Any:
    """Σ_{u<v} β_uv x_u x_v of coalitions (B, C, d) for symmetric β (B, d, d, k) with a zero diagonal: (B, C, k)."""
    n_games, n_coalitions, d = masks_float.shape
    spread = xp.matmul(masks_float, pairs.reshape(n_games, d, -1)).reshape(n_games, n_coalitions, d, -1)
    return 0.5 * (masks_float[..., None] * spread).sum(axis=2)


def _enumerated_pairs(
    masks_float: Any, sizes: np.ndarray, at_masks: Any, at_empty: Any, at_full: Any, index: str, xp: Any
) -> Any:
    """Σ_T γ_ij(T) f(T) over the enumerated coalitions (B, C, d) of ``sizes`` (C,), ∅ and N: (B, d, d, k).

    ``at_masks`` (B, C, k), ``at_empty`` and ``at_full`` (B, k) are f there; the diagonal is meaningless.
    """
    d = masks_float.shape[2]
    a, b, c = (xp.asarray(w)[None, :, None] for w in coalition_weights(sizes, d, index))
    total = pair_sums(masks_float, at_masks * c, at_masks * (b - c), at_masks * (a - 2 * b + c), xp)
    ends = coalition_weights(np.array([0, d]), d, index)  # c_0 (neither player in ∅), a_d (both in N)
    return total + (float(ends[2, 0]) * at_empty + float(ends[0, 1]) * at_full)[:, None, None, :]


@dataclass
class _Units:
    """The sampled units of a block: indicators x (B, n, d), r(T) and r(N ∖ T) (B, n, k), sizes t (B, n)."""

    x: Any
    inside: Any
    outside: Any
    sizes: np.ndarray
    border: int


def _unit_terms(units: _Units, index: str, xp: Any, inside: Any = None, outside: Any = None) -> tuple[Any, Any, Any]:
    """(α, β, δ) (B, n, k) of each unit's term Z = ½ [r(T) γ(T) + r(N∖T) γ(N∖T)] / q(T), 1/q(T) = M C(d, t).

    ``inside`` and ``outside`` replace the units' residuals (another surrogate's).
    """
    d, t = units.x.shape[2], units.sizes
    inside = units.inside if inside is None else inside
    outside = units.outside if outside is None else outside
    middle = d - 2 * units.border - 1
    log_scale = np.log(middle) + gammaln(d + 1) - gammaln(t + 1) - gammaln(d - t + 1) - np.log(2)
    a1, b1, c1 = (xp.asarray(w) for w in coalition_weights(t, d, index, log_scale))
    a2, b2, c2 = (xp.asarray(w) for w in coalition_weights(d - t, d, index, log_scale))
    alpha = inside * c1[..., None] + outside * a2[..., None]
    beta = inside * (b1 - c1)[..., None] + outside * (b2 - a2)[..., None]
    delta = inside * (a1 - 2 * b1 + c1)[..., None] + outside * (a2 - 2 * b2 + c2)[..., None]
    return alpha, beta, delta


def _unit_moments(
    units: _Units, index: str, xp: Any, terms: tuple[Any, Any, Any] | None = None, keep: slice = slice(None)
) -> tuple[Any, Any, Any]:
    """Mean of the units' terms (B, d, d, k), its variance and that of its row sums (B, d, k).

    ``terms`` replaces the units' (α, β, δ); ``keep`` (a slice) selects the units averaged.
    """
    alpha, beta, delta = _unit_terms(units, index, xp) if terms is None else terms
    alpha, beta, delta, x, t = alpha[:, keep], beta[:, keep], delta[:, keep], units.x[:, keep], units.sizes[:, keep]
    n, d = x.shape[1], x.shape[2]
    total = pair_sums(x, alpha, beta, delta, xp)
    # Z² has the same form: α², 2αβ + β² on (x_i + x_j), 2β² + 2αδ + 4βδ + δ² on x_i x_j (x binary)
    squares = pair_sums(
        x, alpha**2, 2 * alpha * beta + beta**2, 2 * beta**2 + 2 * alpha * delta + 4 * beta * delta + delta**2, xp
    )
    mean = total / n
    variance = xp.maximum(squares - total * mean, 0.0) / (n * (n - 1))
    # Σ_{j≠i} Z_ij of a unit: (d − 1) α + β t + x_i (β (d − 2) + δ (t − 1))
    size = xp.asarray(t.astype(np.float64))[:, :, None]
    row_units = ((d - 1) * alpha + beta * size)[:, :, None, :] + x[:, :, :, None] * (
        beta * (d - 2) + delta * (size - 1.0)
    )[:, :, None, :]
    return mean, variance, row_units.var(axis=1, ddof=1) / n


def _pair_features(masks_float: Any, xp: Any, selected: Any = None) -> Any:
    """[1, x_u, x_u x_v (u < v)] of coalitions (B, C, d) or (C, d), the pairs of ``selected`` (B, m) players only.

    Returns (..., C, 1 + d + m (m − 1) / 2), m = d where ``selected`` is None; with ``selected``
    the shape is (B, C, ...).
    """
    members = masks_float
    if selected is not None:
        if masks_float.ndim == 2:
            masks_float = xp.broadcast_to(masks_float, (selected.shape[0],) + masks_float.shape)
        members = xp.take_along_axis(masks_float, selected[:, None, :], axis=2)
    ones = xp.ones(masks_float.shape[:-1] + (1,))
    first, second = (xp.asarray(i) for i in np.triu_indices(members.shape[-1], 1))
    return xp.concatenate([ones, masks_float, members[..., first] * members[..., second]], axis=-1)


def _pair_penalties(singles: Any, lasts: Any, selected: Any, xp: Any) -> Any:
    """Ridge penalty of each coefficient of the order-2 fit, in units of :data:`RIDGE_PER_ROW` per row: (B, F).

    The constant 1, each main effect :data:`MAIN_RIDGE_FACTOR`, the pair of u and v
    :data:`PAIR_RIDGE_FACTOR` / √(s_u s_v), s_u = Σ_k |β_u| over its mean across the players whose
    pairs are fitted (at least 1e-3; 1 where every slope is 0): a prior whose variance of a pair's
    coefficient grows with its players' border slopes (weak heredity: players without a main
    effect seldom interact). Fixed by the enumerated borders, so the estimate stays unbiased. The
    outputs share it (their slopes summed, as for the selection of players), so an output's
    estimate can differ, within its errors, from that of the output alone.
    ``selected`` (B, m): the players whose pairs are fitted (None: all).
    """
    size = abs(singles + lasts).sum(axis=2)  # (B, d)
    if selected is not None:
        size = xp.take_along_axis(size, selected, axis=1)
    mean = size.mean(axis=1, keepdims=True)
    # no slope at all (a game flat at both borders): no player is favoured, every pair has the factor alone
    relative = xp.where(mean > 0.0, xp.maximum(size / xp.maximum(mean, 1e-300), 1e-3), 1.0)
    first, second = (xp.asarray(i) for i in np.triu_indices(relative.shape[1], 1))
    pairs = PAIR_RIDGE_FACTOR / xp.sqrt(relative[:, first] * relative[:, second])
    n_games, d = singles.shape[:2]
    return xp.concatenate([xp.ones((n_games, 1)), xp.full((n_games, d), MAIN_RIDGE_FACTOR), pairs], axis=1)


def _leave_one_out_middle(
    units: _Units,
    enumerated: np.ndarray,
    enumerated_residual: Any,
    full_residual: Any,
    index: str,
    xp: Any,
    penalties: Any,
    selected: Any = None,
) -> tuple[Any, Any, Any]:
    """Return the middle sizes' share of the residual's pairs, regression-adjusted leaving each unit out, and variances.

    ``penalties`` (B, F) from :func:`_pair_penalties`; ``selected`` (B, m): the players whose pairs the
    fit has (None: all).

    One ridge fit h of the order-2 polynomial to the residual at the enumerated coalitions
    (``enumerated``, the same for every game), ∅, N and every unit's T and N ∖ T; h₋ᵤ, the fit
    without unit u, follows by the leave-one-out identities of a ridge regression (A the penalised
    Gram matrix, Uᵤ the unit's two rows of features, Hᵤ = Uᵤ A⁻¹ Uᵤᵀ its 2 × 2 leverage, eᵤ its
    residuals of h): its residuals at the unit are (I − Hᵤ)⁻¹ eᵤ and its coefficients
    c − A⁻¹ Uᵤᵀ (I − Hᵤ)⁻¹ eᵤ. Unit u's term is the middle sizes' share of h₋ᵤ's pairs (its
    coefficients of x_u x_v less its enumerated share) plus its own estimate of that of r − h₋ᵤ;
    h₋ᵤ does not depend on unit u's draws, so each term is unbiased, and so is their mean (the share
    is linear in the coefficients: that of their mean). Variance: that of the units' estimates of
    r − h₋ᵤ over n, times :data:`REGRESSION_STDERR_WIDENING`² (the units' dependence through the
    fits is not in it; the tests check coverage). One solve per game, of F + 2n right sides.
    """
    n_games, n_units, d = units.x.shape
    n_outputs = units.inside.shape[2]
    corners = np.zeros((2, d), dtype=bool)
    corners[1] = True  # ∅, N
    enumerated_features = _pair_features(
        xp.asarray(np.concatenate([enumerated, corners]).astype(np.float64)), xp, selected
    )  # (E, F), the same for every game, or (B, E, F) with a selection
    enumerated_targets = xp.concatenate(
        [enumerated_residual, xp.zeros((n_games, 1, n_outputs)), full_residual[:, None, :]], axis=1
    )
    n_features = enumerated_features.shape[-1]
    unit_features = xp.stack(
        [_pair_features(units.x, xp, selected), _pair_features(1.0 - units.x, xp, selected)], axis=2
    )  # (B, n, 2, F): T, N ∖ T
    unit_rows = unit_features.reshape(n_games, 2 * n_units, n_features)
    unit_targets = xp.stack([units.inside, units.outside], axis=2)  # (B, n, 2, k)
    enumerated_transposed, unit_transposed = xp.swapaxes(enumerated_features, -1, -2), unit_rows.transpose(0, 2, 1)
    system = xp.matmul(enumerated_transposed, enumerated_features) + xp.matmul(unit_transposed, unit_rows)
    right = xp.matmul(enumerated_transposed, enumerated_targets) + xp.matmul(
        unit_transposed, unit_targets.reshape(n_games, 2 * n_units, n_outputs)
    )
    n_rows = enumerated_features.shape[-2] + 2 * n_units
    system = system + (RIDGE_PER_ROW * n_rows) * penalties[:, :, None] * xp.eye(n_features)[None]
    solved = xp.linalg.solve(system, xp.concatenate([right, unit_transposed], axis=2))
    coefficients, spread = solved[:, :, :n_outputs], solved[:, :, n_outputs:]  # c (B, F, k), A⁻¹ Uᵀ (B, F, 2n)
    spread_by_unit = spread.transpose(0, 2, 1).reshape(n_games, n_units, 2, n_features)
    leverage = xp.matmul(unit_features, spread_by_unit.transpose(0, 1, 3, 2))  # Hᵤ (B, n, 2, 2)
    fitted = xp.matmul(unit_features, coefficients[:, None])
    left_out = xp.linalg.solve(xp.eye(2)[None, None] - leverage, unit_targets - fitted)  # r − h₋ᵤ (B, n, 2, k)
    mean_coefficients = coefficients - xp.matmul(spread, left_out.reshape(n_games, 2 * n_units, n_outputs)) / n_units

    rows = xp.arange(n_games)[:, None]
    first, second = (xp.asarray(i) for i in np.triu_indices(d if selected is None else selected.shape[1], 1))
    if selected is not None:  # each game's own pairs (B, P)
        first, second = selected[:, first], selected[:, second]
    h_pairs = xp.zeros((n_games, d, d, n_outputs))
    h_pairs[rows, first, second] = mean_coefficients[:, 1 + d :]
    h_pairs[rows, second, first] = h_pairs[rows, first, second]
    h_enumerated = xp.matmul(enumerated_features, mean_coefficients)
    enumerated_float = xp.asarray(enumerated.astype(np.float64))
    h_middle = h_pairs - _enumerated_pairs(
        xp.broadcast_to(enumerated_float, (n_games,) + enumerated_float.shape),
        enumerated.sum(axis=1),
        h_enumerated[:, :-2],
        h_enumerated[:, -2],
        h_enumerated[:, -1],
        index,
        xp,
    )
    terms = _unit_terms(units, index, xp, left_out[:, :, 0], left_out[:, :, 1])
    mean, variance, row_variance = _unit_moments(units, index, xp, terms)
    widening = REGRESSION_STDERR_WIDENING**2
    return h_middle + mean, widening * variance, widening * row_variance
