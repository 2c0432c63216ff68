"""Past 16 players, "auto" samples a linked sum's game (a boosted or logistic probability) less its top players'."""

import threading

import numba
import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression, PoissonRegressor

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq.explainers._exact_paths import linked_structure
from sklearn_shapq.explainers._top_players_control import TopPlayersControl

D = 17


@pytest.fixture(scope="module", params=["boosted trees", "logistic regression"])
def problem(request):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, D))
    logit = 2 * X[:, 0] + X[:, 1] * X[:, 2] - 1.5 * X[:, 3] + np.sin(2 * X[:, 4]) + 0.5 * X[:, 5:].sum(axis=1)
    if request.param == "boosted trees":
        model = HistGradientBoostingClassifier(max_iter=40, max_depth=3, random_state=0).fit(X, logit > 0)
    else:  # weights decaying with the feature: the top 12 players hold most of the game
        model = LogisticRegression().fit(X, X @ (3 * 0.7 ** np.arange(D)) + rng.normal(size=600) > 0)
    background, rows = X[:6], X[100:102]
    return model, background, rows, _brute_force(model, background, rows)


def _brute_force(model, background, rows):
    """Every row's Shapley values of the probability from all 2^D coalitions (the model's own outputs)."""
    codes = np.arange(1 << D)
    masks = (codes[:, None] >> np.arange(D) & 1).astype(bool)
    sizes = masks.sum(axis=1)
    factorial = np.cumprod(np.r_[1.0, np.arange(1.0, D + 1)])
    weight = factorial[sizes] * factorial[np.maximum(D - sizes - 1, 0)] / factorial[D]
    values = []
    for x in rows:
        table = np.zeros(1 << D)
        for z in background:
            table += model.predict_proba(np.where(masks, x, z))[:, 1] / len(background)
        phi = [
            np.sum(weight[~masks[:, j]] * (table[codes[~masks[:, j]] | 1 << j] - table[codes[~masks[:, j]]]))
            for j in range(D)
        ]
        values.append(phi)
    return np.array(values)


def _explain(model, background, rows, algorithm, seed):
    explainer = PermutationShapExplainer(
        model, output="probability", algorithm=algorithm, max_evals=10 * D, background_size=None, random_state=seed
    )
    return explainer.fit(background).explain(rows)


def test_auto_estimates_the_residual_and_adds_the_top_players_exact_values(problem):
    model, background, rows, truth = problem
    controlled = [_explain(model, background, rows, "auto", seed) for seed in range(3)]
    assert controlled[0].diagnostics["control_players"] == 12 and controlled[0].diagnostics["algorithm"] == "leverage"
    base = model.predict_proba(background)[:, 1].mean()
    for explanation in controlled:  # efficient to the model's own outputs
        np.testing.assert_allclose(explanation.values.sum(axis=1) + base, model.predict_proba(rows)[:, 1], atol=1e-10)
    plain = [_explain(model, background, rows, "leverage", seed) for seed in range(3)]
    assert plain[0].diagnostics["control_players"] == 0  # a named algorithm samples the game itself
    error = [np.sqrt(np.mean((e.values - truth) ** 2)) for e in controlled]
    plain_error = [np.sqrt(np.mean((e.values - truth) ** 2)) for e in plain]
    assert np.mean(error) < 0.6 * np.mean(plain_error)
    within = [np.abs(e.values - truth) <= 3 * e.error_std + 1e-12 for e in controlled]
    assert np.mean(within) >= 0.9  # the residual's standard errors cover


def test_a_row_alone_is_bit_identical_to_the_row_in_a_batch(problem):
    model, background, rows, _ = problem
    batch = _explain(model, background, rows, "auto", 1).values
    alone = _explain(model, background, rows[1:], "auto", 1).values
    np.testing.assert_array_equal(alone[0], batch[1])


def test_the_tables_run_on_a_thread_of_their_own_only_where_blocks_overlap(problem, monkeypatch):
    """With ``n_jobs`` (model calls on threads) or one numba thread, nothing runs beside the user's threads; beside
    the model's calls the tables leave it a core (one numba thread fewer)."""
    if numba.get_num_threads() < 2:
        pytest.skip("blocks overlap with two numba threads or more")
    model, background, rows, _ = problem
    threads = []
    tables = TopPlayersControl.tables

    def recording(self, *args):
        threads.append((threading.current_thread().name, numba.get_num_threads()))
        return tables(self, *args)

    monkeypatch.setattr(TopPlayersControl, "tables", recording)
    settings = {"output": "probability", "max_evals": 10 * D, "background_size": None, "random_state": 0}
    overlapped = PermutationShapExplainer(model, **settings).fit(background).explain(rows)
    assert threads and all(name.startswith("sklearn_shapq-control") for name, _ in threads)
    assert {count for _, count in threads} == {numba.get_num_threads() - 1}
    threads.clear()
    threaded = PermutationShapExplainer(model, n_jobs=2, **settings).fit(background).explain(rows)
    assert threads and not any(name.startswith("sklearn_shapq-control") for name, _ in threads)
    np.testing.assert_array_equal(threaded.values, overlapped.values)


def test_a_control_that_overflows_names_the_explained_row_not_the_background_part():
    rng = np.random.default_rng(0)
    d = 18
    X = rng.normal(size=(300, d))
    model = PoissonRegressor().fit(X, rng.poisson(np.exp(0.5 * X[:, 0])))
    groups = FeatureGroups([str(j) for j in range(d)], np.arange(d))
    path = linked_structure(model, "predict", X[:8], model.predict(X[:8])[:, None], groups)
    rows = X[100:103].copy()
    rows[2, 0] = 1e5 / model.coef_[0]  # row 2's margin overflows the exp on its coalitions with player 0
    with pytest.raises(ValueError, match=r"infinite on hybrid rows of 1 of 3 explained rows \(the first: row 2 "):
        TopPlayersControl(path).tables(rows, parts=4)


def test_the_players_are_the_top_by_the_margins_values_against_16_evenly_spaced_background_rows():
    """A logistic margin's values in closed form, w_j (x_j − mean z_j) over the rows 0, 2, 5, 7, … of 40."""
    rng = np.random.default_rng(3)
    d = 18
    X = rng.normal(size=(400, d)) * rng.uniform(0.5, 2.0, size=d)
    model = LogisticRegression().fit(X, X @ rng.normal(size=d) + rng.normal(size=400) > 0)
    background, rows = X[:40], X[200:204]
    explainer = PermutationShapExplainer(
        model, output="probability", max_evals=10 * d, background_size=None, random_state=0
    ).fit(background)
    players, _, values = explainer._control.tables(rows, 2)
    ranking = background[np.arange(16) * 40 // 16]
    margin_values = model.coef_[0] * (rows - ranking.mean(axis=0))
    expected = np.argsort(-np.abs(margin_values), axis=1, kind="stable")[:, :12]
    np.testing.assert_array_equal(players[::2], expected)
    assert np.all(values[np.arange(4)[:, None], np.argsort(-np.abs(margin_values), axis=1)[:, 12:]] == 0)
    batch = explainer.explain(rows)
    np.testing.assert_allclose(
        batch.values.sum(axis=1) + batch.base_values, model.predict_proba(rows)[:, 1], rtol=0, atol=1e-10
    )
    np.testing.assert_array_equal(explainer.explain(rows[2:3]).values[0], batch.values[2])
