"""The retrain game on a dask cluster: refits seeded by (random_state, coalition), identical on any backend."""

from __future__ import annotations

import threading

import joblib
import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_shapq import TopKShapley
from sklearn_shapq.games import RetrainGame
from sklearn_shapq.games import _score_games as score_games
from sklearn_shapq.games._score_games import _score_tasks, coalition_seed, cross_validated_score

N_FEATURES = 6
RESULTS = ("top_k_", "support_", "shapley_values_", "stderr_", "n_evals_", "pac_satisfied_", "empty_value_")
FITS: list[tuple[str, int | None, int | None]] = []
"""(thread name, n_jobs, random_state) of every fit of a recording estimator (in-process workers only)."""


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, N_FEATURES))
    y = 3.0 * X[:, 0] + 2.0 * X[:, 3] - 1.5 * X[:, 4] + 0.5 * rng.normal(size=150)
    return X, y


class RecordingForest(RandomForestRegressor):
    """A random forest that records the thread, n_jobs and random_state of its fits."""

    def fit(self, X, y, sample_weight=None):
        FITS.append((threading.current_thread().name, self.n_jobs, self.random_state))
        return super().fit(X, y, sample_weight)


class RecordingNeighbors(KNeighborsRegressor):
    """Nearest neighbours (no random_state) that record the thread and n_jobs of their fits."""

    def fit(self, X, y):
        FITS.append((threading.current_thread().name, self.n_jobs, None))
        return super().fit(X, y)


def selector(estimator, **params) -> TopKShapley:
    defaults = dict(n_features_to_select=2, cv=3, max_evals=60, t_min=3, random_state=0, game="retrain", progress=False)
    defaults.update(params)
    return TopKShapley(estimator, **defaults)


def results(fitted: TopKShapley) -> dict:
    return {name: getattr(fitted, name) for name in RESULTS}


def assert_same_results(a: TopKShapley, b: TopKShapley) -> None:
    for name, value in results(a).items():
        np.testing.assert_array_equal(getattr(b, name), value, err_msg=name)


def test_random_forest_selection_is_identical_serial_loky_and_on_dask(data, dask_client):
    X, y = data
    forest = RandomForestRegressor(n_estimators=5)  # random_state=None: the selector seeds its refits
    serial = selector(forest, n_jobs=1).fit(X, y)
    loky = selector(forest, n_jobs=2).fit(X, y)
    with joblib.parallel_config(backend="dask"):
        on_dask = selector(forest).fit(X, y)  # n_jobs=None: the cluster's 2 workers
    assert_same_results(serial, loky)
    assert_same_results(serial, on_dask)
    assert forest.get_params()["random_state"] is None and forest.n_jobs is None  # the estimator is not changed
    other = selector(forest, n_jobs=1, random_state=1).fit(X, y)
    assert not np.array_equal(other.shapley_values_, serial.shapley_values_)


def test_dask_runs_the_refits_single_threaded_on_the_workers_with_coalition_seeds(data, dask_client):
    X, y = data
    FITS.clear()
    with joblib.parallel_config(backend="dask"):
        on_dask = selector(RecordingForest(n_estimators=5), max_evals=30).fit(X, y)
    refits = FITS[1:]  # the first fit is estimator_'s, in this thread
    assert refits and all(name != threading.current_thread().name for name, _, _ in refits)
    assert {n_jobs for _, n_jobs, _ in refits} == {1}  # left at None: forced to 1 in the workers
    assert len({seed for _, _, seed in refits}) > 1 and None not in {seed for _, _, seed in refits}
    assert FITS[0][1:] == (None, None)  # estimator_ is a clone of the estimator as given
    FITS.clear()
    serial = selector(RecordingForest(n_estimators=5), max_evals=30, n_jobs=1).fit(X, y)
    assert {n_jobs for _, n_jobs, _ in FITS} == {None}  # one job: nothing forced
    assert_same_results(serial, on_dask)
    FITS.clear()
    with joblib.parallel_config(backend="dask"):
        selector(RecordingForest(n_estimators=5, n_jobs=3), max_evals=30).fit(X, y)
    assert {n_jobs for _, n_jobs, _ in FITS} == {3}  # an n_jobs the user set is kept


def test_same_int_random_state_same_results(data, dask_client):
    X, y = data
    forest = RandomForestRegressor(n_estimators=5)
    first = selector(forest, n_jobs=1).fit(X, y)
    second = selector(forest, n_jobs=1).fit(X, y)
    assert_same_results(first, second)
    with joblib.parallel_config(backend="dask"):
        again = selector(forest).fit(X, y)
    assert_same_results(first, again)


def test_coalition_seed_depends_on_the_seed_and_mask_alone():
    rng = np.random.default_rng(1)
    masks = np.unique(rng.random((40, 10)) < 0.5, axis=0)
    seeds = [coalition_seed(7, mask) for mask in masks]
    assert seeds == [coalition_seed(7, mask.copy()) for mask in masks]  # the same mask, the same seed
    assert seeds[::-1] == [coalition_seed(7, mask) for mask in masks[::-1]]  # in any order
    assert seeds[0] == coalition_seed(7, masks[0].astype(np.uint8))  # whatever the mask's dtype
    assert len(set(seeds)) == len(masks)  # different masks, different seeds
    assert seeds != [coalition_seed(8, mask) for mask in masks]  # another seed, other seeds
    assert all(0 <= seed < 2**31 for seed in seeds)


