"""Top-k Shapley identification (Kolpaczki, Nielen & Hüllermeier 2025): the driver of the registered algorithms."""

from __future__ import annotations

import warnings
from math import isfinite
from numbers import Integral, Real
from typing import Any

import numpy as np

from sklearn_shapq._random import make_generator
from sklearn_shapq.algorithms._registry import ShapleyEstimate
from sklearn_shapq.algorithms._topk_base import TOPK_ALGORITHMS
from sklearn_shapq.algorithms._topk_state import (
    RANKINGS,
    Ledger,
    PlayerStats,
    TopKResult,
    bonferroni_z,
    pac_satisfied,
    ranking_key,
    top_k_indices,
    top_k_mask,
)
from sklearn_shapq.samplers import KeyedStream, draw_seed, row_keys


def top_k_shapley(
    game: Any,
    k: int,
    algorithm: str = "greedy_cmcs",
    *,
    max_evals: int | None = None,
    epsilon: float | None = None,
    delta: float = 0.01,
    t_min: int = 30,
    ranking: str = "signed",
    rounds_per_decision: int | str = 1,
    random_state: Any = None,
    keys: np.ndarray | None = None,
    outputs: np.ndarray | None = None,
) -> TopKResult:
    """Identify the k players with the largest Shapley values of every game of ``game``.

    Parameters
    ----------
    game : Game
    k : int
        Size of the set sought, 1 <= k <= d.
    algorithm : str, default="greedy_cmcs"
        A name of ``TOPK_ALGORITHMS``: "cmcs", "greedy_cmcs", "cmcs_at_k", or a baseline
        ("permutation", "sampling_shap_at_k", "svarm", "stratified_svarm", "leverage").
    max_evals : int or None
        Evaluations per game including v(∅) and v(N), at least the algorithm's minimum; None (PAC
        mode only): until the rule holds.
    epsilon : float or None
        PAC mode: stop a game once max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i <= epsilon (units of v);
        algorithms with confidence bounds only.
    delta : float, default=0.01
        Error probability of the confidence bounds (Bonferroni over the d players).
    t_min : int, default=30
        Warm-up rounds (CMCS family) or permutations (SHAP@K) before bounds are trusted.
    ranking : {"signed", "absolute"}, default="signed"
        Rank players by value or by magnitude.
    rounds_per_decision : int or "auto", default=1
        Adaptive algorithms: rounds run on one choice of players; 1 is the paper's algorithm, more
        give fewer, larger game calls. "auto": a tenth of the rounds run so far, at least 1.
    random_state : None, int or Generator
        Seed of the games' keys when ``keys`` is not given.
    keys : uint64 array of shape (n_games,), optional
        Each game's key (e.g. :func:`~sklearn_shapq.samplers.row_keys`): a game's draws depend on
        its key alone. Default: keys of the game indices under ``random_state``.
    outputs : int array of shape (n_games,), optional
        Which output of a multi-output game each game ranks (default 0).

    Returns
    -------
    TopKResult

    Raises
    ------
    ValueError
        A budget below the algorithm's minimum (checked first), NaN or infinite game values, overflow.

    Examples
    --------
    >>> from sklearn_shapq.games import planted_unanimity_game
    >>> game = planted_unanimity_game(12, 3, np.random.default_rng(123))
    >>> result = top_k_shapley(game, 3, "cmcs_at_k", max_evals=300, t_min=10, random_state=0)
    >>> sorted(result.top_k[0].tolist()) == sorted(np.argsort(-game.shapley_values()[0, :, 0])[:3].tolist())
    True
    >>> int(result.n_evals[0]) <= 300
    True
    """
    d = game.n_players
    _check_arguments(d, k, algorithm, max_evals, epsilon, delta, t_min, ranking, rounds_per_decision)
    family = TOPK_ALGORITHMS[algorithm]
    reason = family.refusal(d, max_evals, t_min, epsilon is not None) if d > 1 else None
    if reason is not None:
        raise ValueError(reason)
    warm_up = family.warm_up_evals(d, t_min)
    if family.adaptive and max_evals is not None and max_evals < warm_up and d > 1:
        warnings.warn(
            f"max_evals={max_evals} does not cover {algorithm}'s warm-up of about {warm_up} evaluations "
            f"(t_min={t_min} rounds of d={d} players): it never reaches its adaptive phase. Raise max_evals "
            "or lower t_min.",
            UserWarning,
            stacklevel=2,
        )
    if keys is None:
        seed = draw_seed(make_generator(random_state, stream=2))
        keys = row_keys(seed, np.arange(game.n_games, dtype=np.float64)[:, None])
    ledger = Ledger(game, max_evals, outputs)
    xp, n_games = ledger.xp, ledger.n_games
    z = bonferroni_z(delta, d)
    eps = -np.inf if epsilon is None else float(epsilon)  # fixed budget: never stop on the rule
    if d == 1:  # a single player: φ = v(N) − v(∅), no sampling
        stats = PlayerStats(n_games, d, xp)
        stats.add(xp.arange(n_games), (ledger.full - ledger.empty)[:, None], xp.ones((n_games, 1), dtype=bool))
        estimate = ShapleyEstimate(
            values=stats.mean, stderr=stats.stderr(), dof=None, n_evals=ledger.used, counts=stats.count, stats=stats
        )
    else:
        estimate = family(k, z, eps, t_min, ranking, rounds_per_decision).run(ledger, KeyedStream(keys, xp))
    stats = estimate.stats  # None from the algorithms without confidence bounds (the SVARM family)
    key = ranking_key(estimate.values, ranking)
    if stats is None:
        satisfied = xp.zeros(n_games, dtype=bool)
    else:
        satisfied = pac_satisfied(stats, top_k_mask(key, k, xp), z, max(eps, 0.0), t_min if d > 1 else 1, ranking)
    to_numpy = game.backend.to_numpy  # the one copy to the host: the results
    values = to_numpy(estimate.values)
    if not np.isfinite(values).all():  # a game value the ledger did not see, or differences that overflow
        raise ValueError(
            f"The {algorithm} estimates came out NaN or infinite: the game gave NaN or infinity for a coalition, or "
            "differences of its values overflow float64. Make the game's values finite, or rescale them."
        )
    return TopKResult(
        values=values,
        stderr=to_numpy(estimate.stderr),
        counts=to_numpy(estimate.counts).astype(np.int64),
        top_k=to_numpy(top_k_indices(key, k, xp)),
        n_evals=to_numpy(estimate.n_evals).copy(),
        pac_satisfied=to_numpy(satisfied),
    )


