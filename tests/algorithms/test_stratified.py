"""Stratified sampling (Castro et al. 2017) against brute force: exactness, bias, coverage, allocation, budget.

Statistical checks explain one row repeated R times under R distinct row keys in a single call.
"""

import numpy as np
import pytest

import sklearn_shapq.algorithms._stratified as stratified_module
from sklearn_shapq.algorithms import StratifiedAlgorithm, stratified_plan, stratified_shapley
from sklearn_shapq.algorithms._stratified import largest_remainder_allocation
from sklearn_shapq.samplers import row_keys

from brute_force import random_polynomial_model
from game_helpers import CountingModel, interventional_game, polynomial_setup, third_order, truth


def stratified(game, n_samples, *, seed=0, keys=None):
    keys = row_keys(seed, game.x) if keys is None else keys
    return stratified_shapley(game, np.arange(game.n_games), keys, n_samples)


def repeated(f, background, x, n_runs):
    game = interventional_game(f, background, np.repeat(x, n_runs, axis=0))
    return game, row_keys(0, np.arange(n_runs, dtype=float)[:, None])


def uniform_allocation(variance, total):
    return largest_remainder_allocation(np.zeros_like(variance), total)


def test_stratified_exact_for_additive_games():
    d = 6
    rng = np.random.default_rng(0)
    coef = rng.normal(size=d)

    def f(Z):
        return np.sin(Z) @ coef

    background, X = rng.normal(size=(10, d)), rng.normal(size=(3, d))
    estimate, stderr = stratified(interventional_game(f, background, X), stratified_plan(8 * d * d, d))
    np.testing.assert_allclose(estimate[..., 0], (np.sin(X) - np.sin(background).mean(0)) * coef, atol=1e-12)
    np.testing.assert_allclose(stderr, 0.0, atol=1e-12)


def test_unbiased_and_calibrated_with_uniform_allocation(monkeypatch):
    # without the variance-driven phase 2, every stratum mean is a plain mean of uniform subsets
    monkeypatch.setattr(stratified_module, "largest_remainder_allocation", uniform_allocation)
    d, n_runs = 4, 1000
    f, background, x = polynomial_setup(2, d, order=3)
    game, keys = repeated(f, background, x, n_runs)
    estimate, stderr = stratified(game, stratified_plan(8 * d * d, d), keys=keys)
    values, spread = estimate[..., 0], estimate[..., 0].std(axis=0)
    assert np.all(np.abs(values.mean(axis=0) - truth(f, x, background)[0]) <= 4 * spread / np.sqrt(n_runs))
    np.testing.assert_allclose(np.sqrt((stderr[..., 0] ** 2).mean(axis=0)), spread, rtol=0.1)


def test_nearly_unbiased_and_errors_cover():
    d, n_runs = 4, 400
    f, background, x = polynomial_setup(2, d, order=3)
    game, keys = repeated(f, background, x, n_runs)
    estimate, stderr = stratified(game, stratified_plan(40 * d * d, d), keys=keys)
    values, stderr, expected = estimate[..., 0], stderr[..., 0], truth(f, x, background)[0]
    spread = values.std(axis=0)
    # Castro's reuse of the phase-1 samples that set the allocation leaves a small bias (≈ 0.1 sd here)
    assert np.all(np.abs(values.mean(axis=0) - expected) <= 4 * spread / np.sqrt(n_runs) + 0.2 * spread)
    coverage = (np.abs(values - expected) <= 2 * stderr + 1e-12).mean()
    assert 0.85 <= coverage <= 1.0
    # on average the standard error is close to the spread (a little low: the variance-driven allocation
    # gives few samples to strata whose phase-1 variance came out small)
    ratio = np.sqrt((stderr**2).mean(axis=0)) / spread
    assert np.all((ratio > 0.7) & (ratio < 1.15))


class RecordingGame:
    """Wraps a game and keeps every batch of masks (B, C, d) it is asked for through ``grid``."""

    def __init__(self, game):
        self.game = game
        self.backend, self.n_players, self.n_outputs = game.backend, game.n_players, game.n_outputs
        self.masks = []

    def grid(self, games, masks):
        self.masks.append(np.array(masks))
        return self.game.grid(games, masks)


