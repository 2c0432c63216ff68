"""AdaBoost (SAMME) of decision trees: its decision function is a sum of the trees' weighted votes, read exactly."""

import numpy as np
import pytest
from sklearn.ensemble import AdaBoostClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from sklearn_shapq import PermutationShapExplainer
from tests.exact_path_checks import (
    assert_auto_takes_the_enumerated_values,
    assert_groups_and_faith_pairs_are_enumerated,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 5))
    X[:, 4] = np.round(X[:, 4])  # ties with the thresholds
    score = X[:, 0] + X[:, 1] * X[:, 2]
    return X, (score > 0).astype(int), (score > 0).astype(int) + (X[:, 3] > 0.5) + (X[:, 4] > 0)


def _explained(model, output, n_classes):
    def predict(rows):
        if output == "margin":
            return model.decision_function(rows)
        probability = model.predict_proba(rows)
        probability = probability[:, 1] if n_classes == 2 else probability
        if output == "probability":
            return probability
        clipped = np.clip(probability, 1e-12, 1 - 1e-12)
        return np.log(clipped / (1 - clipped))

    return predict


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("output", ["margin", "probability", "log_odds"])
@pytest.mark.parametrize("depth", [1, 3])
def test_auto_takes_the_tree_path_of_the_weighted_votes(data, n_classes, output, depth):
    X, binary, classes = data
    y = binary if n_classes == 2 else classes
    model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=depth), n_estimators=25, random_state=0).fit(X, y)
    assert len(model.classes_) == n_classes
    predict = _explained(model, output, n_classes)
    assert_auto_takes_the_enumerated_values(model, output, predict, X[60:63], X[:10], "tree")


def test_groups_and_exact_pairs_of_the_probability(data):
    X, binary, _ = data
    model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=25, random_state=0).fit(X, binary)
    predict = _explained(model, "probability", 2)
    assert_groups_and_faith_pairs_are_enumerated(model, "probability", X, predict, np.arange(100, 110), "tree")


def test_other_weak_learners_sample(data):
    X, binary, _ = data
    model = AdaBoostClassifier(LogisticRegression(), n_estimators=5).fit(X, binary)
    explainer = PermutationShapExplainer(model, background_size=10, progress=False)
    assert explainer.fit(X).algorithm_ != "tree"
