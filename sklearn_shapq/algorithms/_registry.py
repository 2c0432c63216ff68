"""The registry of Shapley algorithms (:data:`SHAPLEY_ALGORITHMS`) and their one result, :class:`ShapleyEstimate`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sklearn_shapq._registry import Registry

DEFAULT_MASK_BYTES = 64 * 2**20
"""Most bytes of coalition masks (and their host random draws) built at once."""


@dataclass
class ShapleyEstimate:
    """Shapley estimates of a block of B games: what every algorithm returns, Shapley or top-k.

    Attributes
    ----------
    values : array of shape (B, d, n_outputs), or (B, d) from a top-k algorithm
    stderr : array of the shape of ``values``
        0 for exact values, NaN where not estimable.
    dof : ndarray of shape (B,) or None
        Degrees of freedom of the standard errors (inf: normal quantiles); None from top-k.
    n_evals : int array of shape (B,)
        Evaluations each game used, v(∅) and v(N) included (top-k: the ledger's, on the backend).
    counts : array of shape (B, d) or None
        Top-k: samples per player.
    stats : PlayerStats or None
        Top-k: the player statistics behind the confidence bounds.
    """

    values: Any
    stderr: Any
    dof: Any
    n_evals: Any
    counts: Any = None
    stats: Any = None


@dataclass(frozen=True)
class RowParts:
    """Which row and background part each game is, where rows are split by background parts (``background_parts``).

    The ``n_parts`` games of a row are its parts' games (:meth:`ShapleyAlgorithm.estimate_parts`); an
    algorithm may draw them jointly (Leverage SHAP spreads each size class over the parts) as long as
    each part alone is drawn as an unsplit game would be, so that every part's estimate keeps its
    distribution.

    Attributes
    ----------
    row_keys : uint64 ndarray of shape (B,)
        The key of each game's row (one key for all its parts).
    part : int ndarray of shape (B,)
        Each game's part, 0 … ``n_parts`` − 1.
    n_parts : int
    """

    row_keys: np.ndarray
    part: np.ndarray
    n_parts: int


SHAPLEY_ALGORITHMS: Registry[ShapleyAlgorithm] = Registry("Shapley algorithm", reserved=("auto",))
"""Every Shapley algorithm, by the name a public class asks for (``algorithm=``).

Besides its own classes it holds the permutation walk over every registered ordering source, under
the source's name (derived from :data:`~sklearn_shapq.samplers.ORDERING_SOURCES`)."""


class ShapleyAlgorithm(ABC):
    """One Shapley algorithm, planned for ``max_evals`` evaluations per game; one class per registered ``name``.

    ``max_evals`` counts v(∅) and v(N) (at least :meth:`minimum_evals`); a game's draws come from
    (``seed``, its key); ``**options`` (``tol``, ``lam``, …) are ignored where unused. ``n_evals``
    is what the plan spends.
    """

    name: ClassVar[str]
    """The registered name."""

    registry: ClassVar[Registry[ShapleyAlgorithm]] = SHAPLEY_ALGORITHMS
    """Where :func:`sklearn_shapq.register` puts a subclass."""

    efficient: ClassVar[bool] = True
    """Whether values sum to v(N) − v(∅) exactly."""

    supports_tol: ClassVar[bool] = False
    """Whether the estimator can stop a game early once its standard errors are below ``tol``."""

    def __init__(self, max_evals: int, n_players: int, seed: int, **options: Any) -> None:
        self.n_players = n_players
        self.seed = seed
        self.options = options
        self.n_evals = self.plan(max_evals)

    @classmethod
    @abstractmethod
    def minimum_evals(cls, n_players: int) -> int:
        """Smallest budget the algorithm runs with on d players."""

    @classmethod
    def refusal(cls, max_evals: int, n_players: int) -> str | None:
        """Why the budget cannot run (None when it can): checked before any work."""
        needed = cls.minimum_evals(n_players)
        if max_evals < needed:
            return (
                f"max_evals={max_evals} is below the minimum of algorithm {cls.name!r} for {n_players} features "
                f"({needed} evaluations of the value function per row)."
            )
        return None

    @classmethod
    def draws_per_game(cls) -> bool:
        """Whether each game's coalitions are drawn from its own key (False: enumeration, shared designs)."""
        return True

    @abstractmethod
    def plan(self, max_evals: int) -> int:
        """Set the sample sizes for ``max_evals`` and return the evaluations spent per game."""

    @abstractmethod
    def estimate(self, game: Any, games: np.ndarray, keys: np.ndarray) -> ShapleyEstimate:
        """Estimate the Shapley values of games ``games`` (B,) of ``game``, with keys ``keys`` (B,).

        Games that are background parts of split rows come through :meth:`estimate_parts`.
        """

    def estimate_parts(self, game: Any, games: np.ndarray, keys: np.ndarray, parts: RowParts) -> ShapleyEstimate:
        """Estimate games that are background parts of split rows (``parts``: each game's row and part).

        By default each part is drawn alone from its own key (:meth:`estimate`); an algorithm may
        override this to draw a row's parts jointly.
        """
        return self.estimate(game, games, keys)

    @abstractmethod
    def bytes_per_game(self, n_outputs: int) -> int:
        """Working memory one game needs at once (masks, draws, unit values): bounds the games per block."""
