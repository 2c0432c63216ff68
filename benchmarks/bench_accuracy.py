"""Benchmark: error per model evaluation, our estimators side by side with shap's and shapiq's.

What is measured
----------------
Relative RMSE (RMSE against the exact interventional Shapley values / RMS of the exact values) of
the explained rows' Shapley values at equal budgets of value-function evaluations per row, mean
over ``--seeds`` (3) seeds, and the model rows each method spent (counted, not assumed).

Wide problems, 50 background rows and 8 explained rows, exact values from interventional TreeSHAP
(``shap.TreeExplainer``) on xgboost regressors (100 trees, depth 4):

* ``synthetic8`` (d = 8): ``make_friedman1(1000, 8, noise=0.5, random_state=0)``;
* ``breast_cancer30`` (d = 30): ``load_breast_cancer``, regression on the 0/1 label;
* ``correlated60`` and ``correlated100`` (d = 60, 100): Gaussian features with correlation 0.5
  between neighbours, y = Σ_j w_j x_j + Σ_j x_j x_{j+1} / 2 + noise (generated, seed 0);

and kernel models whose exact values come from ``ProductKernelShapExplainer`` (interventional, on
the same 50 background rows): StandardScaler + SVR(C=100) on ``load_diabetes`` (``svr_diabetes10``,
d = 10) and on ``load_breast_cancer`` (``svr_breast_cancer30``, d = 30).

Model families at d <= 12, 30 background rows and 6 explained rows (drawn by a fixed permutation of
the data), exact values by brute force written here (:func:`brute_force_shapley`: all 2^d
coalitions of the interventional game, the closed-form Shapley weights, one matrix product):

* ``rf_diabetes10``: RandomForestRegressor(100 trees, min_samples_leaf=5) on ``load_diabetes``;
* ``mlp_friedman8``: StandardScaler + MLPRegressor(64, 64) on ``make_friedman1(1000, 8)``;
* ``knn_wine12``: StandardScaler + KNeighborsRegressor(10) on ``load_wine``'s first 12 features
  (regression on the class label);
* ``gp_friedman12``: GaussianProcessRegressor(constant x ARD RBF + white noise) on
  ``make_friedman1(300, 12)``;
* ``logistic_cancer12``: StandardScaler + LogisticRegression on ``load_breast_cancer``'s first 12
  features, the probability of class 1 explained (``output="probability"`` for ours).
* ``hgb_cancer12``: HistGradientBoostingClassifier(100 iterations) on the same 12 features, its probability;
* ``knn_diabetes10``: StandardScaler + KNeighborsRegressor(10) on ``load_diabetes``;

and, outside the main table (``--problems``), more models without structure to read:
``mlp_cancer10`` (StandardScaler + MLPClassifier(32, 32) on breast cancer's first 10 features, its
probability), ``mlp_diabetes10`` (StandardScaler + MLPRegressor(64, 64) on ``load_diabetes``) and
``mlp_classification12`` (StandardScaler + MLPClassifier(64, 32) on ``make_classification(1000, 12,
n_informative=6, n_redundant=2, random_state=0)``, its probability), ``mlp_tanh_classification12`` (the same
with tanh units, exact since the network path's bound is 2^27); and a survey of families kept
aside (doc/benchmarks.md, "Families beyond the table"): ``svc_cancer10`` (SVC probability),
``gnb_cancer12`` (GaussianNB), ``lda_cancer12``, ``qda_classification10``, ``ada_diabetes10``
(AdaBoost of trees), ``bagging_diabetes10``, ``gbr_friedman10``, ``krpoly_diabetes10`` (KernelRidge,
cubic kernel), ``polyridge_diabetes10`` (PolynomialFeatures(2) + Ridge), ``polyridge3_friedman10`` (scaler,
PolynomialFeatures(3), Ridge), ``gpc_cancer10`` (scaler and GaussianProcessClassifier, its probability),
``knnc_cancer10`` (k-NN classifier, distance weights), ``mlp_friedman2_10`` (an MLP on friedman2 and 6 noise
features) and
``stacking_diabetes10`` (ridge and forest stacked), ``calibrated_hgb_cancer12`` (a sigmoid calibration of
histogram gradient boosting, 3 folds), ``adac_cancer10`` (AdaBoost of depth-2 trees, its probability) and
``pca_logistic_cancer12`` (scaler, PCA(6), logistic regression, its probability); and ``xgbc_cancer20``, a
boosted classifier's probability at d = 20, past the 16 players "auto" enumerates through a link (truth: the
trees' sums on all 2^20 coalitions).

Budgets: 5d, 10d, 20d, 50d evaluations per row (``--budgets-per-feature``). An evaluation of a
coalition costs one model row per background row, for us and for the peers alike. Estimators:

* ours, through ``PermutationShapExplainer(model, algorithm=..., max_evals=B, background_size=None)``:
  "auto" (what a user gets: the column the targets are about; exact for the SVR and the Gaussian process,
  whose dual form it reads), "auto sampled" (the estimator "auto" takes where it reads no structure,
  with its background parts), "leverage" (Leverage SHAP, split:
  ``background_parts="auto"``), "leverage shared" (``background_parts=1``: every coalition against
  the whole background, as the peers do), "leverage_cv" (Leverage SHAP with the cross-fitted tree
  control variate), "kernel" (paired KernelSHAP; split), "antithetic" (split), and "sbq"
  (d <= 16; a shared design) or "orthogonal" (split), the best permutation samplers. Split or not,
  every estimator gets B · N model rows per explained row (N background rows);
* ``shap.PermutationExplainer(f, Independent(background, N))(rows, max_evals=B)``;
* ``shap.KernelExplainer(f, background).shap_values(rows, nsamples=B)``;
* shapiq, whatever the installed version offers, each ``.approximate(B, game)`` on the same
  interventional game (one shared background), one row at a time:
  ``KernelSHAP(d, pairing_trick=True)`` (paired, Shapley-kernel sizes), the same with uniform sizes,
  ``SVARM(d)``, ``PermutationSamplingSV(d)``; from shapiq 1.5 ``RegressionMSR(d, "SV")`` (an
  xgboost proxy plus the MSR correction) and ``ProxySHAP(d, max_order=1, index="SV",
  adjustment="kernel")`` (the proxy plus a KernelSHAP correction: ProxySHAP's default adjustment,
  "msr", *is* RegressionMSR); from shapiq 1.6 ``OddSHAP(d)`` (LightGBM surrogate when installed).
  A peer that refuses a budget (OddSHAP below ``min(10, 2^d)`` evaluations) is listed under the
  cell's ``"skipped"`` with its reason.

Printed per cell and stored in the JSON: ``auto_over_best_peer`` (issue 34's target: <= 0.5), ``auto_path``
(the algorithm "auto" took: "product_kernel" or an estimator), ``auto_sampled_over_best_peer``,
``best_peer``, ``auto_seconds_over_shared_leverage``; per method ``rel_rmse``, ``sd``, ``seconds``
and ``model_rows_per_row`` (model rows it spent per explained row, mean over seeds). OpenMP and
BLAS pools run one thread (``threadpoolctl``): shapiq's xgboost proxies fitted on 2 shared cores
took 0.4-20 s a call with a thread pool, 0.03-0.08 s without. A plot of error against budget for each problem:
``benchmarks/results/bench_accuracy.png`` (``benchmarks/plot_results.py``; ``--no-plot`` skips it).

Rerun
-----
With the registry's shapiq (1.4.1; shap's and shapiq 1.4's peers; Python 3.10-3.11, as CI)::

    python benchmarks/bench_accuracy.py            # about 40 minutes on 2 shared cores
    python benchmarks/bench_accuracy.py --quick    # synthetic8, breast_cancer30, rf_diabetes10,
                                                   # logistic_cancer12; 2 seeds; about 4 minutes

With shapiq 1.6's peers (RegressionMSR, ProxySHAP, OddSHAP; Python 3.12, built by
``benchmarks/peer_env.sh SHAPIQ_SOURCE_DIR``)::

    /work/venv312/bin/python benchmarks/bench_accuracy.py --no-plot --output bench_accuracy_peers16.json
    /work/venv312/bin/python benchmarks/bench_accuracy.py --quick --no-plot --output bench_accuracy_peers16.json

Then (not with ``--quick``) the check "shap's error at its default 500 evaluations with a third of
them": ``shap.PermutationExplainer`` at 500 against ours (``algorithm="auto"``) at 166 evaluations per
row, on ``synthetic8``, ``diabetes10`` (``load_diabetes``, d = 10) and ``synthetic16``
(``make_friedman1(1000, 16, noise=0.5)``).

Results: ``benchmarks/results/bench_accuracy.json`` (``bench_accuracy_quick.json`` with --quick;
``bench_accuracy_peers16.json``: shapiq 1.6's peers).
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import json
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shap
import sklearn
import xgboost
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_wine,
    make_classification,
    make_friedman1,
    make_friedman2,
)
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.ensemble import (
    AdaBoostClassifier,
    AdaBoostRegressor,
    BaggingRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    IsolationForest,
    RandomForestRegressor,
    StackingRegressor,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, RationalQuadratic, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from sklearn.svm import SVC, SVR
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from threadpoolctl import threadpool_limits

from sklearn_shapq import PermutationShapExplainer, ProductKernelShapExplainer
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.explainers import _exact_paths as exact_paths
from sklearn_shapq.explainers._auto_algorithm import resolve_algorithm
from sklearn_shapq.games import InterventionalGame, make_model_function

try:
    import shapiq.approximator as shapiq_approximators

    SHAPIQ_VERSION: str | None = importlib.metadata.version("shapiq")
except ImportError:  # the benchmark runs shap's peers and ours without it
    shapiq_approximators, SHAPIQ_VERSION = None, None

RESULTS = Path(__file__).parent / "results"
N_BACKGROUND, N_ROWS = 50, 8
"""Background and explained rows of the wide problems (TreeSHAP and product-kernel truths)."""
SMALL_BACKGROUND, SMALL_ROWS = 30, 6
"""Background and explained rows of the model families with brute-force truths (d <= 12)."""


# ---------------------------------------------------------------------------------------------
# exact values by brute force (the model families at d <= 12)
# ---------------------------------------------------------------------------------------------


def coalition_masks(d: int) -> np.ndarray:
    """All 2^d coalitions as a boolean (2^d, d) matrix; row k holds the bits of k (row 0: ∅, last: N)."""
    return ((np.arange(2**d)[:, None] >> np.arange(d)) & 1).astype(bool)


def shapley_matrix(masks: np.ndarray) -> np.ndarray:
    """Coefficients C (2^d, d) with φ_i = Σ_S C[S, i] v(S): +w(|S| - 1) where i ∈ S, -w(|S|) where not.

    w(s) = s! (d - s - 1)! / d! = 1 / (d · binom(d - 1, s)), the weight of a marginal contribution
    v(S ∪ {i}) - v(S) with |S| = s.
    """
    d = masks.shape[1]
    weights = 1.0 / (d * np.array([math.comb(d - 1, s) for s in range(d)], dtype=float))
    sizes = masks.sum(axis=1)
    return np.where(masks, weights[np.maximum(sizes - 1, 0)][:, None], -weights[np.minimum(sizes, d - 1)][:, None])


def brute_force_shapley(
    predict: Callable[[np.ndarray], np.ndarray], background: np.ndarray, rows: np.ndarray, block: int = 1 << 17
) -> np.ndarray:
    """Exact interventional Shapley values (n, d) of ``predict`` (rows -> (rows,)) on ``background``.

    v_x(S) = mean over background rows z of f(x_S, z_{N \\ S}), for all 2^d coalitions S of every
    explained row x at once: the (n · 2^d · N, d) hybrid rows, built and predicted for blocks of
    coalitions of at most ``block`` rows (a Gaussian process's kernel matrix of all of them, or all of
    them at d = 16, would not fit in memory), then φ = V C with V (n, 2^d) and C from
    :func:`shapley_matrix`. Checked: v(N) = f(x) and efficiency.
    """
    n, d = rows.shape
    masks = coalition_masks(d)
    values = np.empty((n, 2**d))
    step = max(1, block // (n * len(background)))
    for start in range(0, 2**d, step):
        part = masks[start : start + step]
        hybrid = np.where(part[None, :, None, :], rows[:, None, None, :], background[None, None, :, :])
        outputs = np.asarray(predict(hybrid.reshape(-1, d)), dtype=float)
        values[:, start : start + step] = outputs.reshape(n, len(part), len(background)).mean(axis=2)
    assert np.allclose(values[:, -1], predict(rows))  # v(N) = f(x)
    phi = values @ shapley_matrix(masks)
    assert np.allclose(phi.sum(axis=1), values[:, -1] - values[:, 0], atol=1e-9 * (1 + np.abs(values).max()))
    return phi


# ---------------------------------------------------------------------------------------------
# problems
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """A data set, the model fitted on it, what gives its exact values, and its rows."""

    data: Callable[[], tuple[np.ndarray, np.ndarray]]
    model: Callable[[], object] = lambda: xgboost.XGBRegressor(n_estimators=100, max_depth=4, n_jobs=1, random_state=0)
    truth: str = "tree"
    """"tree" (interventional TreeSHAP), "kernel" (ProductKernelShapExplainer), "brute" (all 2^d coalitions)
    or "linked" (a tree ensemble through its link: the trees' sums on all 2^d coalitions, past "auto"'s 16)."""
    output: str = "predict"
    """What is explained: "predict", "probability" (of class 1) or "margin" (``decision_function``)."""
    n_background: int = N_BACKGROUND
    n_rows: int = N_ROWS
    shuffle: bool = False
    """Draw the background and explained rows by a fixed permutation (data sorted by class)."""


@dataclass(frozen=True)
class Fitted:
    """A problem's fitted model, the function explained, its background, explained rows and exact values."""

    model: object
    output: str
    predict: Callable[[np.ndarray], np.ndarray]
    background: np.ndarray
    rows: np.ndarray
    truth: np.ndarray


