"""ProductKernelShapExplainer.explain_interactions: exact pairs against enumeration of all 2^d coalitions."""

from math import comb, factorial

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC, SVR

from sklearn_shapq import ProductKernelShapExplainer

from brute_force import faith_interactions

matplotlib.use("Agg")

D = 6
INDICES = ("shap", "k-SII", "SII", "STII", "FSII")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, D))
    y = np.sin(X[:, 0]) * X[:, 1] + X[:, 2] * X[:, 3] - 0.5 * X[:, 4] + 0.1 * rng.normal(size=40)
    return X, y


# --------------------------------------------------------------------------------------------
# brute force, from the definitions
# --------------------------------------------------------------------------------------------


def coalition_values(value, d):
    """v of every coalition code 0 … 2^d − 1 (bit j: player j present): (2^d, k)."""
    masks = ((np.arange(2**d)[:, None] >> np.arange(d)) & 1).astype(bool)
    out = np.asarray(value(masks), dtype=float)
    return out.reshape(2**d, -1)


def brute_force_matrix(table, index):
    """The (d, d, k) matrix of ``index`` from v of all coalitions, by the definitions of SII, STII, φ and FSII."""
    if index == "FSII":
        return faith_interactions(table)
    n_coalitions, k = table.shape
    d = n_coalitions.bit_length() - 1
    codes = np.arange(n_coalitions)
    bits = (codes[:, None] >> np.arange(d)) & 1
    sizes = bits.sum(axis=1)
    phi, sii, stii = np.zeros((d, k)), np.zeros((d, d, k)), np.zeros((d, d, k))
    for i in range(d):
        S = codes[bits[:, i] == 0]
        s = sizes[S]
        weight = np.array([factorial(q) * factorial(d - q - 1) / factorial(d) for q in s])
        phi[i] = weight @ (table[S | 1 << i] - table[S])
    for i in range(d):
        for j in range(i + 1, d):
            S = codes[(bits[:, i] == 0) & (bits[:, j] == 0)]
            s = sizes[S]
            delta = table[S | 1 << i | 1 << j] - table[S | 1 << i] - table[S | 1 << j] + table[S]
            w_sii = np.array([factorial(q) * factorial(d - q - 2) / factorial(d - 1) for q in s])
            w_stii = np.array([2.0 / d / comb(d - 1, q) for q in s])
            sii[i, j] = sii[j, i] = w_sii @ delta
            stii[i, j] = stii[j, i] = w_stii @ delta
    off = ~np.eye(d, dtype=bool)
    if index == "STII":
        out = stii.copy()
        out[np.arange(d), np.arange(d)] = table[1 << np.arange(d)] - table[0]
        return out
    out = sii / 2.0 if index == "shap" else sii.copy()
    if index == "shap":
        out[np.arange(d), np.arange(d)] = phi - (out * off[:, :, None]).sum(axis=1)
    elif index == "k-SII":
        out[np.arange(d), np.arange(d)] = phi - (sii * off[:, :, None]).sum(axis=1) / 2.0
    else:
        out[np.arange(d), np.arange(d)] = phi
    return out


def rbf_pkex(x, anchors, alpha, gammas, intercept):
    """The paper's game of an RBF expansion: v(S) = b + Σ_i α_i Π_{j∈S} exp(−γ_j (x_j − X_ij)²)."""

    def value(masks):
        log_factors = -gammas * (x - anchors) ** 2  # (n, d)
        return np.exp(masks.astype(float) @ log_factors.T) @ alpha + intercept

    return value


def masked_value(predict, x, references, columns=None):
    """v(S) = mean_l predict(x on S, reference l elsewhere); ``columns`` maps players to columns."""

    def value(masks):
        if columns is not None:
            masks = masks[:, columns]
        rows = np.where(masks[:, None, :], x, references[None])  # (C, L, d)
        out = np.asarray(predict(rows.reshape(-1, rows.shape[-1])), dtype=float)
        return out.reshape(masks.shape[0], references.shape[0], -1).mean(axis=1)

    return value


