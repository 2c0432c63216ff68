"""Owen, Owen-halved and stratified (Castro 2017) estimators against brute force and their budgets.

Statistical checks explain one row repeated R times in a single call: every explained row draws its
own masks, so the R estimates are R independent runs (as over R seeds), at the cost of one call.
"""

from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest

import sklearn_shapq.estimators._stratified as stratified_module
from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.estimators import combine_units
from sklearn_shapq.estimators._owen import owen_plan, owen_shapley
from sklearn_shapq.estimators._stratified import largest_remainder_allocation, stratified_plan, stratified_shapley
from sklearn_shapq.games import InterventionalGame, make_model_function

from brute_force import brute_force_shapley, interventional_value, random_polynomial_model


def make_game(f, background, **kwargs):
    return InterventionalGame(make_model_function(f, "predict", CpuBackend()), background, **kwargs)


def owen(game, X, n_q, seed, **kwargs):
    return combine_units(owen_shapley(game, X, n_q, np.random.default_rng(seed), **kwargs), np)


def stratified(game, X, n_samples, seed, **kwargs):
    return stratified_shapley(game, X, n_samples, np.random.default_rng(seed), **kwargs)


def oracle(f, x, background):
    """Cached v_x(S) on sorted tuples, independent of package code."""
    return lru_cache(maxsize=None)(lambda s: interventional_value(f, x, background, s))


def truth(f, x, background):
    d = background.shape[1]
    value = oracle(f, x, background)
    return brute_force_shapley(lambda s: value(tuple(sorted(s))), d)


def multilinear_gain(value, d, i, q):
    """e_i(q) = E[v(E ∪ {i}) − v(E)], E ⊆ N ∖ {i} with independent inclusion probability q."""
    others = [j for j in range(d) if j != i]
    total = 0.0
    for size in range(d):
        for s in combinations(others, size):
            total = total + q**size * (1 - q) ** (d - 1 - size) * (value(tuple(sorted(s + (i,)))) - value(s))
    return total


def polynomial_setup(seed, d, order, n_background=8):
    rng = np.random.default_rng(seed)
    f = random_polynomial_model(d, rng, order=order, n_terms=12)
    return f, rng.normal(size=(n_background, d)), rng.normal(size=(1, d))


def uniform_allocation(variance, total):
    return largest_remainder_allocation(np.zeros_like(variance), total)


class CountingModel:
    """A cheap non-additive model that counts the rows it is given."""

    def __init__(self, d):
        self.coef, self.rows = np.linspace(-1, 1, d), 0

    def __call__(self, Z):
        self.rows += len(Z)
        return np.tanh(Z @ self.coef) * Z[:, 0]


def third_order(Z):
    return Z[:, 0] * Z[:, 1] * Z[:, 2] + Z[:, 3]


# ----------------------------------------------------------------------------------------- Owen


@pytest.mark.parametrize("seed", range(4))
def test_owen_halved_exact_for_pairwise_games(seed):
    d = 5
    f, background, _ = polynomial_setup(seed, d, order=2)
    X = np.random.default_rng(100 + seed).normal(size=(3, d))
    game = make_game(f, background)
    expected = np.array([truth(f, x, background) for x in X])
    for n_q in (2, 4, 6):
        estimate, stderr = owen(game, X, n_q, seed, halved=True)
        np.testing.assert_allclose(estimate[..., 0], expected, atol=1e-10, rtol=0)
        np.testing.assert_allclose(stderr, 0.0, atol=1e-10)


def test_owen_halved_not_exact_with_a_three_way_term():
    d = 5
    rng = np.random.default_rng(0)
    background, X = rng.normal(size=(8, d)), rng.normal(size=(3, d))
    expected = np.array([truth(third_order, x, background) for x in X])
    estimate, _ = owen(make_game(third_order, background), X, 6, 0, halved=True)
    assert np.abs(estimate[..., 0] - expected).max() > 1e-3


def test_plain_owen_not_exact_for_pairwise_games():
    d = 5
    f, background, x = polynomial_setup(0, d, order=2)
    estimate, _ = owen(make_game(f, background), x, 6, 0)
    assert np.abs(estimate[0, :, 0] - truth(f, x[0], background)).max() > 1e-3


@pytest.mark.parametrize("halved", [False, True])
@pytest.mark.parametrize("game", ["polynomial", "three_way"])
def test_owen_mean_is_the_trapezoid_rule_of_the_multilinear_extension(game, halved):
    d = 4
    if game == "polynomial":
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
    estimate, _ = owen(make_game(f, background), np.repeat(x, n_runs, axis=0), n_q, 0, halved=halved)
    values = estimate[..., 0]
    sem = values.std(axis=0) / np.sqrt(n_runs)
    assert np.all(np.abs(values.mean(axis=0) - expected) <= 4 * sem + 1e-12)
    if game == "polynomial":  # the trapezoid rule's O(1/Q²) bias is small next to the Shapley values
        assert np.abs(expected - truth(f, x[0], background)).max() < 0.05 * np.abs(expected).max()


