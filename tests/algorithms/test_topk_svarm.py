"""The SVARM family of the top-k paper: coalition laws, warm-up, unbiasedness, stratified SVARM."""

import numpy as np
import pytest
from scipy.stats import chisquare

from sklearn_shapq.algorithms import TOPK_ALGORITHMS, top_k_shapley
from sklearn_shapq.algorithms._topk_state import Ledger
from sklearn_shapq.games import TableGame

from game_helpers import LoggingGame

ALPHA = 1e-3


def test_no_confidence_bounds():
    for name in ("svarm", "stratified_svarm"):
        assert not TOPK_ALGORITHMS[name].pac and not TOPK_ALGORITHMS[name].adaptive
    result = top_k_shapley(TableGame(np.arange(32.0), n_games=2), 2, "svarm", max_evals=100, random_state=0)
    assert not result.pac_satisfied.any()


@pytest.fixture
def paid(monkeypatch):
    """Every batch of coalitions handed to Ledger.pay (free corners included), in order."""
    batches = []
    original = Ledger.pay

    def spy(self, masks, games, units):
        batches.append(masks.copy())
        return original(self, masks, games, units)

    monkeypatch.setattr(Ledger, "pay", spy)
    return batches


def test_svarm_warm_up_then_pairs_of_harmonic_sizes(paid):
    d, n_rounds = 5, 20_000
    game = LoggingGame(np.random.default_rng(0).normal(size=2**d))
    result = top_k_shapley(game, 2, "svarm", max_evals=2 + 2 * d + 2 * n_rounds, random_state=0)
    assert sum(len(m) for m, _ in game.calls) == result.n_evals[0] == game.n_evals[0]
    warm_up = paid[0].reshape(d, 2, d)  # per player i: A ∪ {i}, then A' ∌ i
    np.testing.assert_array_equal(warm_up[:, 0].diagonal(), True)
    np.testing.assert_array_equal(warm_up[:, 1].diagonal(), False)
    rounds = np.concatenate(paid[1:]).reshape(-1, 2, d).sum(axis=2)
    assert len(rounds) >= n_rounds
    # A⁺ has size ℓ with P ∝ 1/ℓ; A⁻ has size d − ℓ with the same law
    harmonic = 1.0 / np.arange(1, d + 1)
    for counts in (np.bincount(rounds[:, 0], minlength=d + 1)[1:], np.bincount(d - rounds[:, 1], minlength=d + 1)[1:]):
        assert chisquare(counts, harmonic / harmonic.sum() * counts.sum()).pvalue > ALPHA


def test_stratified_svarm_evaluates_complement_pairs_of_uniform_size():
    d, n_rounds = 6, 6000
    game = LoggingGame(np.random.default_rng(1).normal(size=2**d))
    top_k_shapley(game, 2, "stratified_svarm", max_evals=2 + 2 * n_rounds, random_state=0)
    masks = np.concatenate([m for m, _ in game.calls[1:]])
    assert len(masks) == 2 * n_rounds
    pairs = masks.reshape(-1, 2, d)
    np.testing.assert_array_equal(pairs[:, 1], ~pairs[:, 0])
    sizes = pairs[:, 0].sum(axis=1)
    assert sizes.min() >= 1 and sizes.max() <= d - 1
    assert chisquare(np.bincount(sizes, minlength=d)[1:]).pvalue > ALPHA


@pytest.mark.parametrize(("method", "budget"), [("svarm", 32), ("svarm", 60), ("stratified_svarm", 200)])
def test_monte_carlo_mean_is_unbiased(method, budget):
    """Mean of φ̂ over 4000 lockstep runs within 4 standard errors of φ (stratified: once every stratum is sampled)."""
    d, runs = 5, 4000
    table = np.random.default_rng(3).normal(size=2**d) * 2
    game = TableGame(table, n_games=runs)
    phi = game.shapley_values()[0, :, 0]
    result = top_k_shapley(game, 2, method, max_evals=budget, random_state=0)
    np.testing.assert_array_equal(result.n_evals, budget)
    z = (result.values.mean(axis=0) - phi) / (result.values.std(axis=0, ddof=1) / np.sqrt(runs))
    assert np.abs(z).max() < 4.0, z
    assert (result.values.std(axis=0) > 0).all()


@pytest.mark.parametrize("method", ["svarm", "stratified_svarm"])
def test_error_falls_with_the_budget(method):
    d, runs = 5, 500
    table = np.random.default_rng(4).normal(size=2**d)
    game = TableGame(table, n_games=runs)
    phi = game.shapley_values()[0, :, 0]
    rmse = [
        np.sqrt(((top_k_shapley(game, 2, method, max_evals=b, random_state=0).values - phi) ** 2).mean())
        for b in (40, 640)
    ]
    assert rmse[1] < 0.4 * rmse[0]