def models(X, y):
    return {
        "SVR": SVR(C=10.0, gamma=0.2).fit(X, y),
        "KernelRidge multi-output": KernelRidge(kernel="rbf", gamma=0.15, alpha=0.3).fit(X, np.c_[y, X[:, 0] - y]),
        "GPR ARD": GaussianProcessRegressor(
            ConstantKernel(2.0) * RBF(np.linspace(0.8, 3.0, D)), alpha=0.1, optimizer=None
        ).fit(X, y),
        "SVC binary": SVC(C=3.0, gamma=0.2).fit(X, y > 0),
    }


def output_of(model):
    return model.decision_function if isinstance(model, SVC) else model.predict


def pkex_value(model, x):
    if isinstance(model, SVR | SVC):
        return rbf_pkex(x, model.support_vectors_, model.dual_coef_[0], np.full(D, model._gamma), model.intercept_)
    if isinstance(model, KernelRidge):
        return rbf_pkex(x, model.X_fit_, model.dual_coef_, np.full(D, model.gamma), 0.0)
    kernel = model.kernel_  # c * RBF(ℓ); GPR without normalize_y
    gammas = 1.0 / (2.0 * kernel.k2.length_scale**2)
    return rbf_pkex(x, model.X_train_, kernel.k1.constant_value * model.alpha_, gammas, 0.0)


def game_value(model, value_function, x, X_fit):
    if value_function == "pkex":
        return pkex_value(model, x)
    references = X_fit.mean(axis=0, keepdims=True) if value_function == "baseline" else X_fit
    return masked_value(output_of(model), x, references)


# --------------------------------------------------------------------------------------------
# exactness
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value_function", ["pkex", "baseline", "interventional"])
def test_every_index_equals_brute_force_for_every_value_function(data, value_function):
    X, y = data
    X_fit = X[:5]  # the background of "interventional" (all kept), the mean row of "baseline"
    rows = X[30:32]
    for name, model in models(X, y).items():
        explainer = ProductKernelShapExplainer(
            model, value_function=value_function, background_size=None, progress=False
        ).fit(X_fit)
        for index in INDICES:
            values = np.asarray(explainer.explain_interactions(rows, index=index).values)
            values = values.reshape(rows.shape[0], D, D, -1)
            for r, x in enumerate(rows):
                table = coalition_values(game_value(model, value_function, x, X_fit), D)
                expected = brute_force_matrix(table, index)
                np.testing.assert_allclose(values[r], expected, rtol=0, atol=1e-10, err_msg=f"{name} {index}")


def test_eight_features_and_the_brute_force_algorithm(data):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 8))
    model = SVR(C=5.0, gamma=0.1).fit(X, X[:, 0] * X[:, 1] + np.cos(X[:, 2] + X[:, 3]))
    explainer = ProductKernelShapExplainer(model, value_function="interventional", background_size=None).fit(X[:3])
    oracle = ProductKernelShapExplainer(
        model, value_function="interventional", background_size=None, algorithm="brute_force"
    ).fit(X[:3])
    table = coalition_values(masked_value(model.predict, X[10], X[:3]), 8)
    for index in INDICES:
        values = explainer.explain_interactions(X[10:11], index=index).values[0]
        np.testing.assert_allclose(values, brute_force_matrix(table, index)[..., 0], rtol=0, atol=1e-10)
        np.testing.assert_allclose(values, oracle.explain_interactions(X[10:11], index=index).values[0], atol=1e-12)


def test_feature_groups_are_players_of_the_grouped_game(data):
    X, y = data
    model = SVR(C=10.0, gamma=0.2).fit(X, y)
    groups = {"a": [0, 3], "b": [1, 4, 5]}  # players: a, b, column 2 (ordered by their first column)
    explainer = ProductKernelShapExplainer(model, value_function="baseline", feature_groups=groups).fit(X)
    columns = explainer.feature_groups_.player_of_column
    for index in ("shap", "FSII"):
        explanation = explainer.explain_interactions(X[:2], index=index)
        assert explanation.values.shape == (2, 3, 3)
        assert explanation.feature_names == explainer.feature_groups_.names
        for r in range(2):
            table = coalition_values(masked_value(model.predict, X[r], X.mean(axis=0, keepdims=True), columns), 3)
            np.testing.assert_allclose(explanation.values[r], brute_force_matrix(table, index)[..., 0], atol=1e-10)


