"""IsolationForest: its score, −2^(−mean path length / c(ψ)) − offset, is a link of a sum over its trees, enumerated."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import IsolationForest

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.explainers._exact_paths import LINKED_MAX_PLAYERS
from tests.exact_path_checks import (
    assert_auto_takes_the_enumerated_values,
    assert_groups_and_faith_pairs_are_enumerated,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 5))
    X[:12] += 4.0  # outliers
    X[:, 4] = np.round(X[:, 4])  # ties with the thresholds
    return X


@pytest.mark.parametrize(
    "settings",
    [
        {},  # 256 rows a tree, every column, contamination "auto" (offset −0.5)
        {"max_features": 0.6, "max_samples": 64},  # each tree on three of the five columns
        {"contamination": 0.05, "bootstrap": True, "n_estimators": 30},  # the offset from the scores
    ],
)
def test_auto_takes_the_tree_path_of_the_score(data, settings):
    model = IsolationForest(random_state=0, **settings).fit(data)
    assert_auto_takes_the_enumerated_values(model, "auto", model.decision_function, data[:4], data[100:120], "tree")


def test_missing_values_take_the_trees_own_way(data):
    X = data.copy()
    X[::5, 1] = np.nan
    model = IsolationForest(n_estimators=40, random_state=0).fit(X)
    rows = np.vstack([X[:2], X[5:6]])  # the third has column 1 missing
    assert_auto_takes_the_enumerated_values(model, "margin", model.decision_function, rows, X[200:215], "tree")


def test_groups_and_exact_pairs_of_the_score(data):
    model = IsolationForest(n_estimators=40, random_state=0).fit(data)
    assert_groups_and_faith_pairs_are_enumerated(
        model, "margin", data, model.decision_function, np.arange(100, 110), "tree"
    )


def test_a_raw_table_of_the_score(data):
    frame = pd.DataFrame(data, columns=list("abcde"))
    model = IsolationForest(n_estimators=40, random_state=0).fit(frame)
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(frame.iloc[100:130])
    explanation = explainer.explain(frame.iloc[:3])
    assert explainer.algorithm_ == "tree"
    assert list(explanation.feature_names) == list("abcde")
    total = explanation.values.sum(axis=1) + explanation.base_values
    np.testing.assert_allclose(total, model.decision_function(frame.iloc[:3]), rtol=1e-9, atol=1e-12)


def test_its_label_and_more_players_than_enumerated_are_sampled(data):
    model = IsolationForest(n_estimators=20, random_state=0).fit(data)
    labels = PermutationShapExplainer(model, output="predict", background_size=20, progress=False).fit(data)
    assert labels.algorithm_ != "tree"
    wide = np.random.default_rng(0).normal(size=(300, LINKED_MAX_PLAYERS + 1))
    wide_model = IsolationForest(n_estimators=20, random_state=0).fit(wide)
    sampled = PermutationShapExplainer(
        wide_model, max_evals=400, background_size=20, random_state=0, progress=False
    ).fit(wide)
    assert sampled.algorithm_ != "tree"
    with pytest.raises(ValueError, match="at most 16 players") as refusal:
        PermutationShapExplainer(wide_model, algorithm="tree", background_size=20, progress=False).fit(wide)
    assert "output='margin'" not in str(refusal.value)  # the score is the margin: no advice to explain it
    explanation = sampled.explain(wide[:2])
    total = explanation.values.sum(axis=1) + explanation.base_values
    np.testing.assert_allclose(total, wide_model.decision_function(wide[:2]), rtol=1e-9, atol=1e-12)
