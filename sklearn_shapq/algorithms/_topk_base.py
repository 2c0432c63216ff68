"""The top-k estimator contract (Kolpaczki, Nielen & Hüllermeier 2025), its registry, and its two loops.

All games run in lockstep, keyed by their own keys: :func:`run_batched` for non-adaptive rounds,
:func:`run_adaptive` for a choice of players per step.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from math import ceil
from typing import Any, ClassVar

import numpy as np

from sklearn_shapq._registry import Registry
from sklearn_shapq.algorithms._registry import ShapleyEstimate
from sklearn_shapq.algorithms._topk_state import (
    Ledger,
    PlayerStats,
    confidence_bounds,
    pac_satisfied,
    ranking_key,
    top_k_mask,
)
from sklearn_shapq.backends import repeat_counts
from sklearn_shapq.samplers import KeyedStream

GAME_CELLS = 2**20
"""Most mask cells of one game built at once by the batched (non-adaptive) methods."""

AUTO_STALENESS = 0.1
"""``rounds_per_decision="auto"``: a step runs ceil(AUTO_STALENESS x rounds run so far) rounds."""

TOPK_ALGORITHMS: Registry[TopKAlgorithm] = Registry("top-k algorithm")
"""Every top-k algorithm, by the name a public class asks for (``algorithm=``)."""


class TopKAlgorithm(ABC):
    """One top-k algorithm: runs rounds against a :class:`Ledger` and returns per-game estimates.

    ``k`` is the size sought, ``z`` the Bonferroni quantile, ``epsilon`` the PAC tolerance (−inf:
    fixed budget), ``t_min`` the warm-up. ``rounds_per_decision``: rounds per choice of players
    (1: the paper's); "auto" is ceil(:data:`AUTO_STALENESS` x the rounds so far).
    """

    name: ClassVar[str]
    """The registered name (a subclass sets it and is registered with :func:`sklearn_shapq.register`)."""
    registry: ClassVar[Registry[TopKAlgorithm]] = TOPK_ALGORITHMS
    """Where :func:`sklearn_shapq.register` puts a subclass."""
    pac: ClassVar[bool] = True
    """Whether the algorithm keeps confidence bounds (PAC mode, ``pac_satisfied``)."""
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
        """Return the working memory of one game: its largest chunk of rounds (at most :data:`GAME_CELLS` cells)."""
        cells = GAME_CELLS if max_evals == np.inf else min(GAME_CELLS, (int(max_evals) + 1) * (d + 1))
        return 16 * cells + 40 * d * d

    def step_rounds(self, done: int) -> int:
        """Return the rounds of the next adaptive step, after ``done`` rounds (warm-up included)."""
        if self.rounds_per_decision == "auto":
            return max(1, ceil(AUTO_STALENESS * done))
        return self.rounds_per_decision  # type: ignore[return-value]

    minimum_needs: ClassVar[str]
    """What :meth:`minimum_evals` pays for, in words (the refusal's message)."""

    @classmethod
    @abstractmethod
    def minimum_evals(cls, d: int) -> int:
        """Smallest budget per game, v(∅) and v(N) included, that gives each of d >= 2 players what it needs."""

    @classmethod
    def refusal(cls, d: int, max_evals: int | None, t_min: int | None = None, pac: bool = False) -> str | None:
        """Why the algorithm cannot run with ``max_evals`` on d players (None: it can): below its minimum or warm-up."""
        if max_evals is None:
            return None
        needed = cls.minimum_evals(d)
        if max_evals < needed:
            return (
                f"max_evals={max_evals} is below the minimum of {needed} evaluations that algorithm {cls.name!r} needs "
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
    def run(self, ledger: Ledger, stream: KeyedStream) -> ShapleyEstimate:
        """Spend every game's budget; return its estimate on the ledger's backend.

        ``values``, ``stderr`` and ``counts`` of shape (n_games, d), ``n_evals`` the ledger's count,
        ``stats`` the player statistics (None for algorithms without confidence bounds).
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


def run_batched(ledger: Ledger, draw: Callable[[Any], Any], cost: int, cells: int, active: Any) -> None:
    """Run non-adaptive rounds in memory-bounded chunks until every game's budget is spent.

    ``draw(games)`` runs one round per entry and returns the entries cut short by the budget;
    ``cost`` bounds a round's cost from below, ``cells`` is its mask size. A chunk's rounds per
    game depend on that game alone.
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

    A step runs ``step_rounds(rounds so far)`` rounds (at most :data:`GAME_CELLS` mask cells a
    game); a game finishes when a round is cut short by its budget or ``stop`` holds.
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


def run_stats_method(estimator: Any, ledger: Ledger, body: Callable[[PlayerStats], None]) -> ShapleyEstimate:
    """Run ``body`` on fresh player statistics; return their estimate, stderr NaN below two samples."""
    stats = PlayerStats(ledger.n_games, ledger.n_players, ledger.xp)
    body(stats)
    return ShapleyEstimate(
        values=stats.mean,
        stderr=stats.stderr(ledger.xp.nan),
        dof=None,
        n_evals=ledger.used,
        counts=stats.count,
        stats=stats,
    )