def test_factors_that_underflow_to_zero(data):
    # anchors far from the row and from the reference: factors are exactly 0 (exp(−γ·1e6)) on some features
    anchors = np.array([[0.0, 0.0, 0.0, 0.0], [1000.0, 0.5, 0.0, 0.0], [0.2, 1000.0, 1000.0, 0.1]])
    explainer = ProductKernelShapExplainer.from_dual(
        [1.0, -2.0, 0.5], anchors, gamma=0.5, value_function="baseline"
    ).fit(np.array([[1000.0, 0.0, 0.3, 0.0]]))
    x = np.array([0.1, 1000.0, 1000.0, 0.2])
    table = coalition_values(masked_value(explainer.model.predict, x, np.array([[1000.0, 0.0, 0.3, 0.0]])), 4)
    for index in INDICES:
        values = explainer.explain_interactions(x[None], index=index).values[0]
        assert np.all(np.isfinite(values))
        np.testing.assert_allclose(values, brute_force_matrix(table, index)[..., 0], atol=1e-12)


# --------------------------------------------------------------------------------------------
# the convention's axioms, the Explanation, inputs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value_function", ["pkex", "interventional"])
def test_shap_convention_axioms(data, value_function):
    X, y = data
    model = KernelRidge(kernel="rbf", gamma=0.15, alpha=0.3).fit(X, np.c_[y, X[:, 0] - y])
    explainer = ProductKernelShapExplainer(model, value_function=value_function, background_size=10).fit(X)
    rows = X[20:25]
    interactions = explainer.explain_interactions(rows)
    values = interactions.values  # (n, d, d, k)
    assert values.shape == (5, D, D, 2)
    np.testing.assert_allclose(values, values.transpose(0, 2, 1, 3), rtol=0, atol=1e-15)
    np.testing.assert_allclose(values.sum(axis=2), explainer.explain(rows).values, rtol=0, atol=1e-10)
    total = values.sum(axis=(1, 2)) + interactions.base_values
    np.testing.assert_allclose(total, model.predict(rows), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(interactions.base_values, explainer.explain(rows).base_values)
    upper = np.triu(np.ones((D, D), dtype=bool))
    for index in ("k-SII", "STII"):  # efficient: the diagonal and upper triangle sum to f(x) − v(∅)
        other = explainer.explain_interactions(rows, index=index)
        assert other.output_names == interactions.output_names
        np.testing.assert_allclose(other.values[:, upper].sum(axis=1) + other.base_values, total, atol=1e-10)


def test_explanation_fields_and_pandas_names(data):
    X, y = data
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)])
    model = SVR(C=10.0, gamma=0.2).fit(frame, y)
    explainer = ProductKernelShapExplainer(model).fit(frame)
    interactions = explainer.explain_interactions(frame.iloc[:4])
    explanation = explainer.explain(frame.iloc[:4])
    assert interactions.feature_names == explanation.feature_names == list(frame.columns)
    np.testing.assert_array_equal(interactions.data, explanation.data)
    np.testing.assert_array_equal(interactions.base_values, explanation.base_values)
    with pytest.warns(UserWarning, match="feature names"):  # scikit-learn's warning, as for explain
        unnamed = explainer.explain_interactions(X[:4])
    np.testing.assert_array_equal(interactions.values, unnamed.values)
    with pytest.raises(ValueError, match="feature names"):
        explainer.explain_interactions(frame.iloc[:4, ::-1])