def _check_arguments(d, k, algorithm, max_evals, epsilon, delta, t_min, ranking, rounds_per_decision) -> None:  # noqa: ANN001
    if algorithm not in TOPK_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {tuple(TOPK_ALGORITHMS)}, got {algorithm!r}.")
    if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= d:  # type: ignore[operator]
        raise ValueError(f"k must be an int between 1 and the number of players {d}, got {k!r}.")
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {RANKINGS}, got {ranking!r}.")
    for name, value, low in (("t_min", t_min, 2), ("rounds_per_decision", rounds_per_decision, 1)):
        if name == "rounds_per_decision" and value == "auto":
            continue
        if isinstance(value, bool) or not isinstance(value, Integral) or value < low:  # type: ignore[operator]
            raise ValueError(
                f"{name} must be an int >= {low}" + (' or "auto"' if low == 1 else "") + f", got {value!r}."
            )
    if not (isinstance(delta, Real) and 0 < delta < 1):  # type: ignore[operator]
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
    if epsilon is not None:
        if not (isinstance(epsilon, Real) and epsilon >= 0 and isfinite(epsilon)):  # type: ignore[operator]
            raise ValueError(f"epsilon must be None or a finite number >= 0, got {epsilon!r}.")
        if not TOPK_ALGORITHMS[algorithm].pac:
            pac = tuple(name for name, cls in TOPK_ALGORITHMS.items() if cls.pac)
            raise ValueError(f"PAC mode (epsilon) needs a algorithm with confidence bounds: one of {pac}.")
    if max_evals is None:
        if epsilon is None or epsilon == 0:
            raise ValueError(
                "max_evals=None runs until the PAC rule holds: give epsilon > 0 (players tied at the "
                "border never separate with epsilon = 0), or a budget."
            )
    elif isinstance(max_evals, bool) or not isinstance(max_evals, Integral) or max_evals < 2:
        raise ValueError(f"max_evals must be an int >= 2 (v(∅) and v(N) included), got {max_evals!r}.")
