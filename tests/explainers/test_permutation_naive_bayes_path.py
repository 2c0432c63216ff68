"""The linear path of naive Bayes classifiers other than Gaussian: their scores are sums of per-feature terms."""

import numpy as np
import pytest
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer

from sklearn_shapq import PermutationShapExplainer
from tests.exact_path_checks import assert_auto_takes_the_enumerated_values

D = 5


def _logit(p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p))


@pytest.fixture(scope="module")
def data():
    """Counts (for the multinomial and complement models), reals, and codes 0-3, with 2- and 3-class labels."""
    rng = np.random.default_rng(11)
    rates = np.array([1.0, 3.0, 0.5, 2.0, 1.5])
    counts = rng.poisson(rates * rng.gamma(2.0, 0.5, size=(300, 1)) * rng.uniform(0.5, 1.5, size=(300, D)))
    reals = rng.normal(size=(300, D))
    codes = rng.integers(0, 4, size=(300, D))
    score = counts[:, 1] - counts[:, 3] + reals[:, 0] - reals[:, 2] + codes[:, 4] - codes[:, 0]
    return counts.astype(float), reals, codes.astype(float), score


MODELS = {
    "multinomial": (MultinomialNB, {}, "counts"),
    "complement": (ComplementNB, {}, "counts"),
    "bernoulli": (BernoulliNB, {"binarize": 0.2}, "reals"),
    "bernoulli_on_bins": (lambda: make_pipeline(KBinsDiscretizer(n_bins=2), BernoulliNB(binarize=None)), {}, "reals"),
    "categorical": (CategoricalNB, {}, "codes"),
}


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize(
    ("n_classes", "output"), [(2, "probability"), (2, "auto"), (3, "probability"), (3, "log_odds")]
)
def test_auto_gives_the_enumerated_values_of_the_interventional_game(data, name, n_classes, output):
    counts, reals, codes, score = data
    make, params, inputs = MODELS[name]
    X = {"counts": counts, "reals": reals, "codes": codes}[inputs]
    labels = score > np.median(score) if n_classes == 2 else np.digitize(score, np.percentile(score, [33, 67]))
    model = make(**params).fit(X, labels)
    if output == "probability":
        predict = (lambda r: model.predict_proba(r)[:, 1]) if n_classes == 2 else model.predict_proba
    else:
        predict = (
            (lambda r: _logit(model.predict_proba(r)[:, 1]))
            if n_classes == 2
            else (lambda r: _logit(model.predict_proba(r)))
        )
    explanation = assert_auto_takes_the_enumerated_values(
        model, output, predict, X[:3], X[100:115], "linear", atol=1e-10
    )
    assert (explanation.diagnostics["n_model_calls"], explanation.diagnostics["n_model_rows"]) == (1, 3)


def test_a_binary_log_odds_is_additive_at_any_number_of_features():
    """Thirty count features: the log-odds is the margin of the per-feature terms, in closed form (no enumeration).

    An additive game's value of player i is the mean over background rows of f(z with x_i) − f(z), written with the
    model's public API.
    """
    rng = np.random.default_rng(2)
    X = rng.poisson(2.0, size=(200, 30)).astype(float)
    model = MultinomialNB().fit(X, X[:, :10].sum(axis=1) > X[:, 10:20].sum(axis=1))
    background, rows = X[:20], X[100:103]
    explanation = PermutationShapExplainer(model, background_size=None, progress=False).fit(background).explain(rows)
    assert explanation.diagnostics["n_model_rows"] == 3

    def log_odds(r):
        return _logit(model.predict_proba(r)[:, 1])

    for x, phi in zip(rows, explanation.values, strict=True):
        expected = []
        for i in range(30):
            swapped = background.copy()
            swapped[:, i] = x[i]
            expected.append((log_odds(swapped) - log_odds(background)).mean())
        np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values, log_odds(rows), rtol=1e-10)
