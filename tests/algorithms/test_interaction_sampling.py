"""sampled_pair_interactions against the exact indices of table games, and on the CUDA backend's strict twin."""

from itertools import combinations

import numpy as np
import pytest

from sklearn_shapq.algorithms import (
    _interaction_sampling,
    interactions_from_table,
    pair_design,
    regression_players,
    sampled_pair_interactions,
)
from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.games import InterventionalGame, TableGame, make_model_function
from sklearn_shapq.samplers import row_keys

from strict_twin import StrictBackend

D = 8


@pytest.fixture(scope="module")
def table():
    """A game of 8 players with effects of every order (a random table) on top of pairs."""
    rng = np.random.default_rng(5)
    masks = ((np.arange(2**D)[:, None] >> np.arange(D)) & 1).astype(float)
    pairs = np.triu(rng.normal(size=(D, D)), 1)
    return np.einsum("ci,ij,cj->c", masks, pairs, masks) + masks @ rng.normal(size=D) + 0.3 * rng.normal(size=2**D)


@pytest.mark.parametrize(
    ("border", "n_units", "index"),
    [
        (1, 8, "SII"),  # the additive surrogate, sampled
        (1, 30, "STII"),  # the additive surrogate, regression-adjusted
        (2, 13, "SII"),  # the order-2 surrogate, sampled (what d > 32 gets)
        (2, 20, "SII"),  # the order-2 surrogate, regression-adjusted
        (3, 8, "STII"),  # one middle size left
    ],
)
def test_every_design_is_unbiased_with_standard_errors_that_match_its_spread(table, border, n_units, index):
    n_draws = 3000
    game = TableGame(table, n_games=n_draws)
    estimate = sampled_pair_interactions(
        game, np.arange(n_draws), np.arange(1, n_draws + 1, dtype=np.uint64), n_units, index, border
    )
    exact = interactions_from_table(table[None, :, None], index)[0][0, :, :, 0]
    pairs = estimate.pairs[:, :, :, 0]
    off = ~np.eye(D, dtype=bool)
    spread = pairs.std(axis=0, ddof=1)[off]
    z = (pairs.mean(axis=0)[off] - exact[off]) / (spread / np.sqrt(n_draws))
    assert np.abs(z).max() < 4.5, z
    ratio = np.sqrt((estimate.pairs_stderr[:, :, :, 0][:, off] ** 2).mean(axis=0)) / spread
    # the regression's errors are widened (REGRESSION_STDERR_WIDENING) for coverage: up to 1.3x the spread
    assert 0.8 < np.median(ratio) < (1.4 if n_units >= 16 else 1.25), ratio
    assert estimate.dof[0] == n_units - 1


def test_the_regression_lowers_the_error_at_the_same_evaluations(table):
    # 100 evaluations at d = 8: 13 units on border 2 sampled as they are, or 41 on border 1 with the regression
    assert pair_design(100, D) == (1, 41)
    exact = interactions_from_table(table[None, :, None], "SII")[0][0, :, :, 0]
    game = TableGame(table, n_games=400)
    keys = np.arange(1, 401, dtype=np.uint64)
    errors = {}
    for border, n_units in ((2, 13), (1, 41)):
        pairs = sampled_pair_interactions(game, np.arange(400), keys, n_units, "SII", border).pairs[:, :, :, 0]
        errors[border] = np.sqrt(((pairs - exact) ** 2).mean())
    assert errors[1] < errors[2]


def test_the_regression_selects_the_pairs_that_fit_in_the_evaluations():
    # 1 + d + m (m - 1) / 2 coefficients within MAX_REGRESSION_FEATURES (529: all pairs up to d = 32)
    assert [regression_players(32, n) for n in (15, 16, 100)] == [0, 32, 32]
    assert [regression_players(d, 100) for d in (33, 100, 300, 527, 528)] == [31, 29, 21, 2, 0]


