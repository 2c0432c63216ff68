"""Test helpers shared by the games, estimators and samplers tests: masks, counters, small models.

Everything that checks a value is written here without package code (the oracles live in
``brute_force.py``); the package is only used to build the objects under test.
"""

from itertools import permutations

import numpy as np
from scipy.stats import chisquare

from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.games import CallableGame, InterventionalGame, make_model_function
from sklearn_shapq.samplers import row_keys

from brute_force import brute_force_shapley, interventional_value, random_polynomial_model


def all_masks(d):
    """All 2^d coalitions, bit j of the row number ↔ player j."""
    codes = np.arange(2**d)
    return ((codes[:, None] >> np.arange(d)) & 1).astype(bool)


def codes_of(masks):
    """Integer code of each coalition (bit j ↔ player j)."""
    return masks.astype(np.int64) @ (np.int64(1) << np.arange(masks.shape[-1], dtype=np.int64))


def as_mask(players, d):
    mask = np.zeros(d, dtype=bool)
    mask[list(players)] = True
    return mask


def truth(f, X, background):
    """Exact interventional Shapley values (n, d) or (n, d, k) of the rows X, by the subset formula."""
    d = X.shape[1]
    return np.array([brute_force_shapley(lambda s, x=x: interventional_value(f, x, background, s), d) for x in X])


def pairwise_model(d, rng):
    """f(Z) = Z a + Σ_{i<j} b_ij Z_i Z_j: interactions of order two at most."""
    a, b = rng.normal(size=d), np.triu(rng.normal(size=(d, d)), 1)
    return lambda Z: Z @ a + np.einsum("ni,ij,nj->n", Z, b, Z)


def third_order(Z):
    return Z[:, 0] * Z[:, 1] * Z[:, 2] + Z[:, 3]


def polynomial_setup(seed, d, order, n_background=8, n_rows=1):
    rng = np.random.default_rng(seed)
    f = random_polynomial_model(d, rng, order=order, n_terms=12)
    return f, rng.normal(size=(n_background, d)), rng.normal(size=(n_rows, d))


class CountingModel:
    """A cheap model with interactions of every order that counts the rows and calls it receives."""

    def __init__(self, d):
        self.coef = np.linspace(-1, 1, d)
        self.rows = 0
        self.calls = 0

    def __call__(self, Z):
        self.rows += len(Z)
        self.calls += 1
        return np.tanh(Z @ self.coef) * Z[:, 0]


def interventional_game(f, background, X, backend=None, **kwargs):
    """The interventional game of model f (a callable) over ``background`` for the rows X."""
    backend = CpuBackend() if backend is None else backend
    model = make_model_function(f, "predict", backend)
    return InterventionalGame(model, backend.to_device(background), backend.to_device(X), **kwargs)


def run_estimator(name, game, max_evals, seed=0, keys=None, games=None, **options):
    """Plan estimator ``name`` for ``max_evals`` and estimate games ``games`` (default: all) of ``game``.

    ``keys`` default to the row keys of the game's explained rows (as the explainer keys them), or
    of the game indices for games without rows.
    """
    games = np.arange(game.n_games) if games is None else np.asarray(games)
    if keys is None:
        rows = game.backend.to_numpy(game.x)[games] if hasattr(game, "x") else games[:, None].astype(float)
        keys = row_keys(seed, rows)
    estimator = SHAPLEY_ALGORITHMS[name](max_evals, game.n_players, seed, **options)
    return estimator.estimate(game, games, np.asarray(keys, dtype=np.uint64)), estimator


class LoggingGame(CallableGame):
    """A table game that logs every batch of coalitions it is asked for: an independent counter."""

    def __init__(self, table, n_games=1):
        self.values = np.asarray(table, dtype=float)
        self.calls = []
        d = self.values.size.bit_length() - 1
        super().__init__(self._log, d, n_games)

    def _log(self, masks, games=None):
        games = np.zeros(len(masks), np.intp) if games is None else games
        self.calls.append((np.array(masks, copy=True), np.array(games, copy=True)))
        return self.values[codes_of(masks)]

    def logged(self):
        """All logged coalitions and their games, in call order."""
        if not self.calls:
            return np.zeros((0, self.n_players), bool), np.zeros(0, np.intp)
        return np.concatenate([m for m, _ in self.calls]), np.concatenate([g for _, g in self.calls])


def is_permutation_rows(orderings):
    d = orderings.shape[-1]
    return bool((np.sort(orderings, axis=-1) == np.arange(d)).all())


def permutation_pvalue(orderings):
    """Chi-square p-value of the counts of all d! orderings among the rows (uniform null)."""
    d = orderings.shape[1]
    index = {p: i for i, p in enumerate(permutations(range(d)))}
    counts = np.bincount([index[tuple(p)] for p in np.asarray(orderings).tolist()], minlength=len(index))
    return chisquare(counts).pvalue
