"""Linear models after steps that mix columns affinely (a PCA): the linear path on the columns before them."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA, FactorAnalysis, FastICA, KernelPCA, TruncatedSVD
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, StandardScaler
from sklearn.random_projection import GaussianRandomProjection

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.explainers._affine_steps import split_affine_tail
from tests.brute_force import brute_force_shapley, interventional_frame_value, interventional_value
from tests.exact_path_checks import assert_auto_takes_the_enumerated_values


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6)) * [1.0, 2.0, 0.5, 1.0, 3.0, 1.0]
    y = X[:, 0] - X[:, 1] * X[:, 2] + np.sin(X[:, 3]) + 0.3 * X[:, 4]
    return X, y


MODELS = {
    "pca_logistic_probability": (
        lambda: make_pipeline(StandardScaler(), PCA(3), LogisticRegression()),
        "probability",
    ),
    "whitened_pca_scaled_ridge": (lambda: make_pipeline(PCA(4, whiten=True), StandardScaler(), Ridge()), "auto"),
    "projection_ridge": (lambda: make_pipeline(GaussianRandomProjection(4, random_state=0), Ridge()), "auto"),
    "ica_logistic_margin": (
        lambda: make_pipeline(MinMaxScaler(), FastICA(3, random_state=0), LogisticRegression()),
        "margin",
    ),
    "factor_analysis_ridge": (lambda: make_pipeline(FactorAnalysis(2, random_state=0), Ridge()), "auto"),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_auto_takes_the_linear_path_through_the_mixing_steps(data, name):
    X, y = data
    make, output = MODELS[name]
    model = make().fit(X, y > 0 if output != "auto" else y)

    def predict(rows):
        if output == "probability":
            return model.predict_proba(rows)[:, 1]
        return model.decision_function(rows) if output == "margin" else model.predict(rows)

    assert_auto_takes_the_enumerated_values(model, output, predict, X[40:43], X[:10], "linear")


def test_the_margin_stays_exact_past_the_enumerated_players():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 24))
    model = make_pipeline(StandardScaler(), PCA(5), LogisticRegression()).fit(X, X[:, 0] + X[:, 7] > 0)
    background, rows = X[:6], X[100:102]
    explainer = PermutationShapExplainer(model, output="margin", background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "linear"
    values = explainer.explain(rows).values
    for x, phi in zip(rows, values, strict=True):  # the game is additive: φ_i = v({i}) − v(∅)
        empty = interventional_value(model.decision_function, x, background, [])
        singles = [interventional_value(model.decision_function, x, background, [i]) - empty for i in range(24)]
        np.testing.assert_allclose(phi, singles, rtol=1e-9, atol=1e-12)


def test_a_raw_table_encoded_then_mixed_by_a_truncated_svd(data):
    X, y = data
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(X[:, :4], columns=list("abcd")).assign(colour=rng.choice(["red", "green", "blue"], len(X)))
    encoder = ColumnTransformer([("one_hot", OneHotEncoder(), ["colour"])], remainder="passthrough")
    model = make_pipeline(encoder, TruncatedSVD(3, random_state=0), Ridge()).fit(frame, y + (frame.colour == "red"))
    background, rows = frame.iloc[:8], frame.iloc[60:62]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "linear"
    expected = [
        brute_force_shapley(
            lambda coalition, i=i: interventional_frame_value(model.predict, rows.iloc[[i]], background, coalition), 5
        )
        for i in range(2)
    ]
    np.testing.assert_allclose(explainer.explain(rows).values, expected, rtol=1e-9, atol=1e-12)


def test_a_nonlinear_mix_samples_and_a_refitted_pca_is_refused(data):
    X, y = data
    kernel = make_pipeline(KernelPCA(3), Ridge()).fit(X, y)
    assert split_affine_tail(kernel)[1] is None
    explainer = PermutationShapExplainer(kernel, background_size=10, progress=False)
    assert explainer.fit(X).algorithm_ not in ("linear", "quadratic")
    model = make_pipeline(PCA(3), Ridge()).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(X[:10])
    assert explainer.algorithm_ == "linear"
    model[0].fit(X[:, ::-1])
    with pytest.raises(ValueError, match="refitted"):
        explainer.explain(X[20:22])


def test_split_affine_tail_keeps_column_wise_steps_without_a_mix():
    model = make_pipeline(StandardScaler(), MinMaxScaler(), Ridge())
    assert split_affine_tail(model) == (model, None)
    clipped = make_pipeline(PCA(2), MinMaxScaler(clip=True), Ridge())
    assert split_affine_tail(clipped) == (clipped, None)  # a clipped scaler is not affine: nothing after it mixes


def test_columns_far_from_zero_keep_the_linear_path(data):
    X, y = data
    far = X + 1e5  # the map is read near the data: no cancellation against the PCA's mean
    model = make_pipeline(PCA(3), Ridge()).fit(far, y)
    assert_auto_takes_the_enumerated_values(model, "auto", model.predict, far[40:42], far[:10], "linear", atol=1e-9)
