"""The ensemble path of "auto": voting, linear stacks, calibrations and transformed targets, from their members'."""

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import TransformedTargetRegressor
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
    StackingRegressor,
    VotingClassifier,
    VotingRegressor,
)
from sklearn.frozen import FrozenEstimator
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, Matern
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, QuantileTransformer, RobustScaler, StandardScaler
from sklearn.svm import SVR, LinearSVC, LinearSVR
from sklearn.tree import DecisionTreeRegressor

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.explainers._ensemble_models import extract_ensemble
from tests.exact_path_checks import (
    assert_auto_takes_the_enumerated_values,
    assert_groups_and_faith_pairs_are_enumerated,
)

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, D)) * [1.0, 2.0, 0.5, 1.0, 3.0]
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - 0.2 * X[:, 4] + 0.3 * rng.normal(size=300)
    return X, y


def _regressors():
    return [
        ("ridge", make_pipeline(StandardScaler(), Ridge())),
        ("drop", "drop"),
        ("forest", RandomForestRegressor(8, max_depth=4, random_state=0)),
        ("svr", make_pipeline(StandardScaler(), SVR(C=3.0))),
    ]


MODEL_NAMES = [
    "voting",
    "stacking",
    "stacking_after_scaler",
    "soft_voting_probability",
    "soft_voting_three_classes",
    "calibrated_boosting",
    "calibrated_linear_svc",
    "calibrated_forest_probability",
    "calibrated_prefit",
    "isotonic_boosting",
    "isotonic_linear_svc",
    "log_target",
    "log1p_target",
    "scaled_target",
    "min_max_target",
]


@pytest.fixture(scope="module")
def models(data):
    """(model, ``output``, the explained output written from the model's public API) by name."""
    X, y = data
    voting = VotingRegressor(_regressors(), weights=[2.0, 7.0, 1.0, 0.5]).fit(X, y)
    stacking = StackingRegressor(_regressors()[:3]).fit(X, y)
    scaled = make_pipeline(
        StandardScaler(), StackingRegressor([("ols", LinearRegression()), ("boost", GradientBoostingRegressor())])
    ).fit(X, y)
    members = [
        ("logistic", make_pipeline(StandardScaler(), LogisticRegression())),
        ("boost", HistGradientBoostingClassifier(max_iter=15, random_state=0)),
        ("forest", RandomForestClassifier(6, max_depth=3, random_state=0)),
    ]
    soft = VotingClassifier(members, voting="soft", weights=[1.0, 2.0, 1.0]).fit(X, y > 0)
    three = VotingClassifier(members[:2], voting="soft").fit(X, np.digitize(y, [-1.0, 1.0]))
    labels = y > 0
    boosting = CalibratedClassifierCV(HistGradientBoostingClassifier(max_iter=15, random_state=0), cv=3).fit(X, labels)
    svc = CalibratedClassifierCV(make_pipeline(StandardScaler(), LinearSVC()), cv=4).fit(X, labels)
    forest = CalibratedClassifierCV(RandomForestClassifier(6, max_depth=3, random_state=0), ensemble=False).fit(
        X, labels
    )
    prefit = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X[:150], labels[:150])
    frozen = CalibratedClassifierCV(FrozenEstimator(prefit)).fit(X[150:], labels[150:])
    isotonic_boosting = CalibratedClassifierCV(
        HistGradientBoostingClassifier(max_iter=15, random_state=0), method="isotonic", cv=3
    ).fit(X, labels)
    isotonic_svc = CalibratedClassifierCV(make_pipeline(StandardScaler(), LinearSVC()), method="isotonic").fit(
        X, labels
    )
    positive = np.exp(y / 3.0)
    log_target = TransformedTargetRegressor(
        RandomForestRegressor(6, max_depth=4, random_state=0), func=np.log, inverse_func=np.exp
    ).fit(X, positive)
    log1p_target = TransformedTargetRegressor(
        make_pipeline(StandardScaler(), Ridge()), func=np.log1p, inverse_func=np.expm1
    ).fit(X, positive)
    scaled_target = TransformedTargetRegressor(
        GradientBoostingRegressor(n_estimators=20), transformer=StandardScaler()
    ).fit(X, y)
    min_max_target = TransformedTargetRegressor(Ridge(), transformer=MinMaxScaler()).fit(X, y)
    return {
        **{
            name: (model, "auto", model.predict)
            for name, model in [
                ("log_target", log_target),
                ("log1p_target", log1p_target),
                ("scaled_target", scaled_target),
                ("min_max_target", min_max_target),
            ]
        },
        **{
            name: (model, "probability", lambda r, model=model: model.predict_proba(r)[:, 1])
            for name, model in [
                ("calibrated_boosting", boosting),
                ("calibrated_linear_svc", svc),
                ("calibrated_forest_probability", forest),
                ("calibrated_prefit", frozen),
                ("isotonic_boosting", isotonic_boosting),
                ("isotonic_linear_svc", isotonic_svc),
            ]
        },
        "voting": (voting, "auto", voting.predict),
        "stacking": (stacking, "auto", stacking.predict),
        "stacking_after_scaler": (scaled, "auto", scaled.predict),
        "soft_voting_probability": (soft, "probability", lambda r: soft.predict_proba(r)[:, 1]),
        "soft_voting_three_classes": (three, "probability", three.predict_proba),
    }


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_auto_gives_the_enumerated_values_of_the_interventional_game(data, models, name):
    X, _ = data
    model, output, predict = models[name]
    assert_auto_takes_the_enumerated_values(model, output, predict, X[:3], X[100:116], "ensemble", rtol=1e-8)


