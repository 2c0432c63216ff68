"""Games given explicitly, on the host: tables of all 2^d values, sums of unanimity games, callables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sklearn_shapq.games._enumeration import shapley_from_table
from sklearn_shapq.games._game import Game


class TableGame(Game):
    """A game given by the values of all 2^d coalitions (bit j of the index ↔ player j).

    Parameters
    ----------
    table : array of shape (2^d,) or (n_games, 2^d)
        Coalition values; one table may be shared by ``n_games`` games (repeated runs).
    n_games : int, optional
        Number of games sharing a single table.

    Examples
    --------
    >>> game = TableGame([0.0, 1.0, 2.0, 4.0])  # v({0}) = 1, v({1}) = 2, v({0, 1}) = 4
    >>> game.shapley_values()[:, :, 0]
    array([[1.5, 2.5]])
    >>> game([[True, True]]), game.n_evals
    (array([[4.]]), array([1]))
    """

    def __init__(self, table: Any, n_games: int | None = None) -> None:
        table = np.asarray(table, dtype=np.float64)
        shared = table.ndim == 1
        table = table.reshape(1, -1) if shared else table
        n_coalitions = table.shape[1] if table.ndim == 2 else 0
        d = max(n_coalitions.bit_length() - 1, 0)
        if table.ndim != 2 or n_coalitions != 1 << d or d < 1:
            raise ValueError(f"table must hold 2^d values per game (d >= 1), got shape {table.shape}.")
        if not np.isfinite(table).all():
            raise ValueError("table contains NaN or infinity.")
        if not shared and n_games not in (None, table.shape[0]):
            raise ValueError(f"n_games={n_games} does not match the {table.shape[0]} tables given.")
        super().__init__(d, (1 if n_games is None else n_games) if shared else table.shape[0])
        self.table = table
        self._bits = np.int64(1) << np.arange(d, dtype=np.int64)

    def evaluate(self, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        codes = masks.astype(np.int64) @ self._bits
        return self.table[0 if self.table.shape[0] == 1 else games, codes][:, None]

    def shapley_values(self) -> np.ndarray:
        """Exact Shapley values (n_games, d, 1) from the table."""
        phi = shapley_from_table(self.table[:, :, None], np)
        return np.broadcast_to(phi, (self.n_games, self.n_players, 1)).copy()


class UnanimityGame(Game):
    """A sum of unanimity games v(S) = Σ_R c_R 1[R ⊆ S], whose Shapley values are known.

    φ_i = Σ_{R ∋ i} c_R / r (r the size of R); ``carriers`` (n_terms, d) are the non-empty R, ``coefficients``
    (n_terms,) the c_R, ``n_games`` identical copies.

    Examples
    --------
    >>> game = UnanimityGame([[True, True, False], [False, False, True]], [2.0, 1.0])
    >>> game.shapley_values()[:, :, 0]
    array([[1., 1., 1.]])
    """

    def __init__(self, carriers: Any, coefficients: Any, n_games: int = 1) -> None:
        carriers = np.asarray(carriers, dtype=bool)
        coefficients = np.asarray(coefficients, dtype=np.float64)
        if carriers.ndim != 2 or coefficients.shape != (carriers.shape[0],):
            raise ValueError("carriers must be (n_terms, d) and coefficients (n_terms,).")
        if not carriers.any(axis=1).all():
            raise ValueError("every carrier must hold at least one player.")
        if not np.isfinite(coefficients).all():
            raise ValueError("coefficients contains NaN or infinity: every c_R must be finite.")
        super().__init__(carriers.shape[1], n_games)
        self.carriers = carriers
        self.coefficients = coefficients
        self._carrier_sizes = carriers.sum(axis=1)

    def evaluate(self, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        missing = (~masks).astype(np.float64) @ self.carriers.T.astype(np.float64)  # members of R absent
        return ((missing == 0) @ self.coefficients)[:, None]

    def shapley_values(self) -> np.ndarray:
        """Closed-form Shapley values (n_games, d, 1): φ_i = Σ_{R ∋ i} c_R / r (r = the size of R)."""
        phi = (self.carriers / self._carrier_sizes[:, None]).T @ self.coefficients
        return np.broadcast_to(phi[:, None], (self.n_games, self.n_players, 1)).copy()


def planted_unanimity_game(
    n_players: int,
    k: int,
    rng: np.random.Generator,
    *,
    n_terms: int = 24,
    max_order: int = 4,
    boost: float = 1.5,
    n_games: int = 1,
) -> UnanimityGame:
    """Draw a random sum of unanimity games with a planted top-k (Kolpaczki et al. 2025's test game).

    ``n_terms`` terms of size 1 … ``max_order`` with U(−1, 1) coefficients, plus ``boost`` on k random players.

    Examples
    --------
    >>> game = planted_unanimity_game(12, 3, np.random.default_rng(123))
    >>> game.n_players, game.carriers.shape[0]
    (12, 27)
    """
    sizes = rng.integers(1, min(max_order, n_players) + 1, size=n_terms)
    carriers = np.zeros((n_terms + k, n_players), dtype=bool)
    for term, size in enumerate(sizes):  # a few dozen terms, built once
        carriers[term, rng.choice(n_players, size, replace=False)] = True
    carriers[np.arange(n_terms, n_terms + k), rng.choice(n_players, k, replace=False)] = True
    coefficients = np.concatenate([rng.uniform(-1.0, 1.0, n_terms), np.full(k, boost)])
    return UnanimityGame(carriers, coefficients, n_games)


class CallableGame(Game):
    """A game from a user function of coalition masks.

    ``function(masks)`` (``function(masks, games)`` with ``n_games > 1``) maps bool masks (m, d) to
    (m,) values; NaN or infinity is a ValueError on evaluation.

    Examples
    --------
    >>> game = CallableGame(lambda masks: masks.sum(axis=1) ** 2.0, n_players=4)
    >>> game.shapley_values()[:, :, 0]
    array([[4., 4., 4., 4.]])
    """

    def __init__(self, function: Callable[..., Any], n_players: int, n_games: int = 1) -> None:
        if not callable(function):
            raise TypeError(f"function must be callable, got {type(function)!r}.")
        super().__init__(n_players, n_games)
        self.function = function

    def evaluate(self, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        out = self.function(masks) if self.n_games == 1 else self.function(masks, games)
        out = np.asarray(out, dtype=np.float64)
        if out.shape not in ((masks.shape[0],), (masks.shape[0], 1)):
            raise ValueError(f"The game function returned shape {out.shape} for {masks.shape[0]} coalitions.")
        out = out.reshape(-1, 1)
        bad = ~np.isfinite(out[:, 0])
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            value = "NaN" if np.isnan(out[first, 0]) else str(out[first, 0])
            raise ValueError(
                f"The game function {self.function!r} returned {value} for the coalition "
                f"{np.flatnonzero(masks[first]).tolist()} ({int(bad.sum())} of {bad.size} values NaN or infinite): "
                "a game's values must be finite numbers for every coalition: fix the function."
            )
        return out
