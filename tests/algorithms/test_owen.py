"""Owen and Owen-halved estimators against brute force, the multilinear extension, and their budgets.

Statistical checks explain one row repeated R times under R distinct row keys in a single call:
every key draws its own masks, so the R estimates are R independent runs.
"""

from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import t as student_t

import sklearn_shapq.algorithms._owen as owen_module
from sklearn_shapq.algorithms import OwenAlgorithm, OwenHalvedAlgorithm, combine_units, owen_plan, owen_units
from sklearn_shapq.algorithms._owen import OWEN_RUNS, trapezoid_weights
from sklearn_shapq.samplers import row_keys

from brute_force import interventional_value, random_polynomial_model
from game_helpers import CountingModel, interventional_game, pairwise_model, polynomial_setup, third_order, truth


def distinct_keys(n, seed=0):
    return row_keys(seed, np.arange(n, dtype=float)[:, None])


def owen(game, n_q, *, seed=0, keys=None, halved=False, runs=OWEN_RUNS):
    """Owen estimates (values, stderr) of every row of ``game``; keys default to the rows' keys."""
    keys = row_keys(seed, game.x) if keys is None else keys
    units = owen_units(game, np.arange(game.n_games), keys, n_q, halved=halved, runs=runs)
    return combine_units(units, np)


def repeated(f, background, x, n_runs):
    return interventional_game(f, background, np.repeat(x, n_runs, axis=0)), distinct_keys(n_runs)


def oracle(f, x, background):
    """Cached v_x(S) on sorted tuples, independent of package code."""
    return lru_cache(maxsize=None)(lambda s: interventional_value(f, x, background, s))


def multilinear_gain(value, d, i, q):
    """e_i(q) = E[v(E ∪ {i}) − v(E)], E ⊆ N ∖ {i} with independent inclusion probability q."""
    others = [j for j in range(d) if j != i]
    total = 0.0
    for size in range(d):
        for s in combinations(others, size):
            total = total + q**size * (1 - q) ** (d - 1 - size) * (value(tuple(sorted(s + (i,)))) - value(s))
    return total


# ---------------------------------------------------------------- exactness


@pytest.mark.parametrize("seed", range(4))
def test_owen_halved_exact_for_pairwise_games(seed):
    d = 5
    f, background, _ = polynomial_setup(seed, d, order=2)
    X = np.random.default_rng(100 + seed).normal(size=(3, d))
    game = interventional_game(f, background, X)
    expected = truth(f, X, background)
    for n_q in (2, 4, 6):
        estimate, stderr = owen(game, n_q, seed=seed, halved=True)
        np.testing.assert_allclose(estimate[..., 0], expected, atol=1e-10, rtol=0)
        np.testing.assert_allclose(stderr, 0.0, atol=1e-10)


def test_owen_halved_not_exact_with_a_three_way_term():
    d = 5
    rng = np.random.default_rng(0)
    background, X = rng.normal(size=(8, d)), rng.normal(size=(3, d))
    estimate, _ = owen(interventional_game(third_order, background, X), 6, halved=True)
    assert np.abs(estimate[..., 0] - truth(third_order, X, background)).max() > 1e-3


def test_plain_owen_not_exact_for_pairwise_games():
    d = 5
    f, background, x = polynomial_setup(0, d, order=2)
    estimate, _ = owen(interventional_game(f, background, x), 6)
    assert np.abs(estimate[0, :, 0] - truth(f, x, background)[0]).max() > 1e-3


@pytest.mark.parametrize("d", [1, 2, 3])
def test_small_d(d):
    rng = np.random.default_rng(d)
    f = random_polynomial_model(d, rng, order=3)
    background, X = rng.normal(size=(5, d)), rng.normal(size=(2, d))
    expected = truth(f, X, background)
    game = interventional_game(f, background, X)
    halved, _ = owen(game, owen_plan(8 * (d + 1), d, halved=True), halved=True)
    plain, _ = owen(game, owen_plan(8 * (d + 1), d, halved=False))
    for estimate in (halved, plain):
        assert estimate.shape == (2, d, 1) and np.isfinite(estimate).all()
    if d <= 2:  # every game is pairwise
        np.testing.assert_allclose(halved[..., 0], expected, atol=1e-10)