def test_weights_are_the_models_own(data):
    X, y = data
    voting = VotingRegressor(_regressors(), weights=[2.0, 7.0, 1.0, 0.5]).fit(X, y)
    np.testing.assert_allclose(extract_ensemble(voting, "predict").weights, np.array([2.0, 1.0, 0.5]) / 3.5)
    stacking = StackingRegressor(_regressors()[:3]).fit(X, y)
    read = extract_ensemble(stacking, "predict")
    stacked = np.column_stack([member.predict(X[:5]) for member in read.members])
    np.testing.assert_allclose(stacked @ read.weights + read.intercept, stacking.predict(X[:5]), rtol=1e-12)


def test_pairs_and_feature_groups_are_the_enumerated_ones(data):
    X, y = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = VotingRegressor([("tree", DecisionTreeRegressor(max_depth=4)), ("ols", LinearRegression())]).fit(frame, y)

    def predict(rows):
        return model.predict(pd.DataFrame(rows, columns=list("abcde")))

    assert_groups_and_faith_pairs_are_enumerated(model, "auto", X, predict, slice(40, 52), "ensemble")


@pytest.mark.parametrize(
    ("make", "output", "match"),
    [
        (
            lambda: VotingRegressor(
                [("gp", GaussianProcessRegressor(RBF() + Matern(), optimizer=None)), ("ols", Ridge())]
            ),
            "auto",
            "member 0",
        ),
        (lambda: VotingRegressor([("knn", KNeighborsRegressor()), ("ols", Ridge())]), "auto", "member 0"),
        (lambda: StackingRegressor([("ols", Ridge())], passthrough=True), "auto", "passthrough"),
        (lambda: StackingRegressor([("ols", Ridge())], final_estimator=DecisionTreeRegressor()), "auto", "linear"),
        (lambda: VotingClassifier([("lr", LogisticRegression())], voting="hard"), "predict", "voting='soft'"),
        (lambda: VotingClassifier([("lr", LogisticRegression())], voting="soft"), "log_odds", "weighted mean"),
        (lambda: CalibratedClassifierCV(LogisticRegression()), "log_odds", "not read"),
        (lambda: CalibratedClassifierCV(KNeighborsClassifier()), "probability", "member 0"),
        (
            lambda: TransformedTargetRegressor(Ridge(), transformer=QuantileTransformer(n_quantiles=50)),
            "auto",
            "not read",
        ),
        (lambda: TransformedTargetRegressor(Ridge(), func=np.arcsinh, inverse_func=np.sinh), "auto", "not read"),
    ],
)
def test_ensembles_not_read_sample_and_the_explicit_path_refuses(data, make, output, match):
    X, y = data
    target = y > 0 if "Classifier" in type(make()).__name__ else y
    model = make().fit(X, target)
    sampled = PermutationShapExplainer(model, output=output, background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "ensemble"
    with pytest.raises(ValueError, match=match):
        PermutationShapExplainer(model, output=output, algorithm="ensemble", background_size=10).fit(X)


def test_multiclass_and_wide_calibrations_sample_and_the_explicit_path_refuses(data):
    X, y = data
    three = CalibratedClassifierCV(LogisticRegression(), cv=3).fit(X, np.digitize(y, [-1.0, 1.0]))
    wide = np.random.default_rng(0).normal(size=(200, 17))
    binary = CalibratedClassifierCV(LogisticRegression(), cv=3).fit(wide, wide[:, 0] > 0)
    for model, rows, match in [(three, X, "3 classes"), (binary, wide, "here 17")]:
        sampled = PermutationShapExplainer(model, output="probability", background_size=10, progress=False).fit(rows)
        assert sampled.algorithm_ != "ensemble"
        with pytest.raises(ValueError, match=match):
            PermutationShapExplainer(model, output="probability", algorithm="ensemble", background_size=10).fit(rows)


def test_a_stack_whose_final_estimator_has_a_one_element_intercept_is_read(data):
    X, y = data
    model = StackingRegressor(
        [("tree", DecisionTreeRegressor(max_depth=3)), ("ols", Ridge())], final_estimator=LinearSVR()
    )
    model.fit(X, y)
    assert_auto_takes_the_enumerated_values(model, "auto", model.predict, X[:2], X[100:112], "ensemble", rtol=1e-8)


def test_other_models_are_refused_by_the_explicit_path(data):
    X, y = data
    with pytest.raises(TypeError, match="not a voting ensemble"):
        PermutationShapExplainer(Ridge().fit(X, y), algorithm="ensemble").fit(X[:10])


def test_a_member_refitted_in_place_is_refused_at_explain(data):
    X, y = data
    forest = RandomForestRegressor(5, max_depth=3, random_state=0)
    model = VotingRegressor([("forest", forest), ("ols", LinearRegression())]).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(X[:10])
    model.estimators_[0].fit(X, -y)
    with pytest.raises(ValueError, match="refitted"):
        explainer.explain(X[:2])


@pytest.mark.parametrize(
    "transformer", [StandardScaler(with_mean=False), StandardScaler(with_std=False), RobustScaler(with_centering=False)]
)
def test_a_scaled_target_without_its_mean_or_scale_is_read(data, transformer):
    X, y = data
    model = TransformedTargetRegressor(DecisionTreeRegressor(max_depth=4), transformer=transformer).fit(X, 3 * y + 7)
    assert_auto_takes_the_enumerated_values(model, "auto", model.predict, X[:2], X[100:112], "ensemble")


def test_a_frozen_regressor_of_a_log_target_and_a_float32_isotonic_calibration_are_read(data):
    X, y = data
    fitted = GradientBoostingRegressor(n_estimators=10).fit(X, y)
    frozen = TransformedTargetRegressor(FrozenEstimator(fitted), func=np.log, inverse_func=np.exp).fit(X, np.exp(y / 3))
    assert_auto_takes_the_enumerated_values(frozen, "auto", frozen.predict, X[:2], X[100:112], "ensemble")
    calibrated = CalibratedClassifierCV(LogisticRegression(), method="isotonic", cv=3)
    calibrated.fit(X.astype(np.float32), y > 0)  # float32 margins: scikit-learn interpolates in float32

    def probability(rows):
        return calibrated.predict_proba(rows)[:, 1]

    assert_auto_takes_the_enumerated_values(
        calibrated, "probability", probability, X[:2], X[100:112], "ensemble", rtol=1e-6, atol=1e-6
    )


def test_a_link_over_a_member_without_a_sum_is_refused_with_the_reason(data):
    X, y = data
    nested = VotingRegressor([("ols", Ridge()), ("tree", DecisionTreeRegressor(max_depth=3))])
    model = TransformedTargetRegressor(nested, func=np.log, inverse_func=np.exp).fit(X, np.exp(y / 3))
    with pytest.raises(ValueError, match="ensemble path has no sum to take through the exp"):
        PermutationShapExplainer(model, algorithm="ensemble", background_size=10).fit(X)
    several = TransformedTargetRegressor(Ridge(), transformer=StandardScaler()).fit(X, np.column_stack([y, 2 * y]))
    with pytest.raises(ValueError, match="several targets"):
        PermutationShapExplainer(several, algorithm="ensemble", background_size=10).fit(X)