def test_a_row_alone_equals_the_row_in_a_batch(data):
    X, y = data
    model = SVR(C=10.0, gamma=0.2).fit(X, y)
    for value_function in ("pkex", "interventional"):
        explainer = ProductKernelShapExplainer(model, value_function=value_function, background_size=8).fit(X)
        batch = explainer.explain_interactions(X[:9], index="STII").values
        for r in (0, 4, 8):
            alone = explainer.explain_interactions(X[r : r + 1], index="STII").values[0]
            np.testing.assert_array_equal(alone, batch[r])


def test_shap_interaction_values_is_shaps_name_for_the_shap_matrices(data):
    X, y = data
    explainer = ProductKernelShapExplainer(SVR(C=10.0, gamma=0.2).fit(X, y), background_size=8).fit(X)
    values = explainer.shap_interaction_values(X[:4])
    np.testing.assert_array_equal(values, explainer.explain_interactions(X[:4], index="shap").values)
    np.testing.assert_allclose(values.sum(axis=2), explainer.explain(X[:4]).values, atol=1e-10)


def test_a_dask_array_gives_the_eager_values_lazily(data):
    da = pytest.importorskip("dask.array")
    X, y = data
    explainer = ProductKernelShapExplainer(SVR(C=10.0, gamma=0.2).fit(X, y), background_size=8).fit(X)
    lazy = explainer.explain_interactions(da.from_array(X[:10], chunks=(4, X.shape[1])), index="STII")
    np.testing.assert_array_equal(lazy.compute(), explainer.explain_interactions(X[:10], index="STII").values)


def test_bad_index_raises_a_value_error_naming_it(data):
    X, y = data
    explainer = ProductKernelShapExplainer(SVR().fit(X, y)).fit(X)
    for index in ("shapley", "sii", None):
        with pytest.raises(ValueError, match="index"):
            explainer.explain_interactions(X[:2], index=index)


@pytest.mark.filterwarnings("ignore:The NumPy global RNG was seeded:FutureWarning")  # shap's summary_plot seeds it
def test_summary_plot_takes_the_values(data):
    import matplotlib.pyplot as plt
    import shap

    X, y = data
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)])
    explainer = ProductKernelShapExplainer(SVR(C=10.0).fit(frame, y)).fit(frame)
    values = explainer.explain_interactions(frame.iloc[:10]).values
    shap.summary_plot(values, frame.iloc[:10], show=False)
    plt.close("all")


@pytest.mark.gpu
@pytest.mark.parametrize("value_function", ["pkex", "interventional"])
def test_cuda_equals_cpu(data, value_function):
    X, y = data
    model = KernelRidge(kernel="rbf", gamma=0.15, alpha=0.3).fit(X, np.c_[y, X[:, 0] - y])
    kwargs = dict(value_function=value_function, background_size=10, random_state=0, feature_groups={"a": [0, 3]})
    cuda = ProductKernelShapExplainer(model, device="cuda", **kwargs).fit(X)
    cpu = ProductKernelShapExplainer(model, **kwargs).fit(X)
    for index in INDICES:
        np.testing.assert_allclose(
            cuda.explain_interactions(X[:7], index=index).values,
            cpu.explain_interactions(X[:7], index=index).values,
            rtol=1e-10,
            atol=1e-12,
        )


def test_fsii_of_more_than_sixteen_players_is_refused_before_any_work():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 17))
    explainer = ProductKernelShapExplainer(SVR().fit(X, X[:, 0]), progress=False).fit(X)
    with pytest.raises(ValueError, match="up to p = 16 players; this explainer has 17"):
        explainer.explain_interactions(X[:2], index="FSII")
    assert explainer.explain_interactions(X[:1], index="STII").values.shape == (1, 17, 17)
    grouped = ProductKernelShapExplainer(explainer.model, feature_groups={"pair": [0, 1]}, progress=False).fit(X)
    fsii = grouped.explain_interactions(X[:1], index="FSII").values[0]
    upper = fsii[np.triu_indices(16)].sum()  # FSII is efficient: singletons and each pair once
    assert upper == pytest.approx(float(explainer.model.predict(X[:1])[0] - grouped.expected_value_), abs=1e-9)