def test_multi_output():
    d = 4
    rng = np.random.default_rng(6)
    pairwise = [pairwise_model(d, rng) for _ in range(2)]

    def f(Z):
        return np.column_stack([g(Z) for g in pairwise])

    background, X = rng.normal(size=(6, d)), rng.normal(size=(3, d))
    game = interventional_game(f, background, X)
    estimate, stderr = owen(game, owen_plan(60, d, halved=True), halved=True)
    assert estimate.shape == stderr.shape == (3, d, 2)
    np.testing.assert_allclose(estimate, truth(f, X, background), atol=1e-10)
    estimate, _ = owen(game, 4)
    assert estimate.shape == (3, d, 2)


# ---------------------------------------------------------------- the q-grid and its law


def test_trapezoid_weights():
    np.testing.assert_allclose(trapezoid_weights(2), [0.5, 0.5])
    np.testing.assert_allclose(trapezoid_weights(5), [0.125, 0.25, 0.25, 0.25, 0.125])
    for n_q in (2, 3, 8, 31):
        np.testing.assert_allclose(trapezoid_weights(n_q).sum(), 1.0, rtol=1e-14)


@pytest.mark.parametrize("halved", [False, True])
@pytest.mark.parametrize("model", ["polynomial", "three_way"])
def test_owen_mean_is_the_trapezoid_rule_of_the_multilinear_extension(model, halved):
    d = 4
    if model == "polynomial":
        n_q, n_runs = 6, 300
        f, background, x = polynomial_setup(1, d, order=3)
    else:  # e_0(q) = 8 q²: the trapezoid rule (3/8 · 8 at n_q = 3) and equal weights (5/12 · 8) differ by 1/3
        n_q, n_runs = (4 if halved else 3), 2000
        f, background, x = third_order, np.zeros((1, d)), np.full((1, d), 2.0)
    value = oracle(f, x[0], background)
    q, w = np.linspace(0, 1, n_q), np.r_[0.5, np.ones(n_q - 2), 0.5] / (n_q - 1)  # trapezoid rule
    expected = np.array(
        [sum(wt * multilinear_gain(value, d, i, qt) for qt, wt in zip(q, w, strict=True)) for i in range(d)]
    )
    game, keys = repeated(f, background, x, n_runs)
    values = owen(game, n_q, keys=keys, halved=halved)[0][..., 0]
    sem = values.std(axis=0) / np.sqrt(n_runs)
    assert np.all(np.abs(values.mean(axis=0) - expected) <= 4 * sem + 1e-12)
    if model == "polynomial":  # the trapezoid rule's O(1/Q²) bias is small next to the Shapley values
        assert np.abs(expected - truth(f, x, background)[0]).max() < 0.05 * np.abs(expected).max()


@pytest.mark.parametrize("halved", [False, True])
def test_owen_unbiased_for_pairwise_games_and_errors_calibrated(halved):
    d, n_runs = 5, 300
    f, background, x = polynomial_setup(2, d, order=2)
    game, keys = repeated(f, background, x, n_runs)
    estimate, stderr = owen(game, 4, keys=keys, halved=halved)
    values, expected = estimate[..., 0], truth(f, x, background)[0]
    spread = values.std(axis=0)
    assert np.all(np.abs(values.mean(axis=0) - expected) <= 4 * spread / np.sqrt(n_runs) + 1e-10)
    if not halved:  # standard error over the two runs: right on average
        np.testing.assert_allclose(np.sqrt((stderr[..., 0] ** 2).mean(axis=0)), spread, rtol=0.25)


@pytest.mark.parametrize("halved", [False, True])
def test_owen_error_falls_as_the_grid_grows(halved):
    d, n_runs = 5, 200
    f, background, x = polynomial_setup(1, d, order=3)
    expected = truth(f, x, background)[0]
    game, keys = repeated(f, background, x, n_runs)
    rmse = [np.sqrt(((owen(game, n_q, keys=keys, halved=halved)[0][..., 0] - expected) ** 2).mean()) for n_q in (4, 32)]
    assert rmse[1] < 0.5 * rmse[0]