@pytest.mark.parametrize("additive", [False, True])
def test_phase_two_follows_the_variance(additive):
    # the strata of sizes 0 and d − 1 hold one coalition each (S = ∅, S = N ∖ {i}), so they have no
    # variance and get no phase-2 samples, unless no stratum varies (then phase 2 is uniform)
    d, n_rows = 4, 3
    rng = np.random.default_rng(4)
    # small integers and 4 background rows: every v(S) is exact, so additive strata have variance 0.0
    background = rng.integers(-3, 4, size=(4, d)).astype(float)
    X = rng.integers(-3, 4, size=(n_rows, d)).astype(float)

    def f(Z):
        return Z @ [1.0, -2.0, 3.0, 1.0] if additive else Z[:, 0] * (Z[:, 1] - 2 * Z[:, 2] + 3 * Z[:, 3])

    n = stratified_plan(8 * d * d, d)
    inner = interventional_game(f, background, X)
    game = RecordingGame(inner)
    stratified_shapley(game, np.arange(n_rows), row_keys(0, X), n)
    masks = np.concatenate(game.masks, axis=1)
    assert masks.shape == (n_rows, 2 * n, d)
    np.testing.assert_array_equal(inner.n_evals, 2 * n)  # v(∅) and v(N) are not cached: all through the game
    per_stratum = (n // 2) // d**2
    fixed = d * (per_stratum + (n - per_stratum * d**2) // d**2 if additive else per_stratum)
    np.testing.assert_array_equal((~masks).all(axis=2).sum(axis=1), fixed)  # S = ∅
    np.testing.assert_array_equal(masks.all(axis=2).sum(axis=1), fixed)  # S ∪ {i} = N


def test_samples_are_pairs_of_a_coalition_without_i_and_with_i():
    d = 5
    f, background, X = polynomial_setup(0, d, order=3, n_rows=2)
    inner = interventional_game(f, background, X)
    game = RecordingGame(inner)
    n = stratified_plan(8 * d * d, d)
    stratified_shapley(game, np.arange(2), row_keys(0, X), n)
    pairs = np.concatenate(game.masks, axis=1).reshape(2, n, 2, d)
    off, on = pairs[:, :, 0], pairs[:, :, 1]
    added = on & ~off
    np.testing.assert_array_equal(added.sum(axis=2), 1)  # exactly one player added ...
    np.testing.assert_array_equal(on | off, on)  # ... and none removed
    # phase 1: m1 = 2 samples of every stratum (player i, size ℓ), in stratum order
    phase1 = 2 * d * d
    player = added[:, :phase1].argmax(axis=2)
    size = off[:, :phase1].sum(axis=2)
    strata = np.repeat(np.arange(d * d), 2)
    np.testing.assert_array_equal(player, np.broadcast_to(strata // d, (2, phase1)))
    np.testing.assert_array_equal(size, np.broadcast_to(strata % d, (2, phase1)))


def test_largest_remainder_allocation():
    variance = np.array([[0.0, 1.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1e-9]])
    counts = largest_remainder_allocation(variance, 7)
    np.testing.assert_array_equal(counts.sum(axis=1), 7)
    np.testing.assert_array_equal(counts[0], [0, 2, 5, 0])
    np.testing.assert_array_equal(counts[1], [2, 2, 2, 1])
    np.testing.assert_array_equal(counts[2], [3, 2, 2, 0])
    rng = np.random.default_rng(0)
    variance = rng.random((50, 9)) * (rng.random((50, 9)) < 0.7)
    counts = largest_remainder_allocation(variance, 101)
    np.testing.assert_array_equal(counts.sum(axis=1), 101)
    quota = 101 * variance / np.where(variance.sum(1, keepdims=True) > 0, variance.sum(1, keepdims=True), 1)
    assert (np.abs(counts - quota) < 1).all()


def test_stratified_plan_and_minimum():
    d = 3
    assert stratified_plan(8 * d * d, d) == 4 * d * d
    assert stratified_plan(8 * d * d + 1, d) == 4 * d * d
    assert "(72 evaluations" in StratifiedAlgorithm.refusal(8 * d * d - 1, d)
    assert StratifiedAlgorithm.refusal(8 * d * d, d) is None
    assert StratifiedAlgorithm(801, 10, 0).n_samples == 400


@pytest.mark.parametrize("n_samples", [0, 16, 4 * 16 - 1])
def test_stratified_shapley_refuses_fewer_than_two_samples_per_stratum(n_samples):
    game = interventional_game(third_order, np.zeros((1, 4)), np.ones((1, 4)))
    with pytest.raises(ValueError, match="fewer than 2"):
        stratified_shapley(game, np.array([0]), np.array([1], dtype=np.uint64), n_samples)


def test_model_sees_the_budget_and_chunking_changes_nothing(monkeypatch):
    d, n_background, n_rows = 5, 7, 4
    rng = np.random.default_rng(0)
    f = CountingModel(d)
    background, X = rng.normal(size=(n_background, d)), rng.normal(size=(n_rows, d))
    max_evals = 8 * d * d + 31
    n = stratified_plan(max_evals, d)
    game = interventional_game(f, background, X)
    f.rows = 0
    estimate, stderr = stratified(game, n, seed=5)
    assert f.rows == game.n_model_rows == n_rows * 2 * n * n_background
    assert 2 * n <= max_evals
    monkeypatch.setattr(stratified_module, "_ROW_MASK_BYTES", 7 * d * 8)  # 7 samples a chunk
    chunked, chunked_stderr = stratified(game, n, seed=5)
    np.testing.assert_allclose(chunked, estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(chunked_stderr, stderr, rtol=1e-9, atol=1e-12)


def test_multi_output_and_small_d():
    d = 4
    rng = np.random.default_rng(6)
    coef = rng.normal(size=(d, 2))
    background, X = rng.normal(size=(6, d)), rng.normal(size=(3, d))
    estimate, stderr = stratified(
        interventional_game(lambda Z: np.tanh(Z) @ coef, background, X), stratified_plan(8 * d * d, d)
    )
    assert estimate.shape == stderr.shape == (3, d, 2)
    expected = (np.tanh(X) - np.tanh(background).mean(0))[:, :, None] * coef[None]
    np.testing.assert_allclose(estimate, expected, atol=1e-12)
    for d in (1, 2, 3):
        rng = np.random.default_rng(d)
        f = random_polynomial_model(d, rng, order=3)
        background, X = rng.normal(size=(5, d)), rng.normal(size=(2, d))
        expected = truth(f, X, background)
        estimate, stderr = stratified(interventional_game(f, background, X), stratified_plan(8 * d * d, d))
        assert estimate.shape == (2, d, 1) and np.isfinite(estimate).all()
        if d <= 2:  # every stratum holds a single coalition
            np.testing.assert_allclose(estimate[..., 0], expected, atol=1e-10)
            np.testing.assert_allclose(stderr, 0.0, atol=1e-10)
        else:  # strata of size 1 hold two coalitions, drawn at random
            assert np.abs(estimate[..., 0] - expected).max() < 0.5 * np.abs(expected).max()