@pytest.mark.parametrize("halved", [False, True])
def test_owen_unbiased_for_pairwise_games_and_errors_calibrated(halved):
    d, n_runs = 5, 300
    f, background, x = polynomial_setup(2, d, order=2)
    estimate, stderr = owen(make_game(f, background), np.repeat(x, n_runs, axis=0), 4, 3, halved=halved)
    values, expected = estimate[..., 0], truth(f, x[0], background)
    spread = values.std(axis=0)
    assert np.all(np.abs(values.mean(axis=0) - expected) <= 4 * spread / np.sqrt(n_runs) + 1e-10)
    if not halved:  # standard error over the two runs: right on average
        np.testing.assert_allclose(np.sqrt((stderr[..., 0] ** 2).mean(axis=0)), spread, rtol=0.25)


@pytest.mark.parametrize("halved", [False, True])
def test_owen_error_falls_as_the_grid_grows(halved):
    d, n_runs = 5, 200
    f, background, x = polynomial_setup(1, d, order=3)
    game, expected = make_game(f, background), truth(f, x[0], background)
    X = np.repeat(x, n_runs, axis=0)
    rmse = [np.sqrt(((owen(game, X, n_q, 0, halved=halved)[0][..., 0] - expected) ** 2).mean()) for n_q in (4, 32)]
    assert rmse[1] < 0.5 * rmse[0]


def test_owen_plan():
    d = 4
    assert owen_plan(2 * 2 * (d + 1), d, halved=False) == 2
    assert owen_plan(2 * 2 * (d + 1), d, halved=True) == 2
    assert owen_plan(2 * 3 * (d + 1), d, halved=True) == 2  # rounded down to even
    assert owen_plan(2 * 3 * (d + 1), d, halved=False) == 3
    assert owen_plan(3 * 4 * (d + 1) + 2, d, halved=True, runs=3) == 4
    for halved in (False, True):
        with pytest.raises(ValueError, match="below the minimum 20 "):
            owen_plan(19, d, halved=halved)
    with pytest.raises(ValueError, match="below the minimum 30 "):
        owen_plan(29, d, halved=True, runs=3)
    game = make_game(third_order, np.zeros((1, d)))
    with pytest.raises(ValueError, match="even"):
        owen_shapley(game, np.ones((1, d)), 3, np.random.default_rng(0), halved=True)
    with pytest.raises(ValueError, match="at least 2"):
        owen_shapley(game, np.ones((1, d)), 1, np.random.default_rng(0))