def test_a_regression_on_the_pairs_of_the_largest_slopes_is_unbiased(monkeypatch):
    """Where the pairs do not all fit, the fit has those of the players of the largest slopes; the rest are sampled.

    At d = 20 with the fit capped at 100 coefficients (529 in the package, where this starts at
    d = 33): the pairs of 13 players. The game is a polynomial's baseline game at z = 0,
    v(S) = f(x_S, 0), whose SII is known in closed form: SII_ij = c_ij x_i x_j + ½ Σ_k c_ijk x_i x_j x_k.
    """
    monkeypatch.setattr(_interaction_sampling, "MAX_REGRESSION_FEATURES", 100)
    d, n_draws = 20, 1000
    rng = np.random.default_rng(8)
    pairs = [tuple(rng.choice(d, 2, replace=False)) for _ in range(40)]
    triples = [tuple(rng.choice(d, 3, replace=False)) for _ in range(15)]
    c2, c3, c1 = rng.normal(size=len(pairs)), rng.normal(size=len(triples)), rng.normal(size=d)

    def model(Z):
        out = Z @ c1
        for c, (a, b) in zip(c2, pairs, strict=True):
            out = out + c * Z[:, a] * Z[:, b]
        for c, (a, b, e) in zip(c3, triples, strict=True):
            out = out + c * Z[:, a] * Z[:, b] * Z[:, e]
        return out

    x = rng.normal(size=d)
    exact = np.zeros((d, d))
    for c, (a, b) in zip(c2, pairs, strict=True):
        exact[a, b] += c * x[a] * x[b]
    for c, triple in zip(c3, triples, strict=True):
        for a, b in combinations(triple, 2):
            exact[a, b] += 0.5 * c * x[triple[0]] * x[triple[1]] * x[triple[2]]
    exact = exact + exact.T
    backend = CpuBackend()
    rows = np.repeat(x[None], n_draws, axis=0)
    game = InterventionalGame(make_model_function(model, "predict", backend), np.zeros((1, d)), rows)
    assert regression_players(d, 40) == 13
    estimate = sampled_pair_interactions(game, np.arange(n_draws), np.arange(1, n_draws + 1, dtype=np.uint64), 40)
    estimated = estimate.pairs[:, :, :, 0]
    off = ~np.eye(d, dtype=bool)
    spread = estimated.std(axis=0, ddof=1)[off]
    error = estimated.mean(axis=0)[off] - exact[off]
    noisy = spread > 1e-9
    assert np.abs(error[noisy] / (spread[noisy] / np.sqrt(n_draws))).max() < 4.5
    np.testing.assert_allclose(error[~noisy], 0.0, atol=1e-8)


def test_the_fit_prior_loosens_the_pairs_of_players_with_larger_slopes():
    """Penalties: 1 for the constant, MAIN_RIDGE_FACTOR for main effects, PAIR_RIDGE_FACTOR / √(s_u s_v) for pairs.

    s_u: the summed border slopes |v({u}) − v(∅) + v(N) − v(N ∖ {u})| over outputs, over their mean across the
    players whose pairs are fitted (at least 1e-3); the same for a game scaled by any factor.
    """
    singles = np.array([[[1.0, 0.0], [2.0, 1.0], [0.0, 0.0], [0.5, 0.5]]])  # (1 game, d = 4, 2 outputs)
    lasts = np.array([[[1.0, 0.0], [0.0, -1.0], [0.0, 0.0], [-1.5, -0.5]]])
    penalties = _interaction_sampling._pair_penalties(singles, lasts, None, np)
    size = np.array([2.0, 2.0, 0.0, 1.0])  # Σ_k |singles + lasts|; mean 1.25
    relative = np.maximum(size / 1.25, 1e-3)
    first, second = np.triu_indices(4, 1)
    expected = np.concatenate([[1.0], np.full(4, _interaction_sampling.MAIN_RIDGE_FACTOR)])
    pairs = _interaction_sampling.PAIR_RIDGE_FACTOR / np.sqrt(relative[first] * relative[second])
    np.testing.assert_allclose(penalties[0], np.concatenate([expected, pairs]))
    assert pairs[0] < pairs[2] < pairs[1]  # (0, 1) both large, (0, 3), (0, 2) with a null player
    np.testing.assert_allclose(_interaction_sampling._pair_penalties(-7 * singles, -7 * lasts, None, np), penalties)
    selected = np.array([[0, 3]])  # the pair of players 0 and 3 only (slopes over their mean, 1.5), all main effects
    chosen = _interaction_sampling._pair_penalties(singles, lasts, selected, np)
    pair = _interaction_sampling.PAIR_RIDGE_FACTOR / np.sqrt((2.0 / 1.5) * (1.0 / 1.5))
    np.testing.assert_allclose(chosen[0], np.concatenate([expected, [pair]]))
    flat = _interaction_sampling._pair_penalties(0 * singles, 0 * lasts, None, np)  # no slopes: no player favoured
    np.testing.assert_allclose(flat[0, 5:], _interaction_sampling.PAIR_RIDGE_FACTOR)


@pytest.mark.parametrize(("d", "border", "n_units"), [(8, 1, 8), (8, 2, 13), (8, 2, 20), (8, 1, 30), (34, 1, 16)])
def test_the_cupy_code_path_gives_the_cpu_values(d, border, n_units):
    """The estimator on the numpy twins of the CUDA backend: the strict one refuses, as cupy does, any
    host array meeting a device array (an index included)."""
    rng = np.random.default_rng(6)
    background, rows = rng.normal(size=(5, d)), rng.normal(size=(3, d))

    def model(Z):
        return Z[:, 0] * Z[:, 1] * Z[:, 2] - abs(Z[:, 3]) * Z[:, 4] + Z[:, 5] * Z[:, 6] * Z[:, 7]

    def run(backend):
        function = make_model_function(model, "predict", backend)
        game = InterventionalGame(function, backend.to_device(background), backend.to_device(rows))
        estimate = sampled_pair_interactions(game, np.arange(3), row_keys(1, rows), n_units, "SII", border)
        return [backend.to_numpy(a) for a in (estimate.pairs, estimate.pairs_stderr, estimate.row_sums_stderr)]

    expected = run(CpuBackend())
    for backend in (ArrayBackend(np, "numpy-twin"), StrictBackend()):
        for got, want in zip(run(backend), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
