"""The registry of Shapley estimators: each family is a class that owns its name, budget and estimate.

A public class looks an estimator up by name in :data:`SHAPLEY_ALGORITHMS` and never branches on
names. Adding an estimator is one module with one :func:`register_algorithm` call: the class says
its minimum budget, plans a budget (:meth:`ShapleyAlgorithm.__init__`), and estimates the Shapley
values of some games of a :class:`~sklearn_shapq.games.Game` (:meth:`ShapleyAlgorithm.estimate`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

DEFAULT_MASK_BYTES = 64 * 2**20
"""Most bytes of coalition masks (and their host random draws) built at once."""


@dataclass
class ShapleyEstimate:
    """Shapley estimates of a block of games (explained rows).

    Attributes
    ----------
    values : array of shape (B, d, k), on the game's backend
    stderr : array of shape (B, d, k), on the game's backend
        Standard errors (0 for exact values, NaN where not estimable).
    dof : ndarray of shape (B,)
        Degrees of freedom of each row's standard errors (inf: normal quantiles).
    n_evals : ndarray of shape (B,)
        Value-function evaluations each row used, v(∅) and v(N) included.
    """

    values: Any
    stderr: Any
    dof: np.ndarray
    n_evals: np.ndarray


class ShapleyAlgorithm(ABC):
    """One estimator family, planned for a budget of ``max_evals`` evaluations per game.

    Parameters
    ----------
    name : str
        The registered name it was looked up by (a family may serve several names).
    max_evals : int
        Evaluations of v per game, v(∅) and v(N) included; at least :meth:`minimum_evals`.
    n_players : int
        Number of players d (at least 2).
    seed : int
        Seed of the call; each game's draws come from (seed, the game's key).
    **options
        Family options (``tol``, ``lam``, ``n_candidates``); families ignore those they lack.

    Attributes
    ----------
    n_evals : int
        Evaluations per game the plan spends (at most ``max_evals``).
    """

    efficient: ClassVar[bool] = True
    """Whether values sum to v(N) − v(∅) exactly."""

    supports_tol: ClassVar[bool] = False
    """Whether the estimator can stop a game early once its standard errors are below ``tol``."""

    def __init__(self, name: str, max_evals: int, n_players: int, seed: int, **options: Any) -> None:
        self.name = name
        self.n_players = n_players
        self.seed = seed
        self.options = options
        self.n_evals = self.plan(max_evals)

    @classmethod
    @abstractmethod
    def minimum_evals(cls, name: str, n_players: int) -> int:
        """Smallest budget the family runs with on d players."""

    @classmethod
    def refusal(cls, name: str, max_evals: int, n_players: int) -> str | None:
        """Why the budget cannot run (None when it can): checked before any work."""
        needed = cls.minimum_evals(name, n_players)
        if max_evals < needed:
            return (
                f"max_evals={max_evals} is below the minimum of sampler {name!r} for {n_players} features "
                f"({needed} evaluations of the value function per row)."
            )
        return None

    @classmethod
    def draws_per_game(cls, name: str) -> bool:
        """Whether each game's coalitions are drawn from its own key.

        Games split by parts of the background (:class:`~sklearn_shapq.games.InterventionalGame` with
        ``parts``) then see
        different coalitions. False for enumeration and for designs that every game shares.
        """
        return True

    @abstractmethod
    def plan(self, max_evals: int) -> int:
        """Set the sample sizes for ``max_evals`` and return the evaluations spent per game."""

    @abstractmethod
    def estimate(self, game: Any, games: np.ndarray, keys: np.ndarray) -> ShapleyEstimate:
        """Estimate the Shapley values of games ``games`` (B,) of ``game``, with row keys ``keys`` (B,)."""

    @abstractmethod
    def bytes_per_game(self, n_outputs: int) -> int:
        """Working memory one game needs at once (masks, draws, unit values): bounds the games per block."""


SHAPLEY_ALGORITHMS: dict[str, type[ShapleyAlgorithm]] = {}
"""Every Shapley estimator, by the sampler name a public class asks for."""


def register_algorithm(*names: str) -> Any:
    """Class decorator: make an estimator family available under ``names``."""

    def register(cls: type[ShapleyAlgorithm]) -> type[ShapleyAlgorithm]:
        for name in names:
            SHAPLEY_ALGORITHMS[name] = cls
        return cls

    return register
