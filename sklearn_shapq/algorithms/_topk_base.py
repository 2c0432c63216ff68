"""The top-k estimator contract, its registry, and the two loops every method runs in.

Each top-k method (Kolpaczki, Nielen & Hüllermeier 2025; spec/topk_cmcs.md) is one class
registered by name in :data:`TOPK_ALGORITHMS`. All ``n_games`` games of a game run in lockstep:
non-adaptive rounds in memory-bounded chunks (:func:`run_batched`), adaptive ones a decision per
game per step (:func:`run_adaptive`: one round per decision, as in the paper, or several), each
step one batched game call. Draws come from a
:class:`~sklearn_shapq.samplers.KeyedStream` and chunks hold a fixed number of a game's rounds, so a
game's result depends on its own key and values alone.

Every array of a run (games, masks, draws, values, statistics) lives in the game's array namespace
``ledger.xp``: numpy, or cupy on a GPU. The loops branch in Python only on how many games are still
active (the sizes of boolean selections) and, for a batched chunk, on its number of rounds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from math import ceil
from typing import Any, ClassVar

import numpy as np

from sklearn_shapq.algorithms._topk_state import (
    Ledger,
    PlayerStats,
    confidence_bounds,
    pac_satisfied,
    ranking_key,
    top_k_mask,
)
from sklearn_shapq.backends._array_ops import repeat_counts
from sklearn_shapq.samplers import KeyedStream

GAME_CELLS = 2**20
"""Most mask cells of one game built at once by the batched (non-adaptive) methods."""

AUTO_STALENESS = 0.1
"""``rounds_per_decision="auto"``: a step runs ceil(AUTO_STALENESS x rounds run so far) rounds."""


class TopKAlgorithm(ABC):
    """One top-k method: runs rounds against a :class:`Ledger` and returns per-game estimates.

    Parameters
    ----------
    k : int
        Size of the set sought.
    z : float
        Bonferroni quantile of the confidence bounds.
    epsilon : float
        PAC tolerance; −inf in fixed-budget mode (never stop on the rule).
    t_min : int
        Warm-up rounds before bounds are trusted.
    ranking : {"signed", "absolute"}
    rounds_per_decision : int or "auto", default=1
        Rounds an adaptive step runs on one choice of players before choosing again (and before
        checking the PAC rule again). 1 is the paper's algorithm; more rounds mean fewer, larger
        game calls (a deviation: choices use statistics up to ``rounds_per_decision - 1`` rounds
        old). "auto": ceil(:data:`AUTO_STALENESS` x the rounds run so far, warm-up included), so a
        choice never misses more than a tenth of the rounds, and the number of steps grows with
        the logarithm of the budget rather than linearly.
    """

    name: ClassVar[str]
    pac: ClassVar[bool] = True
    """Whether the method keeps confidence bounds (PAC mode, ``pac_satisfied``)."""
    adaptive: ClassVar[bool] = False
    """Whether rounds depend on earlier ones (a warm-up precedes them)."""

    def __init__(
        self, k: int, z: float, epsilon: float, t_min: int, ranking: str, rounds_per_decision: int | str = 1
    ) -> None:
        self.k, self.z, self.epsilon, self.t_min, self.ranking = k, z, epsilon, t_min, ranking
        self.rounds_per_decision = rounds_per_decision

    @classmethod
    def warm_up_evals(cls, d: int, t_min: int) -> int:
        """Return the warm-up evaluations per game: v(∅), v(N) and t_min CMCS rounds of d + 1."""
        return 2 + t_min * (d + 1)

    @classmethod
    def bytes_per_game(cls, d: int, max_evals: float) -> int:
        """Return the working memory of one game: its largest chunk of rounds, masks and floats.

        A chunk holds at most :data:`GAME_CELLS` mask cells, and never more rounds than the budget
        pays, so a small budget lets many rows share a block (and the model calls).
        """
        cells = GAME_CELLS if max_evals == np.inf else min(GAME_CELLS, (int(max_evals) + 1) * (d + 1))
        return 16 * cells + 40 * d * d

    def step_rounds(self, done: int) -> int:
        """Return the rounds of the next adaptive step, after ``done`` rounds (warm-up included)."""
        if self.rounds_per_decision == "auto":
            return max(1, ceil(AUTO_STALENESS * done))
        return self.rounds_per_decision

    minimum_needs: ClassVar[str]
    """What :meth:`minimum_evals` pays for, in words (the refusal's message)."""

    @classmethod
    @abstractmethod
    def minimum_evals(cls, d: int) -> int:
        """Smallest budget per game, v(∅) and v(N) included, that gives each of d >= 2 players what it needs."""

    @classmethod
    def refusal(cls, d: int, max_evals: int | None, t_min: int | None = None, pac: bool = False) -> str | None:
        """Why the method cannot run with ``max_evals`` on d players (None: it can); checked before any work.

        A budget below :meth:`minimum_evals`, or, in PAC mode (``pac``), below the warm-up of
        ``t_min`` rounds: the rule trusts the bounds only after it, so it could never hold.
        """
        if max_evals is None:
            return None
        needed = cls.minimum_evals(d)
        if max_evals < needed:
            return (
                f"max_evals={max_evals} is below the minimum of {needed} evaluations that method {cls.name!r} needs "
                f"for d = {d} players ({cls.minimum_needs}): raise max_evals to at least {needed}."
            )
        if pac and cls.pac and t_min is not None and max_evals < cls.warm_up_evals(d, t_min):
            return (
                f"max_evals={max_evals} is below the {cls.warm_up_evals(d, t_min)} evaluations of {cls.name}'s "
                f"warm-up for d = {d} players and t_min={t_min}: PAC mode (epsilon) trusts its confidence bounds "
                "only after the warm-up, so its rule could never hold. Raise max_evals or lower t_min."
            )
        return None

    @abstractmethod
    def run(self, ledger: Ledger, stream: KeyedStream) -> tuple[Any, Any, Any, PlayerStats | None]:
        """Spend every game's budget; return values, standard errors, sample counts (n_games, d) and the stats.

        All four on the ledger's backend; the stats are None for methods without confidence bounds.
        """

    def stop_rule(self, stats: PlayerStats) -> Callable[[Any], Any]:
        """Which active games satisfy the PAC rule (never in fixed-budget mode)."""
        xp = stats.xp

        def stop(games: Any) -> Any:
            if self.epsilon == -np.inf:
                return xp.zeros(games.size, dtype=bool)
            sub = stats.subset(games)
            in_top = top_k_mask(ranking_key(sub.mean, self.ranking), self.k, xp)
            return pac_satisfied(sub, in_top, self.z, self.epsilon, self.t_min, self.ranking)

        return stop

    def border_pair(self, stats: PlayerStats, games: Any) -> Any:
        """SHAP@K's pair: h = argmin LCB in the top-k, l = argmax UCB outside; as a (r, d) mask."""
        xp = stats.xp
        sub = stats.subset(games)
        in_top = top_k_mask(ranking_key(sub.mean, self.ranking), self.k, xp)
        lower, upper = confidence_bounds(sub, self.z, self.ranking)
        selected = xp.zeros(in_top.shape, dtype=bool)
        rows = xp.arange(games.size)
        selected[rows, xp.where(in_top, lower, xp.inf).argmin(axis=1)] = True
        if self.k < in_top.shape[1]:
            selected[rows, xp.where(in_top, -xp.inf, upper).argmax(axis=1)] = True
        return selected


TOPK_ALGORITHMS: dict[str, type[TopKAlgorithm]] = {}
"""Every top-k method, by name."""


def register_topk(cls: type[TopKAlgorithm]) -> type[TopKAlgorithm]:
    """Class decorator: make a top-k method available under its ``name``."""
    TOPK_ALGORITHMS[cls.name] = cls
    return cls


def run_batched(ledger: Ledger, draw: Callable[[Any], Any], cost: int, cells: int, active: Any) -> None:
    """Run non-adaptive rounds in memory-bounded chunks until every game's budget is spent.

    ``draw(games)`` runs one round per entry of ``games`` (a game's rounds consecutive) and
    returns which entries were cut short by the budget; ``cost`` is a lower bound on a round's
    cost, ``cells`` its mask size. A chunk holds min(GAME_CELLS // cells, rounds the budget still
    pays) rounds of each game: a number that depends on that game alone.
    """
    xp = ledger.xp
    per_chunk = max(1, GAME_CELLS // max(1, cells))
    while active.size:
        rounds = xp.minimum(per_chunk, ledger.remaining[active] // max(cost, 1) + 1).astype(xp.int64)
        games = repeat_counts(active, rounds, xp)
        short = draw(games)
        exhausted = xp.zeros(ledger.n_games, dtype=bool)
        exhausted[games[short]] = True
        active = active[~exhausted[active] & (ledger.remaining[active] > 0)]


def run_adaptive(
    ledger: Ledger,
    stats: PlayerStats,
    active: Any,
    choose: Callable[[Any], Any],
    sample: Callable[[Any, Any], tuple[Any, Any]],
    stop: Callable[[Any], Any],
    step_rounds: Callable[[int], int],
    done: int,
) -> None:
    """Per step, ``choose`` players for each active game, ``sample`` them in rounds, drop finished games.

    A step runs ``step_rounds(rounds run so far)`` rounds, starting from ``done`` (the warm-up),
    at most :data:`GAME_CELLS` mask cells of a game; every active game has run the same rounds, so
    a game's steps do not depend on the others. A game is finished when its budget is spent (a
    round was cut short) or ``stop`` holds.
    """
    xp = ledger.xp
    active = active[~stop(active)]  # the rule may already hold after the warm-up
    cut = xp.zeros(ledger.n_games, dtype=bool)
    most_rounds = max(1, GAME_CELLS // (ledger.n_players + 1) ** 2)
    while active.size:
        rounds = min(step_rounds(done), most_rounds)
        done += rounds
        selected = choose(active)
        games = xp.repeat(active, rounds)
        repeated = xp.repeat(selected, rounds, axis=0)
        samples, taken = sample(games, repeated)
        stats.add(games, samples, taken)
        cut[games[(repeated & ~taken).any(axis=1)]] = True
        active = active[~cut[active] & (ledger.remaining[active] > 0)]
        active = active[~stop(active)]


def everyone_selected(games: Any, d: int, xp: Any = np) -> Any:
    """Every player selected in every round (r, d)."""
    return xp.ones((games.size, d), dtype=bool)


def run_stats_method(estimator: Any, ledger: Ledger, body: Callable[[PlayerStats], None]) -> tuple:
    """Run ``body`` on fresh player statistics; return (values, stderr, counts, stats), stderr NaN below two samples."""
    stats = PlayerStats(ledger.n_games, ledger.n_players, ledger.xp)
    body(stats)
    return stats.mean, stats.stderr(ledger.xp.nan), stats.count, stats
