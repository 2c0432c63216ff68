"""Top-k Shapley identification: CMCS, Greedy CMCS, CMCS@K and the paper's baselines.

Kolpaczki, Nielen & Hüllermeier (2025), "Antithetic Sampling for Top-k Shapley Identification"
(spec/topk_cmcs.md). Every method runs all ``n_games`` games of a :class:`CoalitionGame` in
lockstep: one Python loop over rounds (adaptive methods) or over memory-bounded chunks of rounds
(non-adaptive ones), each step one batched game call. Budgets count evaluations per game, v(∅)
and v(N) included (cached and charged once); a coalition equal to ∅ or N is free afterwards.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from math import comb, isfinite
from numbers import Integral, Real
from typing import Any

import numpy as np

from sklearn_shapq._random import make_generator
from sklearn_shapq.estimators._topk_state import (
    RANKINGS,
    Ledger,
    PairStats,
    PlayerStats,
    TopKResult,
    bonferroni_z,
    confidence_bounds,
    pac_satisfied,
    ranking_key,
    top_k_indices,
    top_k_mask,
)

TOPK_METHODS = (
    "cmcs",
    "greedy_cmcs",
    "cmcs_at_k",
    "permutation",
    "sampling_shap_at_k",
    "svarm",
    "stratified_svarm",
)
PAC_METHODS = ("cmcs", "greedy_cmcs", "cmcs_at_k", "sampling_shap_at_k")
ADAPTIVE_METHODS = ("greedy_cmcs", "cmcs_at_k", "sampling_shap_at_k")
_MASK_CELLS = 2**25
"""Most boolean mask cells built at once by the batched (non-adaptive) methods."""


# ---------------------------------------------------------------- CMCS coalitions and rounds


def cmcs_coalition_probability(d: int) -> np.ndarray:
    """P_CMCS(S) = 1 / ((d + 1) C(d, |S|)) for each size |S| = 0 … d (spec Eq. 15)."""
    return np.array([1.0 / ((d + 1) * comb(d, s)) for s in range(d + 1)])


def draw_cmcs_coalitions(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Draw n coalitions (n, d): size uniform on {0, …, d}, then uniform among coalitions of that size."""
    sizes = rng.integers(0, d + 1, size=n)
    ranks = np.argsort(np.argsort(rng.random((n, d)), axis=1), axis=1)
    return ranks < sizes[:, None]


def extended_marginals(value: np.ndarray, neighbour_values: np.ndarray, coalitions: np.ndarray) -> np.ndarray:
    """Δ_i(S) = (1 − 2·1[i ∈ S]) (v(S △ {i}) − v(S)) for v(S) (r,) and v(S △ {i}) (r, d)."""
    return np.where(coalitions, -1.0, 1.0) * (neighbour_values - value[:, None])


def _flat_units(keep: np.ndarray, unit_of: np.ndarray) -> np.ndarray:
    """Renumber the unit ids of the kept cells 0, 1, … in order (they are non-decreasing)."""
    return np.unique(unit_of[keep], return_inverse=True)[1]