@pytest.mark.parametrize("halved", [False, True])
def test_owen_model_sees_the_budget_and_chunking_changes_nothing(halved):
    d, n_background, n_rows, runs = 6, 7, 4, 3
    rng = np.random.default_rng(0)
    f = CountingModel(d)
    background, X = rng.normal(size=(n_background, d)), rng.normal(size=(n_rows, d))
    max_evals = 150
    n_q = owen_plan(max_evals, d, halved=halved, runs=runs)
    game = make_game(f, background)
    f.rows = 0
    units = owen_shapley(game, X, n_q, np.random.default_rng(5), halved=halved, runs=runs)
    evals = runs * n_q * (d + 1)
    assert evals <= max_evals
    assert f.rows == game.n_model_rows == n_rows * evals * n_background
    assert units.values.shape == (n_rows, runs, d, 1)
    np.testing.assert_allclose(units.weights, np.full(runs, 1 / runs))
    chunked = owen_shapley(game, X, n_q, np.random.default_rng(5), halved=halved, runs=runs, max_mask_bytes=400)
    np.testing.assert_allclose(chunked.values, units.values, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------- Stratified


def test_stratified_exact_for_additive_games():
    d = 6
    rng = np.random.default_rng(0)
    coef = rng.normal(size=d)

    def f(Z):
        return np.sin(Z) @ coef

    background, X = rng.normal(size=(10, d)), rng.normal(size=(3, d))
    estimate, stderr = stratified(make_game(f, background), X, stratified_plan(8 * d * d, d), 0)
    np.testing.assert_allclose(estimate[..., 0], (np.sin(X) - np.sin(background).mean(0)) * coef, atol=1e-12)
    np.testing.assert_allclose(stderr, 0.0, atol=1e-12)


def test_stratified_sampling_unbiased_and_calibrated_with_uniform_allocation(monkeypatch):
    # without the variance-driven phase 2, every stratum mean is a plain mean of uniform subsets
    monkeypatch.setattr(stratified_module, "largest_remainder_allocation", uniform_allocation)
    d, n_runs = 4, 1000
    f, background, x = polynomial_setup(2, d, order=3)
    estimate, stderr = stratified(
        make_game(f, background), np.repeat(x, n_runs, axis=0), stratified_plan(8 * d * d, d), 0
    )
    values, spread = estimate[..., 0], estimate[..., 0].std(axis=0)
    assert np.all(np.abs(values.mean(axis=0) - truth(f, x[0], background)) <= 4 * spread / np.sqrt(n_runs))
    np.testing.assert_allclose(np.sqrt((stderr[..., 0] ** 2).mean(axis=0)), spread, rtol=0.1)


def test_stratified_nearly_unbiased_and_errors_cover():
    d, n_runs = 4, 400
    f, background, x = polynomial_setup(2, d, order=3)
    estimate, stderr = stratified(
        make_game(f, background), np.repeat(x, n_runs, axis=0), stratified_plan(40 * d * d, d), 1
    )
    values, stderr, expected = estimate[..., 0], stderr[..., 0], truth(f, x[0], background)
    spread = values.std(axis=0)
    # Castro's reuse of the phase-1 samples that set the allocation leaves a small bias (≈ 0.1 sd here)
    assert np.all(np.abs(values.mean(axis=0) - expected) <= 4 * spread / np.sqrt(n_runs) + 0.2 * spread)
    coverage = (np.abs(values - expected) <= 2 * stderr + 1e-12).mean()
    assert 0.85 <= coverage <= 1.0
    # on average the standard error is close to the spread (a little low: the variance-driven allocation
    # gives few samples to strata whose phase-1 variance came out small)
    assert np.all(
        (np.sqrt((stderr**2).mean(axis=0)) / spread > 0.7) & (np.sqrt((stderr**2).mean(axis=0)) / spread < 1.15)
    )


class RecordingGame:
    """A game that keeps every batch of masks it evaluates."""

    def __init__(self, game):
        self.game, self.backend, self.empty_value = game, game.backend, game.empty_value
        self.masks = []

    def __call__(self, x, masks):
        self.masks.append(np.array(masks))
        return self.game(x, masks)


@pytest.mark.parametrize("additive", [False, True])
def test_phase_two_follows_the_variance(additive):
    # the strata of sizes 0 and d − 1 hold one coalition each (S = ∅, S = N ∖ {i}), so they have no
    # variance and get no phase-2 samples, unless no stratum varies (then phase 2 is uniform)
    d, n_rows = 4, 3
    rng = np.random.default_rng(4)
    # small integers and 4 background rows: every v(S) is exact, so additive strata have variance 0.0
    background, X = rng.integers(-3, 4, size=(4, d)).astype(float), rng.integers(-3, 4, size=(n_rows, d)).astype(float)

    def f(Z):
        return Z @ [1.0, -2.0, 3.0, 1.0] if additive else Z[:, 0] * (Z[:, 1] - 2 * Z[:, 2] + 3 * Z[:, 3])

    n = stratified_plan(8 * d * d, d)
    game = RecordingGame(make_game(f, background))
    stratified(game, X, n, 0)
    masks = np.concatenate(game.masks, axis=1)
    assert masks.shape == (n_rows, 2 * n, d)
    per_stratum = (n // 2) // d**2
    fixed = d * (per_stratum + (n - per_stratum * d**2) // d**2 if additive else per_stratum)
    np.testing.assert_array_equal((~masks).all(axis=2).sum(axis=1), fixed)  # S = ∅
    np.testing.assert_array_equal(masks.all(axis=2).sum(axis=1), fixed)  # S ∪ {i} = N


def test_largest_remainder_allocation():
    variance = np.array([[0.0, 1.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1e-9]])
    counts = largest_remainder_allocation(variance, 7)
    np.testing.assert_array_equal(counts.sum(axis=1), 7)
    np.testing.assert_array_equal(counts[0], [0, 2, 5, 0])
    np.testing.assert_array_equal(counts[1], [2, 2, 2, 1])
    np.testing.assert_array_equal(counts[2], [3, 2, 2, 0])


def test_stratified_plan():
    d = 3
    assert stratified_plan(8 * d * d, d) == 4 * d * d
    assert stratified_plan(8 * d * d + 1, d) == 4 * d * d
    with pytest.raises(ValueError, match="below the minimum 72 "):
        stratified_plan(8 * d * d - 1, d)
    game = make_game(third_order, np.zeros((1, 4)))
    with pytest.raises(ValueError, match="fewer than 2"):
        stratified_shapley(game, np.ones((1, 4)), 4 * 16 - 1, np.random.default_rng(0))


def test_stratified_model_sees_the_budget_and_chunking_changes_nothing():
    d, n_background, n_rows = 5, 7, 4
    rng = np.random.default_rng(0)
    f = CountingModel(d)
    background, X = rng.normal(size=(n_background, d)), rng.normal(size=(n_rows, d))
    max_evals = 8 * d * d + 31
    n = stratified_plan(max_evals, d)
    game = make_game(f, background)
    f.rows = 0
    estimate, stderr = stratified(game, X, n, 5)
    assert f.rows == game.n_model_rows == n_rows * 2 * n * n_background
    assert 2 * n <= max_evals
    chunked, chunked_stderr = stratified(game, X, n, 5, max_mask_bytes=7 * n_rows * d * 8)  # 7 samples a chunk
    np.testing.assert_allclose(chunked, estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(chunked_stderr, stderr, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------------------- Shared


def test_multi_output_shapes_and_values():
    d = 4
    rng = np.random.default_rng(6)
    pairwise = [random_polynomial_model(d, rng, order=2) for _ in range(2)]
    coef = rng.normal(size=(d, 2))

    def f_pairwise(Z):
        return np.column_stack([g(Z) for g in pairwise])

    def f_additive(Z):
        return np.tanh(Z) @ coef

    background, X = rng.normal(size=(6, d)), rng.normal(size=(3, d))
    estimate, stderr = owen(make_game(f_pairwise, background), X, owen_plan(60, d, halved=True), 0, halved=True)
    assert estimate.shape == stderr.shape == (3, d, 2)
    np.testing.assert_allclose(estimate, [truth(f_pairwise, x, background) for x in X], atol=1e-10)
    estimate, _ = owen(make_game(f_pairwise, background), X, 4, 0)
    assert estimate.shape == (3, d, 2)
    estimate, stderr = stratified(make_game(f_additive, background), X, stratified_plan(8 * d * d, d), 0)
    assert estimate.shape == stderr.shape == (3, d, 2)
    expected = (np.tanh(X) - np.tanh(background).mean(0))[:, :, None] * coef[None]
    np.testing.assert_allclose(estimate, expected, atol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_small_d(d):
    rng = np.random.default_rng(d)
    f = random_polynomial_model(d, rng, order=3)
    background, X = rng.normal(size=(5, d)), rng.normal(size=(2, d))
    expected = np.array([truth(f, x, background) for x in X])
    game = make_game(f, background)
    halved, _ = owen(game, X, owen_plan(8 * (d + 1), d, halved=True), 0, halved=True)
    plain, _ = owen(game, X, owen_plan(8 * (d + 1), d, halved=False), 0)
    strat, stderr = stratified(game, X, stratified_plan(8 * d * d, d), 0)
    for estimate in (halved, plain, strat):
        assert estimate.shape == (2, d, 1)
        assert np.isfinite(estimate).all()
    if d <= 2:  # every game is pairwise, and every stratum holds a single coalition
        np.testing.assert_allclose(halved[..., 0], expected, atol=1e-10)
        np.testing.assert_allclose(strat[..., 0], expected, atol=1e-10)
        np.testing.assert_allclose(stderr, 0.0, atol=1e-10)
    else:  # strata of size 1 hold two coalitions, drawn at random
        assert np.abs(strat[..., 0] - expected).max() < 0.5 * np.abs(expected).max()


def test_reproducible_with_the_same_seed():
    d = 5
    f, background, _ = polynomial_setup(3, d, order=3)
    X = np.random.default_rng(1).normal(size=(3, d))
    game = make_game(f, background)
    for run in (
        lambda seed: owen(game, X, 6, seed)[0],
        lambda seed: owen(game, X, 6, seed, halved=True)[0],
        lambda seed: stratified(game, X, stratified_plan(8 * d * d, d), seed)[0],
    ):
        np.testing.assert_array_equal(run(0), run(0))
        assert not np.allclose(run(0), run(1))


def test_generic_array_backend_gives_the_same_results():
    # the xp-generic path (as on cupy) against the numba CPU backend
    d = 4
    f, background, _ = polynomial_setup(5, d, order=3)
    X = np.random.default_rng(2).normal(size=(3, d))
    games = [
        InterventionalGame(make_model_function(f, "predict", backend), backend.to_device(background))
        for backend in (CpuBackend(), ArrayBackend(np))
    ]
    for run in (
        lambda game: owen(game, X, 4, 0, halved=True),
        lambda game: owen(game, X, 5, 0),
        lambda game: stratified(game, X, stratified_plan(8 * d * d, d), 0),
    ):
        for cpu, generic in zip(run(games[0]), run(games[1]), strict=True):
            np.testing.assert_allclose(generic, cpu, rtol=1e-12, atol=1e-12)