def test_retrain_game_scores_do_not_depend_on_the_order_of_evaluation(data):
    X, y = data
    masks = np.unique(np.random.default_rng(2).random((12, N_FEATURES)) < 0.5, axis=0)
    forest = RandomForestRegressor(n_estimators=5)
    forward = RetrainGame(forest, X, y, cv=3, scoring=None, n_jobs=None, seed=11)(masks)[:, 0]
    game = RetrainGame(forest, X, y, cv=3, scoring=None, n_jobs=2, seed=11)
    backward = np.concatenate([game(masks[i : i + 1])[:, 0] for i in range(len(masks))[::-1]])
    np.testing.assert_array_equal(backward[::-1], forward)
    # a coalition's score is cross_validated_score with its coalition seed
    mask = masks[-1]
    expected = cross_validated_score(forest, X, y, mask, game.folds, game.scorer, coalition_seed(11, mask))
    assert forward[-1] == expected


def test_nested_random_state_and_n_jobs_are_set_on_the_clones_only(data):
    X, y = data
    pipeline = make_pipeline(StandardScaler(), RecordingForest(n_estimators=3))
    game = RetrainGame(pipeline, X, y, cv=2, scoring=None, n_jobs=2, seed=5)
    mask = np.ones(N_FEATURES, dtype=bool)
    model, _, seed = game._task(mask)
    assert model is pipeline and seed == coalition_seed(5, mask)
    FITS.clear()
    cross_validated_score(model, X, y, mask, game.folds, game.scorer, seed, single_threaded=True)
    assert [fit[1:] for fit in FITS] == [(1, seed)] * 2
    assert pipeline.get_params()["recordingforest__random_state"] is None
    assert pipeline.get_params()["recordingforest__n_jobs"] is None
    # without a seed the estimator's random_state is left as it is
    assert RetrainGame(pipeline, X, y, cv=2, scoring=None, n_jobs=2)._task(mask)[2] is None


def test_an_estimator_without_random_state_works_everywhere(data, dask_client):
    X, y = data
    FITS.clear()
    serial = selector(RecordingNeighbors(n_neighbors=7), n_jobs=1).fit(X, y)
    assert {n_jobs for _, n_jobs, _ in FITS} == {None}
    loky = selector(KNeighborsRegressor(n_neighbors=7), n_jobs=2).fit(X, y)
    FITS.clear()
    with joblib.parallel_config(backend="dask"):
        on_dask = selector(RecordingNeighbors(n_neighbors=7)).fit(X, y)
    assert {n_jobs for _, n_jobs, _ in FITS[1:]} == {1}
    assert_same_results(serial, loky)
    assert_same_results(serial, on_dask)
    assert RetrainGame(KNeighborsRegressor(), X, y, 3, None, None, seed=0)._task(np.ones(N_FEATURES, bool))[2] is None


def test_memory_shares_scores_between_dask_and_serial_fits(data, dask_client, tmp_path):
    X, y = data
    memory = joblib.Memory(tmp_path / "scores", verbose=0)
    with joblib.parallel_config(backend="dask"):
        on_dask = selector(RecordingForest(n_estimators=5), memory=memory).fit(X, y)
    FITS.clear()
    serial = selector(RecordingForest(n_estimators=5), memory=memory, n_jobs=1).fit(X, y)
    assert len(FITS) == 1  # only estimator_: every score came from the memory (n_jobs is not in the key)
    assert_same_results(on_dask, serial)
    FITS.clear()
    selector(RecordingForest(n_estimators=5), memory=memory, n_jobs=1, random_state=1).fit(X, y)
    assert len(FITS) > 1  # another seed: other refits


TASKS: list[int] = []
"""Coalitions in each joblib task of the retrain game (in-process workers only)."""


def counting_score_tasks(score, tasks, *args):
    TASKS.append(len(tasks))
    return _score_tasks(score, tasks, *args)


def test_tiny_refits_are_batched_into_a_few_tasks_in_order(data, dask_client, monkeypatch):
    X, y = data
    masks = np.unique(np.random.default_rng(3).random((64, N_FEATURES)) < 0.5, axis=0)
    serial = RetrainGame(Ridge(), X, y, cv=3, scoring=None, n_jobs=1, seed=0)(masks)
    monkeypatch.setattr(score_games, "_score_tasks", counting_score_tasks)
    TASKS.clear()
    with joblib.parallel_config(backend="dask"):
        on_dask = RetrainGame(Ridge(), X, y, cv=3, scoring=None, n_jobs=None, seed=0)(masks)
    np.testing.assert_array_equal(on_dask, serial)
    assert sorted(TASKS) == sorted(len(batch) for batch in np.array_split(masks, 4))  # 2 per worker
