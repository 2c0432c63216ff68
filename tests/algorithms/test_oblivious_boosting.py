"""Boosted oblivious trees on coalition masks: the fit on both backends, exact Shapley values against brute force."""

import itertools

import numpy as np
import pytest

import sklearn_shapq.backends._oblivious_fit as oblivious_fit
from sklearn_shapq.algorithms._oblivious_boosting import (
    BoostingSettings,
    ObliviousEnsemble,
    fit_oblivious_boosting,
    oblivious_shapley,
)
from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.backends._threads import run_ranges

from brute_force import brute_force_shapley
from game_helpers import all_masks
from strict_twin import StrictBackend

BACKENDS = {"numba": CpuBackend(), "array twin": ArrayBackend(np)}


def ensemble_value(players, leaves, mask):
    """The ensemble at one coalition, written from the definition: each tree's leaf by the bits of its players."""
    total = 0.0
    for tree_players, tree_leaves in zip(players, leaves, strict=True):
        index = 0
        for player in tree_players:
            index = 2 * index + int(mask[player])
        total += tree_leaves[index]
    return total


def random_ensemble(rng, n_trees, depth, d, rows=2, problems=3):
    players = np.array(
        [[[rng.choice(d, depth, replace=False) for _ in range(problems)] for _ in range(rows)] for _ in range(n_trees)]
    )
    return ObliviousEnsemble(players, rng.normal(size=(n_trees, rows, problems, 2**depth)), None)


@pytest.mark.parametrize(("d", "depth", "n_trees"), [(3, 1, 2), (4, 3, 3), (6, 4, 5), (7, 5, 4), (5, 5, 2)])
def test_shapley_values_of_an_ensemble_equal_brute_force(d, depth, n_trees):
    rng = np.random.default_rng(d + depth)
    ensemble = random_ensemble(rng, n_trees, depth, d)
    phi = oblivious_shapley(ensemble, d)
    for b, m in itertools.product(range(2), range(3)):
        players, leaves = ensemble.players[:, b, m], ensemble.leaves[:, b, m]

        def value(coalition, players=players, leaves=leaves):
            mask = np.zeros(d, bool)
            mask[list(coalition)] = True
            return ensemble_value(players, leaves, mask)

        np.testing.assert_allclose(phi[b, m], brute_force_shapley(value, d), atol=1e-12)


@pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))
def test_predictions_are_the_fitted_ensemble_and_held_out_targets_do_not_move_it(backend):
    rng = np.random.default_rng(2)
    d, rows, problems = 6, 2, 3
    masks = np.broadcast_to(all_masks(d), (rows, 2**d, d))
    targets = rng.normal(size=(rows, 2**d, problems))
    weights = (rng.random((rows, 2**d, problems)) < 0.7).astype(float)
    settings = BoostingSettings(n_trees=6, depth=3, learning_rate=0.5, l2=1.0)
    fit = fit_oblivious_boosting(masks, targets, weights, settings, backend)
    for b, m in itertools.product(range(rows), range(problems)):
        players, leaves = fit.players[:, b, m], fit.leaves[:, b, m]
        assert all(len(set(tree)) == 3 for tree in players)  # a player splits a tree once
        direct = [ensemble_value(players, leaves, mask) for mask in masks[b]]
        np.testing.assert_allclose(fit.predictions[b, :, m], direct, atol=1e-12)
    moved = np.where(weights == 0, targets + rng.normal(size=targets.shape) * 100, targets)
    refit = fit_oblivious_boosting(masks, moved, weights, settings, backend)
    np.testing.assert_array_equal(refit.players, fit.players)
    np.testing.assert_allclose(refit.leaves, fit.leaves, atol=1e-12)


def test_boosting_learns_an_interaction_it_can_represent():
    d = 7
    masks = all_masks(d)[None]
    z = masks[0].astype(float)
    target = (3.0 * z[:, 0] * z[:, 1] * z[:, 2] - 2.0 * z[:, 4] * (1 - z[:, 5]))[None, :, None]
    settings = BoostingSettings(n_trees=60, depth=3, learning_rate=0.5, l2=0.0)
    fit = fit_oblivious_boosting(masks, target, np.ones_like(target), settings, CpuBackend())
    np.testing.assert_allclose(fit.predictions, target, atol=1e-6)


def test_the_numba_fit_equals_the_array_twin_and_runs_on_cupys_rules():
    rng = np.random.default_rng(3)
    masks = rng.random((2, 40, 9)) < 0.5
    targets, weights = rng.normal(size=(2, 40, 4)), (rng.random((2, 40, 4)) < 0.8).astype(float)
    settings = BoostingSettings(n_trees=5, depth=4, learning_rate=0.3, l2=1.0)
    numba_fit = fit_oblivious_boosting(masks, targets, weights, settings, CpuBackend())
    strict = StrictBackend()
    args = (strict.to_device(masks), strict.to_device(targets), strict.to_device(weights))
    twin_fit = fit_oblivious_boosting(*args, settings, strict)
    np.testing.assert_array_equal(strict.to_numpy(twin_fit.players), numba_fit.players)
    np.testing.assert_allclose(strict.to_numpy(twin_fit.predictions), numba_fit.predictions, atol=1e-12)
    phi = oblivious_shapley(twin_fit, 9, strict.xp)
    np.testing.assert_allclose(strict.to_numpy(phi), oblivious_shapley(numba_fit, 9), atol=1e-12)


def test_the_numba_fit_split_over_threads_equals_the_array_twin(monkeypatch):
    monkeypatch.setattr(oblivious_fit, "_MIN_THREAD_ADDITIONS", 0)  # every item worth a thread
    calls = []
    monkeypatch.setattr(oblivious_fit, "run_ranges", lambda *args: calls.append(args) or run_ranges(*args))
    rng = np.random.default_rng(4)
    masks = rng.random((4, 200, 10)) < 0.5
    targets, weights = rng.normal(size=(4, 200, 8)), (rng.random((4, 200, 8)) < 0.9).astype(float)
    settings = BoostingSettings(n_trees=10, depth=4, learning_rate=0.3, l2=1.0)
    numba_fit = fit_oblivious_boosting(masks, targets, weights, settings, CpuBackend())  # 32 items on threads
    assert [args[1:] for args in calls] == [(32, 0)]
    twin_fit = fit_oblivious_boosting(masks, targets, weights, settings, ArrayBackend(np))
    np.testing.assert_array_equal(numba_fit.players, twin_fit.players)
    np.testing.assert_allclose(numba_fit.leaves, twin_fit.leaves, atol=1e-12)
    np.testing.assert_allclose(numba_fit.predictions, twin_fit.predictions, atol=1e-12)
