"""Top-k Shapley identification: the driver that validates, keys the games and runs a registered method.

Kolpaczki, Nielen & Hüllermeier (2025), "Antithetic Sampling for Top-k Shapley Identification"
(spec/topk_cmcs.md). The methods live one family per module (``_topk_cmcs``,
``_topk_permutation``, ``_topk_svarm``) and are looked up in
:data:`~sklearn_shapq.algorithms._topk_base.TOPK_ALGORITHMS`. Budgets count evaluations per
game, v(∅) and v(N) included (cached and charged once); a coalition equal to ∅ or N is free
afterwards.
"""

from __future__ import annotations

import warnings
from math import isfinite
from numbers import Integral, Real
from typing import Any

import numpy as np

from sklearn_shapq._random import make_generator
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
from sklearn_shapq.samplers import KeyedStream, row_keys
from sklearn_shapq.samplers._keyed import draw_seed


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
    method : str, default="greedy_cmcs"
        "cmcs" (Comparable Marginal Contributions Sampling: every player, every round),
        "greedy_cmcs" (after t_min CMCS rounds, rounds sample the players of pairs likely to be
        mis-ordered), "cmcs_at_k" (SHAP@K with CMCS: the two most overlapping players per round,
        on one coalition), or a baseline: "permutation" (ApproShapley), "sampling_shap_at_k"
        (SHAP@K with permutation sampling), "svarm", "stratified_svarm" (the paper's variant), or
        "leverage" (Leverage SHAP's regression on the whole budget; not in the paper).
    max_evals : int or None
        Evaluations per game including v(∅) and v(N); None (PAC mode only): until the rule holds.
        At least the method's ``minimum_evals(d)`` and, in PAC mode, its warm-up.
    epsilon : float or None
        PAC mode: stop a game once max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i <= epsilon (units of v).
        Only methods with confidence bounds (``TOPK_ALGORITHMS[method].pac``).
    delta : float, default=0.01
        Error probability of the confidence bounds (Bonferroni over the d players).
    t_min : int, default=30
        Warm-up rounds (CMCS family) or permutations (SHAP@K) before bounds are trusted.
    ranking : {"signed", "absolute"}, default="signed"
        Rank players by their values or by their magnitudes (adaptive methods then also sample
        for the magnitude ranking).
    rounds_per_decision : int or "auto", default=1
        Adaptive methods: rounds run on one choice of players (and between checks of the PAC
        rule). 1 is the paper's algorithm; more give fewer, larger game calls (faster on models
        with a per-call cost, or on a GPU) on choices up to ``rounds_per_decision - 1`` rounds
        old. "auto": a tenth of the rounds run so far (warm-up included), at least 1.
    random_state : None, int or Generator
        Seed of the games' keys when ``keys`` is not given.
    keys : uint64 array of shape (n_games,), optional
        Each game's key (e.g. :func:`~sklearn_shapq.samplers.row_keys` of explained rows): a game's
        draws depend on its key alone, so equal keys give equal results in any company. Default:
        keys of the game indices under ``random_state`` (independent repeated runs).
    outputs : int array of shape (n_games,), optional
        Which output of a multi-output game each game ranks (default 0).

    Returns
    -------
    TopKResult

    Raises
    ------
    ValueError
        A budget below the method's minimum (or its warm-up in PAC mode), before any evaluation;
        a game value that is NaN or infinite; estimates that overflow.

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
    _check_arguments(d, k, method, max_evals, epsilon, delta, t_min, ranking, rounds_per_decision)
    family = TOPK_ALGORITHMS[method]
    reason = family.refusal(d, max_evals, t_min, epsilon is not None) if d > 1 else None
    if reason is not None:
        raise ValueError(reason)
    warm_up = family.warm_up_evals(d, t_min)
    if family.adaptive and max_evals is not None and max_evals < warm_up and d > 1:
        warnings.warn(
            f"max_evals={max_evals} does not cover {method}'s warm-up of about {warm_up} evaluations "
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
        values, stderr, counts = stats.mean, stats.stderr(), stats.count
    else:
        estimator = family(k, z, eps, t_min, ranking, rounds_per_decision)
        values, stderr, counts, stats = estimator.run(ledger, KeyedStream(keys, xp))
    key = ranking_key(values, ranking)
    if stats is None:  # no confidence bounds (the SVARM family)
        satisfied = xp.zeros(n_games, dtype=bool)
    else:
        satisfied = pac_satisfied(stats, top_k_mask(key, k, xp), z, max(eps, 0.0), t_min if d > 1 else 1, ranking)
    to_numpy = game.backend.to_numpy  # the one copy to the host: the results
    values = to_numpy(values)
    if not np.isfinite(values).all():  # a game value the ledger did not see, or differences that overflow
        raise ValueError(
            f"The {method} estimates came out NaN or infinite: the game gave NaN or infinity for a coalition, or "
            "differences of its values overflow float64. Make the game's values finite, or rescale them."
        )
    return TopKResult(
        values=values,
        stderr=to_numpy(stderr),
        counts=to_numpy(counts).astype(np.int64),
        top_k=to_numpy(top_k_indices(key, k, xp)),
        n_evals=to_numpy(ledger.used).copy(),
        pac_satisfied=to_numpy(satisfied),
    )


def _check_arguments(d, k, method, max_evals, epsilon, delta, t_min, ranking, rounds_per_decision) -> None:  # noqa: ANN001
    if method not in TOPK_ALGORITHMS:
        raise ValueError(f"method must be one of {tuple(TOPK_ALGORITHMS)}, got {method!r}.")
    if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= d:
        raise ValueError(f"k must be an int between 1 and the number of players {d}, got {k!r}.")
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {RANKINGS}, got {ranking!r}.")
    for name, value, low in (("t_min", t_min, 2), ("rounds_per_decision", rounds_per_decision, 1)):
        if name == "rounds_per_decision" and value == "auto":
            continue
        if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
            raise ValueError(
                f"{name} must be an int >= {low}" + (' or "auto"' if low == 1 else "") + f", got {value!r}."
            )
    if not (isinstance(delta, Real) and 0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
    if epsilon is not None:
        if not (isinstance(epsilon, Real) and epsilon >= 0 and isfinite(epsilon)):
            raise ValueError(f"epsilon must be None or a finite number >= 0, got {epsilon!r}.")
        if not TOPK_ALGORITHMS[method].pac:
            pac = tuple(name for name, cls in TOPK_ALGORITHMS.items() if cls.pac)
            raise ValueError(f"PAC mode (epsilon) needs a method with confidence bounds: one of {pac}.")
    if max_evals is None:
        if epsilon is None or epsilon == 0:
            raise ValueError(
                "max_evals=None runs until the PAC rule holds: give epsilon > 0 (players tied at the "
                "border never separate with epsilon = 0), or a budget."
            )
    elif isinstance(max_evals, bool) or not isinstance(max_evals, Integral) or max_evals < 2:
        raise ValueError(f"max_evals must be an int >= 2 (v(∅) and v(N) included), got {max_evals!r}.")