def problems() -> dict[str, Problem]:
    """Each problem, by name."""

    def breast_cancer(d: int | None = None) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
        def load() -> tuple[np.ndarray, np.ndarray]:
            X, y = load_breast_cancer(return_X_y=True)
            return X[:, :d], y.astype(float)

        return load

    def correlated(d: int) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
        def generate() -> tuple[np.ndarray, np.ndarray]:
            rng = np.random.default_rng(0)
            covariance = 0.5 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
            X = rng.multivariate_normal(np.zeros(d), covariance, size=1500)
            y = X @ rng.normal(size=d) + (X[:, :-1] * X[:, 1:]).sum(axis=1) / 2 + 0.1 * rng.normal(size=1500)
            return X, y

        return generate

    def diabetes() -> tuple[np.ndarray, np.ndarray]:
        return load_diabetes(return_X_y=True)

    def wine12() -> tuple[np.ndarray, np.ndarray]:
        X, y = load_wine(return_X_y=True)
        return X[:, :12], y.astype(float)

    def classification12() -> tuple[np.ndarray, np.ndarray]:
        X, y = make_classification(1000, 12, n_informative=6, n_redundant=2, random_state=0)
        return X, y.astype(float)

    def friedman(d: int, n: int = 1000) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
        return lambda: make_friedman1(n, d, noise=0.5, random_state=0)

    def classification10() -> tuple[np.ndarray, np.ndarray]:
        X, y = make_classification(1000, 10, n_informative=5, random_state=1)
        return X, y.astype(float)

    def friedman2_padded10() -> tuple[np.ndarray, np.ndarray]:
        X, y = make_friedman2(1000, noise=0.1, random_state=0)
        return np.hstack([X, np.random.default_rng(0).normal(size=(1000, 6))]), y

    def svr() -> object:
        return make_pipeline(StandardScaler(), SVR(C=100.0))

    def gp() -> object:
        kernel = ConstantKernel() * RBF(length_scale=np.ones(12)) + WhiteKernel()
        return GaussianProcessRegressor(kernel, normalize_y=True, random_state=0)

    small = {"truth": "brute", "n_background": SMALL_BACKGROUND, "n_rows": SMALL_ROWS, "shuffle": True}
    return {
        "synthetic8": Problem(friedman(8)),
        "breast_cancer30": Problem(breast_cancer()),
        "correlated60": Problem(correlated(60)),
        "correlated100": Problem(correlated(100)),
        "svr_diabetes10": Problem(diabetes, svr, truth="kernel"),
        "svr_breast_cancer30": Problem(breast_cancer(), svr, truth="kernel"),
        "rf_diabetes10": Problem(
            diabetes,
            lambda: RandomForestRegressor(n_estimators=100, min_samples_leaf=5, n_jobs=1, random_state=0),
            **small,
        ),
        "mlp_friedman8": Problem(
            friedman(8),
            lambda: make_pipeline(
                StandardScaler(), MLPRegressor(hidden_layer_sizes=(64, 64), max_iter=2000, random_state=0)
            ),
            **small,
        ),
        "knn_wine12": Problem(
            wine12, lambda: make_pipeline(StandardScaler(), KNeighborsRegressor(n_neighbors=10)), **small
        ),
        "gp_friedman12": Problem(friedman(12, 300), gp, **small),
        "logistic_cancer12": Problem(
            breast_cancer(12),
            lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
            output="probability",
            **small,
        ),
        "knn_diabetes10": Problem(
            diabetes, lambda: make_pipeline(StandardScaler(), KNeighborsRegressor(n_neighbors=10)), **small
        ),
        "mlp_cancer10": Problem(
            breast_cancer(10),
            lambda: make_pipeline(
                StandardScaler(), MLPClassifier(hidden_layer_sizes=(32, 32), max_iter=2000, random_state=0)
            ),
            output="probability",
            **small,
        ),
        "mlp_diabetes10": Problem(
            diabetes,
            lambda: make_pipeline(
                StandardScaler(), MLPRegressor(hidden_layer_sizes=(64, 64), max_iter=2000, random_state=0)
            ),
            **small,
        ),
        "mlp_classification12": Problem(
            classification12,
            lambda: make_pipeline(
                StandardScaler(), MLPClassifier(hidden_layer_sizes=(64, 32), max_iter=2000, random_state=0)
            ),
            output="probability",
            **small,
        ),
        "mlp_tanh_classification12": Problem(
            classification12,
            lambda: make_pipeline(
                StandardScaler(),
                MLPClassifier(hidden_layer_sizes=(64, 32), activation="tanh", max_iter=2000, random_state=0),
            ),
            output="probability",
            **small,
        ),
        "hgb_cancer12": Problem(
            breast_cancer(12),
            lambda: HistGradientBoostingClassifier(max_iter=100, random_state=0),
            output="probability",
            **small,
        ),
        # the survey of families kept aside (doc/benchmarks.md, "Families beyond the table")
        "svc_cancer10": Problem(
            breast_cancer(10),
            lambda: make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)),
            output="probability",
            **small,
        ),
        "gnb_cancer12": Problem(breast_cancer(12), GaussianNB, output="probability", **small),
        "lda_cancer12": Problem(breast_cancer(12), LinearDiscriminantAnalysis, output="probability", **small),
        "qda_classification10": Problem(
            classification10, lambda: QuadraticDiscriminantAnalysis(reg_param=0.1), output="probability", **small
        ),
        "ada_diabetes10": Problem(
            diabetes,
            lambda: AdaBoostRegressor(DecisionTreeRegressor(max_depth=3), n_estimators=50, random_state=0),
            **small,
        ),
        "bagging_diabetes10": Problem(
            diabetes, lambda: BaggingRegressor(DecisionTreeRegressor(), n_estimators=50, random_state=0), **small
        ),
        "gbr_friedman10": Problem(friedman(10), lambda: GradientBoostingRegressor(random_state=0), **small),
        "krpoly_diabetes10": Problem(
            diabetes, lambda: make_pipeline(StandardScaler(), KernelRidge(kernel="poly", degree=3)), **small
        ),
        "polyridge_diabetes10": Problem(
            diabetes, lambda: make_pipeline(PolynomialFeatures(2), StandardScaler(), Ridge()), **small
        ),
        "polyridge3_friedman10": Problem(
            friedman(10), lambda: make_pipeline(StandardScaler(), PolynomialFeatures(3), Ridge()), **small
        ),
        "gpc_cancer10": Problem(
            breast_cancer(10),
            lambda: make_pipeline(StandardScaler(), GaussianProcessClassifier(random_state=0)),
            output="probability",
            **small,
        ),
        "knnc_cancer10": Problem(
            breast_cancer(10),
            lambda: make_pipeline(StandardScaler(), KNeighborsClassifier(15, weights="distance")),
            output="probability",
            **small,
        ),
        "mlp_friedman2_10": Problem(
            friedman2_padded10,
            lambda: make_pipeline(
                StandardScaler(), MLPRegressor(hidden_layer_sizes=(32,), max_iter=2000, random_state=0)
            ),
            **small,
        ),
        "stacking_diabetes10": Problem(
            diabetes,
            lambda: StackingRegressor([("ridge", Ridge()), ("rf", RandomForestRegressor(50, random_state=0))]),
            **small,
        ),
        "calibrated_hgb_cancer12": Problem(
            breast_cancer(12),
            lambda: CalibratedClassifierCV(HistGradientBoostingClassifier(max_iter=50, random_state=0), cv=3),
            output="probability",
            **small,
        ),
        "adac_cancer10": Problem(
            breast_cancer(10),
            lambda: AdaBoostClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=100, random_state=0),
            output="probability",
            **small,
        ),
        "pca_logistic_cancer12": Problem(
            breast_cancer(12),
            lambda: make_pipeline(StandardScaler(), PCA(6), LogisticRegression(max_iter=1000)),
            output="probability",
            **small,
        ),
        # an outlier detector's score (its decision_function), exp of a sum over its trees
        "iforest_cancer12": Problem(
            breast_cancer(12), lambda: IsolationForest(n_estimators=100, random_state=0), output="margin", **small
        ),
        # a boosted classifier's probability past the 16 players "auto" enumerates (it samples)
        "xgbc_cancer20": Problem(
            breast_cancer(20),
            lambda: xgboost.XGBClassifier(n_estimators=100, max_depth=4, n_jobs=1, random_state=0),
            output="probability",
            **{**small, "truth": "linked"},
        ),
        # Gaussian processes whose kernels are functions of a distance, not products over the features
        "gp_matern_diabetes10": Problem(
            diabetes,
            lambda: make_pipeline(
                StandardScaler(),
                GaussianProcessRegressor(
                    ConstantKernel() * Matern(length_scale=np.ones(10), nu=1.5) + WhiteKernel(),
                    normalize_y=True,
                    random_state=0,
                ),
            ),
            **small,
        ),
        "gp_rq_friedman10": Problem(
            friedman(10, 300),
            lambda: GaussianProcessRegressor(
                ConstantKernel() * RationalQuadratic() + WhiteKernel(), normalize_y=True, random_state=0
            ),
            **small,
        ),
        # the check "shap's error at its default 500 evaluations with a third of them"
        "diabetes10": Problem(diabetes),
        "synthetic16": Problem(friedman(16)),
        # the small budgets of bench_leverage_variants.py
        "synthetic6": Problem(friedman(6)),
        "synthetic12": Problem(friedman(12)),
        "synthetic20": Problem(friedman(20)),
    }