def cmcs_rounds(
    ledger: Ledger, games: np.ndarray, selected: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One CMCS round per row: draw S, evaluate v(S) and v(S △ {i}) for the selected players.

    Rows of one game are paid in order. Within a row, S is paid together with the first
    neighbour, then neighbours one by one in a random order, while the budget lasts.

    Parameters
    ----------
    games : int array of shape (r,)
        Game of each round (a game may have several consecutive rounds).
    selected : bool array of shape (r, d)
        Players to sample in each round.

    Returns
    -------
    samples : ndarray of shape (r, d)
        Extended marginal contributions Δ_i(S) (NaN where not taken).
    taken : bool ndarray of shape (r, d)
    """
    r, d = selected.shape
    coalitions = draw_cmcs_coalitions(rng, r, d)
    priority = np.where(selected, rng.random((r, d)), np.inf)
    order = np.argsort(priority, axis=1)
    neighbours = coalitions[:, None, :] ^ np.eye(d, dtype=bool)[order]
    keep_neighbours = np.take_along_axis(selected, order, axis=1)
    masks = np.concatenate([coalitions[:, None, :], neighbours], axis=1)
    keep = np.concatenate([keep_neighbours.any(axis=1)[:, None], keep_neighbours], axis=1)
    unit_of = np.concatenate([np.zeros(1, dtype=np.int64), np.arange(d)]) + d * np.arange(r)[:, None]
    row_games = np.broadcast_to(games[:, None], keep.shape)
    values, paid = ledger.pay(masks[keep], row_games[keep], _flat_units(keep, unit_of))
    all_values = np.full(keep.shape, np.nan)
    all_paid = np.zeros(keep.shape, dtype=bool)
    all_values[keep], all_paid[keep] = values, paid
    in_s = np.take_along_axis(coalitions, order, axis=1)
    ordered = extended_marginals(all_values[:, 0], all_values[:, 1:], in_s)
    samples = np.empty((r, d))
    taken = np.empty((r, d), dtype=bool)
    np.put_along_axis(samples, order, ordered, axis=1)
    np.put_along_axis(taken, order, all_paid[:, 1:], axis=1)
    return samples, taken


def permutation_rounds(ledger: Ledger, games: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One ApproShapley permutation per row, walked with reuse (d − 1 paid evaluations).

    Returns marginal contributions v(pre ∪ {i}) − v(pre) per player (r, d) and which were taken.
    A walk is paid whole or not at all: the first players of a walk cut short would be sampled
    from the wrong law (small coalitions), biasing their estimates.
    """
    r, d = games.shape[0], ledger.n_players
    order = np.argsort(rng.random((r, d)), axis=1)
    position = np.argsort(order, axis=1)
    masks = position[:, None, :] < np.arange(1, d)[None, :, None]  # prefixes of sizes 1 … d − 1
    units = np.repeat(np.arange(r), d - 1)
    values, paid = ledger.pay(masks.reshape(-1, d), np.repeat(games, d - 1), units)
    walk = np.concatenate([ledger.empty[games, None], values.reshape(r, d - 1), ledger.full[games, None]], axis=1)
    gains = np.diff(walk, axis=1)  # gains[:, m]: player at position m
    taken = np.broadcast_to(paid.reshape(r, d - 1)[:, :1], (r, d))
    return np.take_along_axis(gains, position, axis=1), taken


# ---------------------------------------------------------------- drivers


def _rounds_per_game(ledger: Ledger, games: np.ndarray, cost: int, cells: int) -> int:
    """Return the rounds per game that exhaust the largest remaining budget, bounded by memory."""
    remaining = ledger.remaining[games].max()
    wanted = int(remaining // max(cost, 1)) + 1
    return max(1, min(wanted, _MASK_CELLS // max(1, cells * games.size)))


def _run_batched(
    ledger: Ledger, draw: Callable[[np.ndarray], np.ndarray], cost: int, cells: int, active: np.ndarray
) -> None:
    """Run non-adaptive rounds in memory-bounded chunks until every game's budget is spent.

    ``draw(games)`` runs one round per entry of ``games`` (sorted) and returns which rows were
    cut short by the budget; ``cost`` is a lower bound on a round's cost, ``cells`` its mask size.
    """
    while active.size:
        rounds = _rounds_per_game(ledger, active, cost, cells)
        short = draw(np.repeat(active, rounds))
        exhausted = np.zeros(ledger.n_games, dtype=bool)
        exhausted[np.repeat(active, rounds)[short]] = True
        active = active[~exhausted[active] & (ledger.remaining[active] > 0)]


def _warm_up_cmcs(ledger: Ledger, stats: PlayerStats, pairs: PairStats | None, t_min: int, rng: Any) -> np.ndarray:
    """t_min full CMCS rounds per game in memory-bounded batches; returns the games whose budget lasted."""
    d = ledger.n_players
    games = np.repeat(np.arange(ledger.n_games), t_min)
    cut = np.zeros(ledger.n_games, dtype=bool)
    step = max(1, _MASK_CELLS // ((d + 1) * d * (8 if pairs is not None else 1)))  # pair updates: (r, d, d) floats
    for start in range(0, games.size, step):  # a game's rounds stay in order across batches
        chunk = games[start : start + step]
        samples, taken = cmcs_rounds(ledger, chunk, np.ones((chunk.size, d), dtype=bool), rng)
        stats.add(chunk, samples, taken)
        if pairs is not None:
            pairs.add(chunk, samples, taken)
        cut[chunk[~taken.all(axis=1)]] = True
    return np.flatnonzero(~cut)


def _run_adaptive(
    ledger: Ledger,
    stats: PlayerStats,
    active: np.ndarray,
    choose: Callable[[np.ndarray], np.ndarray],
    sample: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]],
    stop: Callable[[np.ndarray], np.ndarray],
) -> None:
    """One round per active game per step: ``choose`` players, ``sample`` them, drop finished games."""
    active = active[~stop(active)]  # the rule may already hold after the warm-up
    while active.size:
        selected = choose(active)
        games, samples, taken = sample(active, selected)
        stats.add(games, samples, taken)
        cut = (selected & ~taken).any(axis=1) | ~(ledger.remaining[active] > 0)
        active = active[~cut & ~stop(active)]


def top_k_shapley(
    game: Any,
    k: int,
    method: str = "greedy_cmcs",
    *,
    max_evals: int | None = None,
    epsilon: float | None = None,
    delta: float = 0.01,
    t_min: int = 30,
    ranking: str = "signed",
    random_state: Any = None,
) -> TopKResult:
    """Identify the k players with the largest Shapley values of every game of ``game``.

    Parameters
    ----------
    game : CoalitionGame
    k : int
        Size of the set sought, 1 <= k <= d.
    method : str, default="greedy_cmcs"
        "cmcs" (Comparable Marginal Contributions Sampling: every player, every round),
        "greedy_cmcs" (after t_min CMCS rounds, rounds sample the players of pairs likely to be
        mis-ordered), "cmcs_at_k" (SHAP@K with CMCS: the two most overlapping players per round,
        on one coalition), or a baseline: "permutation" (ApproShapley), "sampling_shap_at_k"
        (SHAP@K with permutation sampling), "svarm", "stratified_svarm" (the paper's variant).
    max_evals : int or None
        Evaluations per game including v(∅) and v(N); None (PAC mode only): until the rule holds.
    epsilon : float or None
        PAC mode: stop a game once max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i <= epsilon (units of v).
        Only the methods in :data:`PAC_METHODS`.
    delta : float, default=0.01
        Error probability of the confidence bounds (Bonferroni over the d players).
    t_min : int, default=30
        Warm-up rounds (CMCS family) or permutations (SHAP@K) before bounds are trusted.
    ranking : {"signed", "absolute"}, default="signed"
        Rank players by their values or by their magnitudes (adaptive methods then also sample
        for the magnitude ranking).
    random_state : None, int or Generator

    Returns
    -------
    TopKResult

    Examples
    --------
    >>> from sklearn_shapq.games import planted_unanimity_game
    >>> game = planted_unanimity_game(12, 3, np.random.default_rng(123))
    >>> result = top_k_shapley(game, 3, "cmcs_at_k", max_evals=300, random_state=0)
    >>> sorted(result.top_k[0].tolist()) == sorted(np.argsort(-game.shapley_values()[0])[:3].tolist())
    True
    >>> int(result.n_evals[0]) <= 300
    True
    """
    d = game.n_players
    _check_arguments(d, k, method, max_evals, epsilon, delta, t_min, ranking)
    warm_up = 2 + t_min * ((d - 1) if method == "sampling_shap_at_k" else (d + 1))
    if method in ADAPTIVE_METHODS and max_evals is not None and max_evals < warm_up and d > 1:
        warnings.warn(
            f"max_evals={max_evals} does not cover {method}'s warm-up of about {warm_up} evaluations "
            f"(t_min={t_min} rounds of d={d} players): it never reaches its adaptive phase. Raise max_evals "
            "or lower t_min.",
            UserWarning,
            stacklevel=2,
        )
    rng = make_generator(random_state, stream=2)
    ledger = Ledger(game, max_evals)
    z = bonferroni_z(delta, d)
    eps = -np.inf if epsilon is None else float(epsilon)  # fixed budget: never stop on the rule

    stats = PlayerStats(ledger.n_games, d)
    if d == 1:  # a single player: φ = v(N) − v(∅), no sampling
        stats.add(np.arange(ledger.n_games), (ledger.full - ledger.empty)[:, None], np.ones((ledger.n_games, 1), bool))
        values, stderr, counts = stats.mean, stats.stderr(), stats.count
    elif method in ("svarm", "stratified_svarm"):
        values, stderr, counts = _run_svarm(ledger, rng, stratified=method == "stratified_svarm")
    else:
        _RUNNERS[method](ledger, stats, k, z, eps, t_min, ranking, rng)
        values, stderr, counts = stats.mean, stats.stderr(), stats.count
    key = ranking_key(values, ranking)
    if method in ("svarm", "stratified_svarm"):
        satisfied = np.zeros(ledger.n_games, dtype=bool)
    else:
        satisfied = pac_satisfied(stats, top_k_mask(key, k), z, max(eps, 0.0), t_min if d > 1 else 1, ranking)
    return TopKResult(
        values=values,
        stderr=stderr,
        counts=counts.astype(np.int64),
        top_k=top_k_indices(key, k),
        n_evals=ledger.used.copy(),
        pac_satisfied=satisfied,
    )


def _check_arguments(d, k, method, max_evals, epsilon, delta, t_min, ranking) -> None:  # noqa: ANN001
    if method not in TOPK_METHODS:
        raise ValueError(f"method must be one of {TOPK_METHODS}, got {method!r}.")
    if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= d:
        raise ValueError(f"k must be an int between 1 and the number of players {d}, got {k!r}.")
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {RANKINGS}, got {ranking!r}.")
    if isinstance(t_min, bool) or not isinstance(t_min, Integral) or t_min < 2:
        raise ValueError(f"t_min must be an int >= 2, got {t_min!r}.")
    if not (isinstance(delta, Real) and 0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
    if epsilon is not None:
        if not (isinstance(epsilon, Real) and epsilon >= 0 and isfinite(epsilon)):
            raise ValueError(f"epsilon must be None or a finite number >= 0, got {epsilon!r}.")
        if method not in PAC_METHODS:
            raise ValueError(f"PAC mode (epsilon) needs a method with confidence bounds: one of {PAC_METHODS}.")
    if max_evals is None:
        if epsilon is None or epsilon == 0:
            raise ValueError(
                "max_evals=None runs until the PAC rule holds: give epsilon > 0 (players tied at the "
                "border never separate with epsilon = 0), or a budget."
            )
    elif isinstance(max_evals, bool) or not isinstance(max_evals, Integral) or max_evals < 2:
        raise ValueError(f"max_evals must be an int >= 2 (v(∅) and v(N) included), got {max_evals!r}.")


def _run_cmcs(ledger, stats, k, z, eps, t_min, ranking, rng) -> None:  # noqa: ANN001
    d = ledger.n_players
    everyone = np.arange(ledger.n_games)
    if eps == -np.inf:  # fixed budget: rounds are independent, so batch them

        def draw(games: np.ndarray) -> np.ndarray:
            samples, taken = cmcs_rounds(ledger, games, np.ones((games.size, d), dtype=bool), rng)
            stats.add(games, samples, taken)
            return ~taken.all(axis=1)

        _run_batched(ledger, draw, d if d > 2 else 1, (d + 1) * d, everyone)
        return
    active = _warm_up_cmcs(ledger, stats, None, t_min, rng)
    _run_adaptive(
        ledger,
        stats,
        active,
        lambda games: np.ones((games.size, d), dtype=bool),
        lambda games, selected: (games, *cmcs_rounds(ledger, games, selected, rng)),
        _pac_stop(stats, k, z, eps, t_min, ranking),
    )


def _pac_stop(stats: PlayerStats, k: int, z: float, eps: float, t_min: int, ranking: str) -> Callable:
    def stop(games: np.ndarray) -> np.ndarray:
        if eps == -np.inf:
            return np.zeros(games.size, dtype=bool)
        sub = stats.subset(games)
        return pac_satisfied(sub, top_k_mask(ranking_key(sub.mean, ranking), k), z, eps, t_min, ranking)

    return stop


def _run_greedy_cmcs(ledger, stats, k, z, eps, t_min, ranking, rng) -> None:  # noqa: ANN001
    d = ledger.n_players
    pairs = PairStats(ledger.n_games, d, ranking)
    active = _warm_up_cmcs(ledger, stats, pairs, t_min, rng)

    def choose(games: np.ndarray) -> np.ndarray:
        selected = np.ones((games.size, d), dtype=bool)
        if k == d:
            return selected
        means = stats.mean[games]
        order = np.argsort(-ranking_key(means, ranking), axis=1, kind="stable")
        top, rest = order[:, :k], order[:, k:]
        probability, joint = pairs.misorder_probability(games, top, rest, np.where(means < 0, -1.0, 1.0))
        low, high = probability.min(axis=(1, 2)), probability.max(axis=(1, 2))
        spread = np.where(high > low, high - low, 1.0)[:, None, None]
        drawn = rng.random(probability.shape) < (probability - low[:, None, None]) / spread
        chosen = np.zeros((games.size, d), dtype=bool)
        np.put_along_axis(chosen, top, drawn.any(axis=2), axis=1)
        np.put_along_axis(chosen, rest, drawn.any(axis=1), axis=1)
        everyone = (joint < t_min).any(axis=(1, 2)) | (high == low)  # still warming up, or nothing to prefer
        return np.where(everyone[:, None], selected, chosen)

    def sample(games: np.ndarray, selected: np.ndarray) -> tuple:
        samples, taken = cmcs_rounds(ledger, games, selected, rng)
        pairs.add(games, samples, taken)
        return games, samples, taken

    _run_adaptive(ledger, stats, active, choose, sample, _pac_stop(stats, k, z, eps, t_min, ranking))


def _border_pair(stats: PlayerStats, games: np.ndarray, k: int, z: float, ranking: str) -> np.ndarray:
    """SHAP@K's pair: h = argmin LCB in the top-k, l = argmax UCB outside; as a (r, d) mask."""
    sub = stats.subset(games)
    in_top = top_k_mask(ranking_key(sub.mean, ranking), k)
    lower, upper = confidence_bounds(sub, z, ranking)
    selected = np.zeros(in_top.shape, dtype=bool)
    rows = np.arange(games.size)
    selected[rows, np.where(in_top, lower, np.inf).argmin(axis=1)] = True
    if k < in_top.shape[1]:
        selected[rows, np.where(in_top, -np.inf, upper).argmax(axis=1)] = True
    return selected


def _run_cmcs_at_k(ledger, stats, k, z, eps, t_min, ranking, rng) -> None:  # noqa: ANN001
    active = _warm_up_cmcs(ledger, stats, None, t_min, rng)
    _run_adaptive(
        ledger,
        stats,
        active,
        lambda games: _border_pair(stats, games, k, z, ranking),
        lambda games, selected: (games, *cmcs_rounds(ledger, games, selected, rng)),
        _pac_stop(stats, k, z, eps, t_min, ranking),
    )


def _run_permutation(ledger, stats, k, z, eps, t_min, ranking, rng) -> None:  # noqa: ANN001
    d = ledger.n_players

    def draw(games: np.ndarray) -> np.ndarray:
        samples, taken = permutation_rounds(ledger, games, rng)
        stats.add(games, samples, taken)
        return ~taken.all(axis=1)

    _run_batched(ledger, draw, d - 1, d * d, np.arange(ledger.n_games))


def _pair_marginals(
    ledger: Ledger, games: np.ndarray, selected: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """SamplingSHAP@K round: for each selected player i, v(pre ∪ {i}) − v(pre) on one permutation.

    pre is the set of players before i in a fresh uniform permutation (one per row); each
    player's two coalitions are paid as a unit, players in index order.
    """
    r, d = selected.shape
    position = np.argsort(np.argsort(rng.random((r, d)), axis=1), axis=1)
    rows, players = np.nonzero(selected)
    before = position[rows] < position[rows, players][:, None]
    masks = np.stack([before, before | (np.arange(d) == players[:, None])], axis=1).reshape(-1, d)
    values, paid = ledger.pay(masks, np.repeat(games[rows], 2), np.repeat(np.arange(rows.size), 2))
    samples = np.full((r, d), np.nan)
    taken = np.zeros((r, d), dtype=bool)
    samples[rows, players] = values[1::2] - values[0::2]
    taken[rows, players] = paid[1::2]
    return samples, taken


def _run_sampling_shap_at_k(ledger, stats, k, z, eps, t_min, ranking, rng) -> None:  # noqa: ANN001
    games = np.repeat(np.arange(ledger.n_games), t_min)
    samples, taken = permutation_rounds(ledger, games, rng)  # warm-up: t_min permutations per game
    stats.add(games, samples, taken)
    cut = np.zeros(ledger.n_games, dtype=bool)
    cut[games[~taken.all(axis=1)]] = True
    _run_adaptive(
        ledger,
        stats,
        np.flatnonzero(~cut),
        lambda games: _border_pair(stats, games, k, z, ranking),
        lambda games, selected: (games, *_pair_marginals(ledger, games, selected, rng)),
        _pac_stop(stats, k, z, eps, t_min, ranking),
    )


_RUNNERS = {
    "cmcs": _run_cmcs,
    "greedy_cmcs": _run_greedy_cmcs,
    "cmcs_at_k": _run_cmcs_at_k,
    "permutation": _run_permutation,
    "sampling_shap_at_k": _run_sampling_shap_at_k,
}


# ---------------------------------------------------------------- SVARM family


def _sized_coalitions(rng: np.random.Generator, sizes: np.ndarray, d: int) -> np.ndarray:
    """Uniform coalitions (r, d) of the given sizes (r,)."""
    ranks = np.argsort(np.argsort(rng.random((sizes.size, d)), axis=1), axis=1)
    return ranks < sizes[:, None]


def _run_svarm(ledger: Ledger, rng: np.random.Generator, *, stratified: bool) -> tuple:
    """SVARM / Stratified SVARM: estimates from coalition values, no marginal contributions.

    SVARM: φ_i = φ⁺_i − φ⁻_i, the mean of v(A⁺) over sampled A⁺ ∋ i (sizes ∝ 1/ℓ) minus that of
    v(A⁻) over A⁻ ∌ i (sizes ∝ 1/(d − ℓ)), after a warm-up of one of each per player.
    Stratified SVARM (the paper's variant): strata by player and size, φ_i = (1/d) Σ_ℓ
    (φ⁺_{i,ℓ} − φ⁻_{i,ℓ}), coalitions of uniform size 1 … d − 1 paired with their complements,
    strata of N and ∅ seeded from the cached values. Unsampled strata count as 0.
    """
    n_games, d = ledger.n_games, ledger.n_players
    cells = d * d if stratified else d
    plus, minus = PlayerStats(n_games, cells), PlayerStats(n_games, cells)
    everyone = np.arange(n_games)
    if stratified:
        top_cell = np.zeros((n_games, d, d), dtype=bool)
        top_cell[:, :, d - 1] = True
        plus.add(everyone, np.broadcast_to(ledger.full[:, None], (n_games, cells)), top_cell.reshape(n_games, -1))
        minus.add(
            everyone,
            np.broadcast_to(ledger.empty[:, None], (n_games, cells)),
            np.roll(top_cell, 1, 2).reshape(n_games, -1),
        )
    else:
        _svarm_warm_up(ledger, plus, minus, rng)

    def add(games: np.ndarray, coalitions: np.ndarray, values: np.ndarray, paid: np.ndarray) -> None:
        sizes = coalitions.sum(axis=1)
        samples = np.broadcast_to(values[:, None], (games.size, cells))
        if stratified:
            plus_at = coalitions[:, :, None] & (np.arange(d) == sizes[:, None, None] - 1)
            minus_at = ~coalitions[:, :, None] & (np.arange(d) == sizes[:, None, None])
            plus_at, minus_at = plus_at.reshape(games.size, -1), minus_at.reshape(games.size, -1)
        else:
            plus_at, minus_at = coalitions, ~coalitions
        plus.add(games, samples, plus_at & paid[:, None])
        minus.add(games, samples, minus_at & paid[:, None])

    def draw(games: np.ndarray) -> np.ndarray:
        r = games.size
        if stratified:
            first = _sized_coalitions(rng, rng.integers(1, d, size=r), d)
            coalitions = np.stack([first, ~first], axis=1).reshape(-1, d)
            units = np.repeat(np.arange(r), 2)
        else:
            harmonic = 1.0 / np.arange(1, d + 1)
            size_plus = rng.choice(np.arange(1, d + 1), size=r, p=harmonic / harmonic.sum())
            size_minus = d - rng.choice(np.arange(1, d + 1), size=r, p=harmonic / harmonic.sum())
            coalitions = np.stack(
                [_sized_coalitions(rng, size_plus, d), _sized_coalitions(rng, size_minus, d)], axis=1
            ).reshape(-1, d)
            units = np.arange(2 * r)
        values, paid = ledger.pay(coalitions, np.repeat(games, 2), units)
        pair_paid = paid.reshape(r, 2)
        if stratified:
            add(np.repeat(games, 2), coalitions, values, paid)
        else:  # A⁺ updates φ⁺ only, A⁻ updates φ⁻ only
            both = coalitions.reshape(r, 2, d)
            plus.add(games, np.broadcast_to(values[0::2, None], (r, d)), both[:, 0] & pair_paid[:, :1])
            minus.add(games, np.broadcast_to(values[1::2, None], (r, d)), ~both[:, 1] & pair_paid[:, 1:])
        return ~pair_paid.all(axis=1)

    _run_batched(ledger, draw, 2, 2 * d * cells, everyone[ledger.remaining > 0])
    if stratified:
        shape = (n_games, d, d)
        values = (plus.mean - minus.mean).reshape(shape).sum(axis=2) / d
        variance = (plus.stderr() ** 2 + minus.stderr() ** 2).reshape(shape).sum(axis=2)
        counts = (plus.count + minus.count).reshape(shape).sum(axis=2)
        return values, np.sqrt(variance) / d, counts
    return plus.mean - minus.mean, np.sqrt(plus.stderr() ** 2 + minus.stderr() ** 2), plus.count + minus.count


def _svarm_warm_up(ledger: Ledger, plus: PlayerStats, minus: PlayerStats, rng: np.random.Generator) -> None:
    """SVARM's warm-up: per player i, one v(A ∪ {i}) for φ⁺_i and one v(A') for φ⁻_i, A, A' ∌ i."""
    n_games, d = ledger.n_games, ledger.n_players
    games = np.repeat(np.arange(n_games), d)
    player = np.tile(np.arange(d), n_games)
    others = np.arange(d) != player[:, None]

    def without_player() -> np.ndarray:
        keys = np.where(others, rng.random(others.shape), np.inf)
        ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
        return ranks < rng.integers(0, d, size=player.size)[:, None]

    with_player = without_player() | ~others
    coalitions = np.stack([with_player, without_player()], axis=1).reshape(-1, d)
    values, paid = ledger.pay(coalitions, np.repeat(games, 2), np.arange(2 * player.size))
    own = ~others
    plus.add(games, np.broadcast_to(values[0::2, None], own.shape), own & paid[0::2, None])
    minus.add(games, np.broadcast_to(values[1::2, None], own.shape), own & paid[1::2, None])