def test_student_t_intervals_over_two_runs_cover():
    """Two runs give one degree of freedom; t(1) intervals cover the truth in most runs."""
    d = 5
    rng = np.random.default_rng(5)
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(8, d)), rng.normal(size=(3, d))
    expected = truth(f, X, background)
    budget = 240
    estimator = OwenHalvedAlgorithm(budget, d, 0)
    covered = []
    for x, phi in zip(X, expected, strict=True):
        game, keys = repeated(f, background, x[None], 40)
        estimate = estimator.estimate(game, np.arange(40), keys)
        np.testing.assert_array_equal(estimate.dof, 1.0)
        half = student_t.ppf(0.975, 1) * estimate.stderr[..., 0]
        covered.append(np.abs(estimate.values[..., 0] - phi) <= half + 1e-12)
    assert np.mean(covered) >= 0.8  # normal intervals cover about 0.7; the q-grid's bias is not covered


# ---------------------------------------------------------------- budget and plan


def test_owen_plan():
    d = 4
    assert owen_plan(2 * 2 * (d + 1), d, halved=False) == 2
    assert owen_plan(2 * 2 * (d + 1), d, halved=True) == 2
    assert owen_plan(2 * 3 * (d + 1), d, halved=True) == 2  # rounded down to even
    assert owen_plan(2 * 3 * (d + 1), d, halved=False) == 3
    assert owen_plan(3 * 4 * (d + 1) + 2, d, halved=True, runs=3) == 4
    for halved in (False, True):  # below the minimum of two grid points: nothing to run
        assert owen_plan(19, d, halved=halved) == 0
    assert owen_plan(29, d, halved=True, runs=3) == 0
    for cls in (OwenAlgorithm, OwenHalvedAlgorithm):
        name = cls.name
        assert "(20 evaluations" in cls.refusal(19, d)
        assert cls.refusal(20, d) is None
        estimator = cls(95, d, 0)
        assert estimator.n_q == (8 if name == "owen_halved" else 9) and estimator.halved == (name == "owen_halved")
        assert estimator.n_evals == OWEN_RUNS * estimator.n_q * (d + 1) <= 95


@pytest.mark.parametrize(("n_q", "halved"), [(3, True), (5, True), (1, False), (0, False)])
def test_owen_units_refuses_a_grid_it_cannot_run(n_q, halved):
    """An odd grid for Owen-halved would drop its middle point (weights summing to less than 1)."""
    game = interventional_game(third_order, np.zeros((1, 4)), np.ones((1, 4)))
    with pytest.raises(ValueError, match="n_q must be at least 2"):
        owen_units(game, np.array([0]), distinct_keys(1), n_q, halved=halved)


@pytest.mark.parametrize("halved", [False, True])
def test_owen_model_sees_the_budget_and_chunking_changes_nothing(halved, monkeypatch):
    d, n_background, n_rows, runs = 6, 7, 4, 3
    rng = np.random.default_rng(0)
    f = CountingModel(d)
    background, X = rng.normal(size=(n_background, d)), rng.normal(size=(n_rows, d))
    max_evals = 150
    n_q = owen_plan(max_evals, d, halved=halved, runs=runs)
    game = interventional_game(f, background, X)
    f.rows = 0
    keys = row_keys(5, X)
    units = owen_units(game, np.arange(n_rows), keys, n_q, halved=halved, runs=runs)
    evals = runs * n_q * (d + 1)
    assert evals <= max_evals
    # every coalition, ∅ and N included, goes through the game
    assert f.rows == game.n_model_rows == n_rows * evals * n_background
    np.testing.assert_array_equal(game.n_evals, evals)
    assert units.values.shape == (n_rows, runs, d, 1)
    np.testing.assert_allclose(units.weights, np.full(runs, 1 / runs))
    monkeypatch.setattr(owen_module, "_ROW_MASK_BYTES", 1)  # one grid point per chunk
    chunked = owen_units(game, np.arange(n_rows), keys, n_q, halved=halved, runs=runs)
    np.testing.assert_allclose(chunked.values, units.values, rtol=0, atol=1e-12)


def test_masks_are_drawn_per_key_and_run():
    """Run r of a row uses its own masks: runs differ, and equal keys give equal units."""
    d = 5
    f, background, x = polynomial_setup(3, d, order=3)
    game = interventional_game(f, background, np.repeat(x, 3, axis=0))
    keys = np.array([11, 11, 12], dtype=np.uint64)
    units = owen_units(game, np.arange(3), keys, 6, runs=3)
    np.testing.assert_array_equal(units.values[0], units.values[1])
    assert not np.allclose(units.values[0], units.values[2])
    assert not np.allclose(units.values[0, 0], units.values[0, 1])