TABLE_PROBLEMS = [
    "synthetic8",
    "svr_diabetes10",
    "breast_cancer30",
    "svr_breast_cancer30",
    "correlated60",
    "correlated100",
    "rf_diabetes10",
    "mlp_friedman8",
    "knn_wine12",
    "gp_friedman12",
    "logistic_cancer12",
    "hgb_cancer12",
    "knn_diabetes10",
]
"""The problems of the main table (every estimator at 5d-50d evaluations)."""

QUICK_PROBLEMS = ["synthetic8", "breast_cancer30", "rf_diabetes10", "logistic_cancer12"]

THIRD_PROBLEMS = ["synthetic8", "diabetes10", "synthetic16"]
"""The problems of the check "shap's error at its default 500 evaluations with a third of them" (d = 8 to 16)."""

SHAP_DEFAULT_EVALS = 500

EXACT = 1e-10
"""Relative errors below this are rounding: the estimator was exact at that budget."""


@functools.lru_cache(maxsize=1)
def fit_problem(name: str) -> Fitted:
    """Fit the problem's model; return it with the function explained, its rows and their exact values (kept)."""
    problem = problems()[name]
    X, y = problem.data()
    if problem.shuffle:
        order = np.random.default_rng(0).permutation(len(X))
        X, y = X[order], y[order]
    background = X[: problem.n_background]
    rows = X[problem.n_background : problem.n_background + problem.n_rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the GP's irrelevant features: length scales at the bound
        model = problem.model().fit(X, y)
    if problem.output == "probability":

        def predict(data: np.ndarray) -> np.ndarray:
            return model.predict_proba(data)[:, 1]

    elif problem.output == "margin":
        predict = model.decision_function
    else:
        predict = model.predict
    if problem.truth == "kernel":
        exact = ProductKernelShapExplainer(model, value_function="interventional", background_size=None, progress=False)
        truth = exact.fit(background).explain(rows).values
    elif problem.truth == "linked":
        truth = linked_tree_truth(model, problem.output, background, rows)
    elif problem.truth == "tree":
        truth = shap.TreeExplainer(model, background, feature_perturbation="interventional").shap_values(rows)
    else:
        truth = brute_force_shapley(predict, background, rows)
    return Fitted(model, problem.output, predict, background, rows, np.asarray(truth))


def linked_tree_truth(model: object, output: str, background: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Exact values of a tree ensemble through its link: every coalition's tree sums (the "tree" path's
    enumeration, tested against brute force in ``tests/test_permutation_tree_path.py``), here past the 16
    players "auto" enumerates; 2^d coalitions per pair of rows (d = 20: seconds)."""
    limit = exact_paths.LINKED_MAX_PLAYERS
    exact_paths.LINKED_MAX_PLAYERS = rows.shape[1]
    try:
        explainer = PermutationShapExplainer(model, output=output, background_size=None, progress=False)
        explained = explainer.fit(background).explain(rows)
    finally:
        exact_paths.LINKED_MAX_PLAYERS = limit
    if explainer.algorithm_ != "tree":
        raise RuntimeError(f"the linked truth took {explainer.algorithm_!r}, not the tree path")
    return explained.values


def problem_model(name: str) -> tuple[object, np.ndarray, np.ndarray, np.ndarray]:
    """Fit the problem's model; return it, the background, the explained rows and their exact values."""
    fitted = fit_problem(name)
    return fitted.model, fitted.background, fitted.rows, fitted.truth


# ---------------------------------------------------------------------------------------------
# methods: run(fitted, budget, seed) -> (values (n, d), model rows spent)
# ---------------------------------------------------------------------------------------------


class SkippedError(Exception):
    """A peer refused the cell (a budget below its minimum); the reason goes to the JSON."""


def ours(sampler: str, background_parts: int | str = "auto") -> Callable:
    def run(fitted: Fitted, budget: int, seed: int) -> tuple[np.ndarray, int]:
        algorithm, parts = sampler, background_parts
        if sampler == "auto sampled":  # what "auto" samples where it has no exact path
            algorithm, _, parts = resolve_algorithm(
                "auto", budget, fitted.rows.shape[1], "auto", None, len(fitted.background)
            )
        explainer = PermutationShapExplainer(
            fitted.model,
            algorithm=algorithm,
            max_evals=budget,
            background_size=None,
            background_parts=parts,
            output=fitted.output,
            random_state=seed,
            progress=False,
        )
        explanation = explainer.fit(fitted.background).explain(fitted.rows)
        return explanation.values, int(explanation.diagnostics["n_model_rows"])

    return run


def counted(predict: Callable[[np.ndarray], np.ndarray]) -> tuple[Callable[[np.ndarray], np.ndarray], list[int]]:
    """``predict`` counting the rows it is given (in ``count[0]``)."""
    count = [0]

    def counting(data: np.ndarray) -> np.ndarray:
        count[0] += len(data)
        return predict(data)

    return counting, count


def shap_permutation(fitted: Fitted, budget: int, seed: int) -> tuple[np.ndarray, int]:
    predict, count = counted(fitted.predict)
    masker = shap.maskers.Independent(fitted.background, max_samples=len(fitted.background))
    explainer = shap.PermutationExplainer(predict, masker, seed=seed)
    values = explainer(fitted.rows, max_evals=max(budget, 2 * fitted.rows.shape[1] + 1), silent=True).values
    return values, count[0]


def shap_kernel(fitted: Fitted, budget: int, seed: int) -> tuple[np.ndarray, int]:
    np.random.seed(seed)  # noqa: NPY002  (shap's KernelExplainer draws from numpy's global state: the peer only)
    predict, count = counted(fitted.predict)
    explainer = shap.KernelExplainer(predict, fitted.background)
    return np.asarray(explainer.shap_values(fitted.rows, nsamples=budget, silent=True)), count[0]


def shapiq_approximator(make: Callable[[int, int], object]) -> Callable:
    """Run a shapiq approximator, ``make(d, seed)``, on each row's interventional game in turn."""

    def run(fitted: Fitted, budget: int, seed: int) -> tuple[np.ndarray, int]:
        rows = fitted.rows
        d = rows.shape[1]
        out = np.empty(rows.shape)
        model_fn = make_model_function(fitted.model, fitted.output, CpuBackend())
        model_rows = 0
        for r in range(rows.shape[0]):  # shapiq explains one game at a time
            game = InterventionalGame(model_fn, fitted.background, rows[r : r + 1])

            def value(masks: np.ndarray, game: InterventionalGame = game) -> np.ndarray:
                masks = np.atleast_2d(masks)  # SVARM and PermutationSamplingSV may ask for one coalition
                return game(masks.astype(bool), np.zeros(len(masks), np.intp))[:, 0]

            try:
                result = make(d, seed).approximate(budget, value)
            except ValueError as error:  # OddSHAP's minimum budget
                raise SkippedError(str(error).split(". Please")[0]) from error
            out[r] = [result[(i,)] for i in range(d)]
            model_rows += game.n_model_rows
        return out, model_rows

    return run


def shapiq_peers() -> dict[str, Callable[[int, int], object]]:
    """shapiq's Shapley-value approximators that the installed version has, as ``make(d, seed)``."""
    if shapiq_approximators is None:
        return {}
    offered = vars(shapiq_approximators)
    peers: dict[str, Callable[[int, int], object]] = {
        "shapiq KernelSHAP paired": lambda d, seed: offered["KernelSHAP"](d, pairing_trick=True, random_state=seed),
        "shapiq KernelSHAP paired uniform": lambda d, seed: offered["KernelSHAP"](
            d, pairing_trick=True, sampling_weights=np.ones(d + 1), random_state=seed
        ),
        "shapiq SVARM": lambda d, seed: offered["SVARM"](d, random_state=seed),
        "shapiq PermutationSamplingSV": lambda d, seed: offered["PermutationSamplingSV"](d, random_state=seed),
    }
    if "RegressionMSR" in offered:  # shapiq >= 1.5
        peers["shapiq RegressionMSR"] = lambda d, seed: offered["RegressionMSR"](d, "SV", random_state=seed)
    if "ProxySHAP" in offered:
        peers["shapiq ProxySHAP kernel"] = lambda d, seed: offered["ProxySHAP"](
            d, max_order=1, index="SV", adjustment="kernel", random_state=seed
        )
    if "OddSHAP" in offered:  # shapiq >= 1.6
        peers["shapiq OddSHAP"] = lambda d, seed: offered["OddSHAP"](d, random_state=seed)
    return peers


def methods(d: int) -> dict[str, Callable]:
    return {
        "ours auto": ours("auto"),
        "ours auto sampled": ours("auto sampled"),
        "ours leverage": ours("leverage"),
        "ours leverage shared": ours("leverage", background_parts=1),
        "ours leverage_cv": ours("leverage_cv"),
        "ours kernel": ours("kernel"),
        "ours antithetic": ours("antithetic"),
        f"ours {'sbq' if d <= 16 else 'orthogonal'}": ours("sbq" if d <= 16 else "orthogonal"),
        "shap Permutation": shap_permutation,
        "shap Kernel": shap_kernel,
        **{name: shapiq_approximator(make) for name, make in shapiq_peers().items()},
    }


# ---------------------------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------------------------


def problem_error(name: str, seeds: int) -> tuple[Callable, int]:
    """Fit the problem's model; return ``error_of(run, budget)`` and d.

    ``error_of`` gives the relative RMSE (mean and sd over seeds), the seconds over all seeds and the
    model rows per explained row (mean over seeds); it raises :class:`SkippedError` for a refused cell.
    """
    fitted = fit_problem(name)
    scale = float(np.sqrt(np.mean(fitted.truth**2)))

    def error_of(run: Callable, budget: int) -> dict:
        errors, model_rows, start = [], [], time.perf_counter()
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                values, rows_spent = run(fitted, budget, seed)
            errors.append(float(np.sqrt(np.mean((values - fitted.truth) ** 2)) / scale))
            model_rows.append(rows_spent / fitted.rows.shape[0])
        return {
            "rel_rmse": float(np.mean(errors)),
            "sd": float(np.std(errors)),
            "seconds": time.perf_counter() - start,
            "model_rows_per_row": float(np.mean(model_rows)),
        }

    return error_of, fitted.rows.shape[1]


def error_ratio(ours: float, peer: float) -> float:
    """Our error over the peer's; 1 when both are exact (rounding only), 0 when only ours is."""
    if ours < EXACT:
        return 1.0 if peer < EXACT else 0.0
    return ours / peer


def table_cell(name: str, d: int, budget: int, error_of: Callable) -> dict:
    """Every method at one budget on one problem, with the ratios to the best peer."""
    line: dict = {"problem": name, "d": d, "budget": budget, "skipped": {}}
    error_of(ours("auto"), budget)  # untimed: the model's and the kernels' first calls would land on "ours auto"
    for method, run in methods(d).items():
        try:
            line[method] = error_of(run, budget)
        except SkippedError as reason:
            line["skipped"][method] = str(reason)
    peers = {k: v["rel_rmse"] for k, v in line.items() if isinstance(v, dict) and "rel_rmse" in v}
    peers = {k: v for k, v in peers.items() if not k.startswith("ours")}
    line["best_peer"] = min(peers, key=peers.get)
    line["auto_over_best_peer"] = error_ratio(line["ours auto"]["rel_rmse"], peers[line["best_peer"]])
    line["auto_path"] = auto_path(name, budget)
    line["auto_sampled_over_best_peer"] = error_ratio(line["ours auto sampled"]["rel_rmse"], peers[line["best_peer"]])
    line["leverage_over_best_peer"] = error_ratio(line["ours leverage"]["rel_rmse"], peers[line["best_peer"]])
    line["auto_seconds_over_shared_leverage"] = line["ours auto"]["seconds"] / line["ours leverage shared"]["seconds"]
    ours_rows = line["ours auto"]["model_rows_per_row"]
    line["fewest_peer_rows_over_auto_rows"] = min(line[k]["model_rows_per_row"] for k in peers) / ours_rows
    return line


def auto_path(name: str, budget: int) -> str:
    """The algorithm "auto" takes on problem ``name`` at ``budget``: an exact path or an estimator."""
    fitted = fit_problem(name)
    explainer = PermutationShapExplainer(
        fitted.model, max_evals=budget, background_size=None, output=fitted.output, progress=False
    )
    return explainer.fit(fitted.background).algorithm_


def print_cell(line: dict) -> None:
    cells = "  ".join(f"{k} {v['rel_rmse']:.4f}" for k, v in line.items() if isinstance(v, dict) and "rel_rmse" in v)
    skipped = f"  skipped: {', '.join(line['skipped'])}" if line["skipped"] else ""
    print(
        f"{line['problem']:18s} B={line['budget']:5d}  {cells}{skipped}\n"
        f"{'':18s} auto ({line['auto_path']})/best peer {line['auto_over_best_peer']:.2f}, "
        f"sampled {line['auto_sampled_over_best_peer']:.2f} (best peer: {line['best_peer']})  "
        f"auto/shared leverage time {line['auto_seconds_over_shared_leverage']:.2f}  "
        f"model rows per row: auto {line['ours auto']['model_rows_per_row']:.0f}, "
        f"fewest of a peer / auto {line['fewest_peer_rows_over_auto_rows']:.2f}",
        flush=True,
    )


def third_of_shap_budget(name: str, seeds: int) -> dict:
    """shap.PermutationExplainer at its default 500 evaluations against ours ("auto") at a third of them."""
    error_of, d = problem_error(name, seeds)
    budget = SHAP_DEFAULT_EVALS // 3
    line = {
        "problem": name,
        "d": d,
        f"shap Permutation {SHAP_DEFAULT_EVALS}": error_of(shap_permutation, SHAP_DEFAULT_EVALS),
        f"ours auto {budget}": error_of(ours("auto"), budget),
    }
    line["ratio"] = line[f"ours auto {budget}"]["rel_rmse"] / line[f"shap Permutation {SHAP_DEFAULT_EVALS}"]["rel_rmse"]
    line["target_met"] = line["ratio"] <= 1.0
    shap_error, ours_error = line[f"shap Permutation {SHAP_DEFAULT_EVALS}"], line[f"ours auto {budget}"]
    print(
        f"{name:16s} shap Permutation at {SHAP_DEFAULT_EVALS}: {shap_error['rel_rmse']:.4f}  ours auto at "
        f"{budget}: {ours_error['rel_rmse']:.4f}  ratio {line['ratio']:.2f} (target <= 1)",
        flush=True,
    )
    return line


def versions() -> dict:
    import platform

    import sklearn_shapq

    return {
        "python": platform.python_version(),
        "shapiq": SHAPIQ_VERSION,
        "shap": shap.__version__,
        "xgboost": xgboost.__version__,
        "scikit-learn": sklearn.__version__,
        "numpy": np.__version__,
        "sklearn_shapq": sklearn_shapq.__version__,
        "threads": "OpenMP and BLAS pools limited to 1 (threadpoolctl)",
    }


def resumed(path: Path, settings: dict) -> list[dict]:
    """The cells (lines) an earlier run of the same settings and versions wrote to ``path``."""
    if not path.exists():
        return []
    earlier = json.loads(path.read_text())
    same = ("budgets_per_feature", "seeds", "versions")
    if any(earlier["settings"].get(key) != settings[key] for key in same):
        print(f"{path.name}: other settings or versions, not resumed", flush=True)
        return []
    lines = [line for line in earlier["results"] if line["problem"] in settings["problems"]]
    print(f"resumed {len(lines)} cells of {sorted({line['problem'] for line in lines})} from {path.name}", flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_PROBLEMS}, 2 seeds")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budgets-per-feature", nargs="*", type=int, default=[5, 10, 20, 50])
    parser.add_argument("--problems", nargs="*", default=None, help=f"a subset of {TABLE_PROBLEMS}")
    parser.add_argument("--output", default=None, help="JSON name under benchmarks/results (default by mode)")
    parser.add_argument("--no-plot", action="store_true", help="write no PNG beside the JSON")
    parser.add_argument("--no-third", action="store_true", help="skip the check at a third of shap's budget")
    parser.add_argument("--resume", action="store_true", help="keep the cells an unfinished run of the output has")
    args = parser.parse_args()
    names = args.problems or (QUICK_PROBLEMS if args.quick else TABLE_PROBLEMS)
    seeds = 2 if args.quick else args.seeds
    print(f"versions: {versions()}", flush=True)
    if SHAPIQ_VERSION is None:
        print("shapiq is not installed: shapiq's peers are left out", flush=True)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / (args.output or ("bench_accuracy_quick.json" if args.quick else "bench_accuracy.json"))
    settings = {**vars(args), "problems": names, "seeds": seeds, "versions": versions()}
    rows_out = resumed(path, settings) if args.resume else []
    third: list[dict] = []
    started = time.perf_counter()

    def write(complete: bool) -> None:  # after every cell: a run cut short keeps what it measured
        settings.update(complete=complete, seconds=time.perf_counter() - started)
        results = {"settings": settings, "results": rows_out, "third_of_shap_budget": third}
        path.write_text(json.dumps(results, indent=2))

    with threadpool_limits(limits=1):
        for name in names:
            done = {line["budget"] for line in rows_out if line["problem"] == name}
            if len(done) == len(args.budgets_per_feature):
                continue
            problem_start = time.perf_counter()
            error_of, d = problem_error(name, seeds)
            for per_feature in args.budgets_per_feature:
                if per_feature * d in done:
                    continue
                cell_start = time.perf_counter()
                line = table_cell(name, d, per_feature * d, error_of)
                line["cell_seconds"] = time.perf_counter() - cell_start
                rows_out.append(line)
                print_cell(line)
                write(complete=False)
            print(f"{name}: {time.perf_counter() - problem_start:.0f} s", flush=True)
        if not (args.quick or args.no_third):
            third = [third_of_shap_budget(name, seeds) for name in THIRD_PROBLEMS]
    write(complete=True)
    print(f"wrote {path} ({settings['seconds']:.0f} s this run)")
    if not args.no_plot:
        import plot_results

        plot_results.accuracy(rows_out).savefig(path.with_suffix(".png"), dpi=110)
        print(f"wrote {path.with_suffix('.png')}")


if __name__ == "__main__":
    main()
