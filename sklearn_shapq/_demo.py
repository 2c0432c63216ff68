"""The demo: explain an xgboost model and compare with exact TreeSHAP, then the other classes in short sections."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

_PK_BACKGROUND = 50  # background rows of the product-kernel section's interventional game
_PERMUTATION_ROWS = 25  # rows of the product-kernel section's permutation comparison


def _say(text: str) -> None:
    """Print a line at once (flushed), so that it keeps its place among the progress bars on stderr."""
    print(text, flush=True)


def _error(rel_rmse: float) -> str:
    """Format a relative RMSE: four decimals, or two significant digits below 1e-4 (not a false 0.0000)."""
    return f"{rel_rmse:.4f}" if rel_rmse == 0.0 or rel_rmse >= 1e-4 else f"{rel_rmse:.1e}"


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _evals_per_row(explanation) -> int:
    """Return the evaluations per explained row of one ``explain`` call (rows agree without tol)."""
    return int(np.max(explanation.diagnostics["n_evals"]))


def _product_kernel_section(X_train, y_train, X_test, n_rows: int, seed: int) -> dict:
    """Exact Shapley values of an RBF SVR, and the permutation explainer's error in the same game.

    Returns times, efficiency errors and the permutation explainer's relative RMSE.
    """
    from sklearn.svm import SVR

    from sklearn_shapq import PermutationShapExplainer, ProductKernelShapExplainer

    model = SVR(C=100.0, gamma=1.0).fit(X_train, y_train)
    rows = X_test.iloc[:n_rows]
    _say(f"\nProduct-kernel model: RBF SVR (C=100, gamma=1) with {model.support_vectors_.shape[0]} support vectors.")

    pkex = ProductKernelShapExplainer(model).fit(X_train)
    pkex.explain(rows.iloc[:2])  # numba warm-up
    exact, pkex_time = _timed(lambda: pkex.explain(rows))
    pkex_error = float(np.abs(exact.values.sum(1) + exact.base_values - model.predict(rows)).max())
    _say(
        f"ProductKernelShapExplainer, paper's game (exact): {len(rows)} rows in {pkex_time:.3f} s, "
        f"efficiency error {pkex_error:.1e}"
    )

    rows = rows.iloc[:_PERMUTATION_ROWS]
    background: dict[str, Any] = {"background_size": _PK_BACKGROUND, "random_state": seed}
    interventional = ProductKernelShapExplainer(model, value_function="interventional", **background).fit(X_train)
    permutation = PermutationShapExplainer(model, algorithm="leverage_cv", **background).fit(X_train)  # "auto": exact
    if not np.array_equal(interventional.references_, permutation.background_):
        raise RuntimeError("the two explainers drew different background rows")
    _say(f"Interventional game, {len(rows)} rows, the same {_PK_BACKGROUND} background rows for both:")
    _say(f"{'method':<58} {'evals/row':>9} {'seconds':>8} {'rel. RMSE':>9}")
    interventional.explain(rows.iloc[:2])
    permutation.explain(rows.iloc[:2])
    truth, exact_time = _timed(lambda: interventional.explain(rows).values)
    _say(f"{'sklearn_shapq ProductKernelShap interventional (exact)':<58} {'-':>9} {exact_time:>8.2f} {_error(0.0):>9}")
    result, permutation_time = _timed(lambda: permutation.explain(rows))
    estimate, permutation_evals = result.values, _evals_per_row(result)
    rel_rmse = float(np.sqrt(np.mean((estimate - truth) ** 2)) / np.sqrt(np.mean(truth**2)))
    name = f"sklearn_shapq Permutation ({permutation.algorithm_}, max_evals={permutation.max_evals_})"
    _say(f"{name:<58} {permutation_evals:>9} {permutation_time:>8.2f} {_error(rel_rmse):>9}")
    return {
        "n_support_vectors": int(model.support_vectors_.shape[0]),
        "pkex_seconds": pkex_time,
        "pkex_efficiency_error": pkex_error,
        "interventional_seconds": exact_time,
        "permutation_seconds": permutation_time,
        "permutation_evals": permutation_evals,
        "permutation_rel_rmse": rel_rmse,
    }


def _hsic_section(X, y) -> dict:
    """Exact Shapley attribution of HSIC(X, y), the features it selects, and the time."""
    from sklearn_shapq import HSICAttribution

    selector, seconds = _timed(lambda: HSICAttribution(n_features_to_select=3).fit(X, y))
    _say(f"\nHSICAttribution: HSIC(X, y) = {selector.hsic_:.5f}, attributed exactly to features in {seconds:.2f} s:")
    order = np.argsort(-selector.attributions_)
    _say("  " + ", ".join(f"{X.columns[j]} {selector.attributions_[j]:+.5f}" for j in order))
    _say(f"  selected (top 3): {list(selector.get_feature_names_out())}; negative = carries no dependence")
    return {
        "hsic": float(selector.hsic_),
        "attributions": dict(zip(X.columns, selector.attributions_.tolist(), strict=True)),
        "selected": list(selector.get_feature_names_out()),
        "seconds": seconds,
    }


def _topk_section(model, background, rows, reference, X, y, seed: int) -> dict:
    """Top-3 features per row with few evaluations (TopKShapley), and as a feature selector.

    Returns the precision of each row's top 3 against ``reference`` (exact values), evaluations and times.
    """
    from sklearn.linear_model import RidgeCV

    from sklearn_shapq import PermutationShapExplainer, TopKShapley
    from sklearn_shapq.algorithms import ratio_precision

    k, budget = 3, 400
    truth = np.abs(reference)
    _say(f"\nTopKShapley (Greedy CMCS, {budget} evals/row): each row's top {k} features by |Shapley value|")
    local = TopKShapley(model, n_features_to_select=k, prefit=True, max_evals=budget, random_state=seed).fit(background)
    explanation, seconds = _timed(lambda: local.explain(rows))
    precision = float(ratio_precision(truth, explanation.diagnostics["top_k"]).mean())
    walk = PermutationShapExplainer(
        model, algorithm="leverage_cv", max_evals=budget, random_state=seed, background_size=None
    ).fit(background)  # "auto" would read the trees: exact
    walk_result, walk_seconds = _timed(lambda: walk.explain(rows))
    values = walk_result.values
    walk_top = np.argsort(-np.abs(values), axis=1, kind="stable")[:, :k]
    walk_precision = float(ratio_precision(truth, walk_top).mean())
    _say(f"  precision@{k} against exact TreeSHAP {precision:.3f} in {seconds:.2f} s")
    walk_text = f"{walk.algorithm_}, {_evals_per_row(walk_result)} evals/row"
    _say(f"  PermutationShapExplainer ({walk_text}): {walk_precision:.3f} in {walk_seconds:.2f} s")
    selector = TopKShapley(RidgeCV(), n_features_to_select=k, cv=3, max_evals=400, random_state=seed)
    _, select_seconds = _timed(lambda: selector.fit(X, y))
    _say(
        f"  as a selector (v(S) = 3-fold CV R² of ridge on S; {selector.n_evals_} evals, {select_seconds:.1f} s): "
        f"{list(selector.get_feature_names_out())}"
    )
    return {
        "budget": budget,
        "precision_at_k": precision,
        "seconds": seconds,
        "permutation_precision_at_k": walk_precision,
        "permutation_seconds": walk_seconds,
        "selected": list(selector.get_feature_names_out()),
        "selector_seconds": select_seconds,
    }


def _table_section(out: Path, n_rows: int, seed: int) -> dict:
    """Explain a raw table (strings with missing entries, a category, NaN, bools) as it is.

    Returns the efficiency error, times, the grouped values' names and whether shap's explainer ran.
    """
    import matplotlib.pyplot as plt
    import shap

    from sklearn_shapq import PermutationShapExplainer
    from sklearn_shapq.datasets import make_census_pipeline, make_census_table

    table, y = make_census_table(2000, random_state=seed)
    model = make_census_pipeline(table, y)
    background, rows = table.iloc[:100], table.iloc[100 : 100 + min(n_rows, 50)]
    missing = int(table.isna().sum().sum())
    _say(
        f"\nA raw table: {table.shape[0]} rows, columns {dict(table.dtypes.astype(str))}, {missing} missing cells; "
        "OneHotEncoder + SimpleImputer + LogisticRegression in a Pipeline."
    )
    explainer = PermutationShapExplainer(model, random_state=seed).fit(background)
    explanation, seconds = _timed(lambda: explainer.explain(rows))
    error = float(np.abs(explanation.values.sum(1) + explanation.base_values - model.decision_function(rows)).max())
    _say(
        f"  PermutationShapExplainer ({explainer.algorithm_}) on the raw columns: {len(rows)} rows in {seconds:.2f} s, "
        f"efficiency error {error:.1e}; row 0: "
        + ", ".join(
            f"{n}={v:.4g}" if isinstance(v, float) else f"{n}={v!r}"
            for n, v in zip(explanation.feature_names, explanation.display_data[0], strict=True)
        )
    )
    try:
        shap.PermutationExplainer(model.decision_function, background)(rows.iloc[:1])
        shap_works, shap_message = True, "runs"
    except Exception as exc:  # what shap does with string columns is the point of the comparison
        shap_works, shap_message = False, f"fails: {type(exc).__name__}: {exc}"
    _say(f"  shap.PermutationExplainer on the same table {shap_message}")
    groups = {"job": ["workclass", "occupation"]}
    grouped = PermutationShapExplainer(model, feature_groups=groups, random_state=seed)
    grouped_values = grouped.fit(background).explain(rows)
    _say(f"  with feature_groups={groups}: one value per player {grouped_values.feature_names}")
    with warnings.catch_warnings():  # string columns' data is NaN by design (shap greys them): numpy warns
        warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
        shap.plots.beeswarm(explanation, show=False)
    plt.gcf().savefig(out / "beeswarm_table.png", dpi=110, bbox_inches="tight")
    plt.close("all")
    _say(f"  Plot written to {(out / 'beeswarm_table.png').resolve()}")
    return {
        "efficiency_error": error,
        "seconds": seconds,
        "algorithm": explainer.algorithm_,
        "grouped_names": grouped_values.feature_names,
        "shap_permutation_explainer": shap_message,
        "shap_works": shap_works,
    }


def run_demo(out: str = "demo_output", n_rows: int = 100, seed: int = 0) -> dict:
    """Train xgboost on scikit-learn's diabetes data, explain rows, compare, and save plots.

    Parameters
    ----------
    out : str
        Folder for ``beeswarm.png``, ``bar.png`` and ``waterfall.png`` (the xgboost model's values at
        the default budget) and ``beeswarm_table.png`` (the raw table's).
    n_rows : int
        Rows to explain.
    seed : int

    Returns
    -------
    dict
        ``"table"``, ``"product_kernel"``, ``"hsic"``, ``"topk"`` and ``"table_section"`` figures.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import shap
    import xgboost
    from sklearn.datasets import load_diabetes
    from sklearn.model_selection import train_test_split

    from sklearn_shapq import PermutationShapExplainer

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.25, random_state=seed)
    model = xgboost.XGBRegressor(n_estimators=200, max_depth=4, learning_rate=0.05, random_state=seed)
    model.fit(X_train, y_train)
    rows = X_test.iloc[:n_rows]
    background = shap.utils.sample(X_train, 100, random_state=seed)
    d = X.shape[1]
    _say(f"Diabetes data: {len(X_train)} training rows, {d} features; xgboost with 200 trees.")
    _say(f"Explaining {len(rows)} rows against {len(background)} background rows.\n")

    _say(f"{'method':<58} {'evals/row':>9} {'seconds':>8} {'rel. RMSE':>9}")
    table: list[dict] = []

    def add_row(method: str, evals: Any, seconds: float, rel_rmse: float) -> None:
        """Print one row of the comparison as soon as it is measured (progress bars run between rows)."""
        table.append({"method": method, "evals": evals, "seconds": seconds, "rel_rmse": rel_rmse})
        _say(f"{method:<58} {evals!s:>9} {seconds:>8.2f} {_error(rel_rmse):>9}")

    tree = shap.TreeExplainer(model, data=background, feature_perturbation="interventional")
    reference, tree_time = _timed(lambda: tree(rows).values)
    scale = float(np.sqrt(np.mean(reference**2)))
    add_row("shap.TreeExplainer interventional (exact)", "-", tree_time, 0.0)

    warm_up = PermutationShapExplainer(model, max_evals=2 * d, random_state=seed)
    warm_up.fit(background).explain(rows.iloc[:2])  # numba JIT
    explanations = []
    # "auto" reads xgboost's trees (exact, no sampling); "leverage_cv" is what it samples for other models
    for algorithm, budget in (("auto", "auto"), ("leverage_cv", "auto"), ("leverage_cv", 2000)):
        explainer = PermutationShapExplainer(
            model, algorithm=algorithm, max_evals=budget, random_state=seed, background_size=None
        )
        explainer.fit(background)
        result, seconds = _timed(lambda explainer=explainer: explainer.explain(rows))
        explanations.append(result)
        exact = explainer.max_evals_ == 0
        setting = "exact, from the trees" if exact else f"max_evals={budget}"
        add_row(
            f"sklearn_shapq Permutation ({explainer.algorithm_}, {setting})",
            _evals_per_row(result),
            seconds,
            float(np.sqrt(np.mean((result.values - reference) ** 2)) / scale),
        )
    explanation = explanations[1]  # the sampled estimate at the default budget, with its error bars: the one plotted
    masker = shap.maskers.Independent(background, max_samples=len(background))
    shap_explainer = shap.PermutationExplainer(model.predict, masker, seed=seed)
    shap_result, shap_time = _timed(lambda: shap_explainer(rows, max_evals=500))  # shap's own bar after 10 s
    add_row(
        "shap.PermutationExplainer (max_evals=500)",
        500,
        shap_time,
        float(np.sqrt(np.mean((shap_result.values - reference) ** 2)) / scale),
    )
    additivity = np.abs(explanation.values.sum(1) + explanation.base_values - model.predict(rows)).max()
    _say(f"\nEfficiency: max |sum(values) + base - f(x)| = {additivity:.1e}")
    _say(
        "rel. RMSE = RMSE against exact interventional TreeSHAP / RMS of the exact values "
        "(xgboost predicts in float32: exact methods agree to about 1e-6)."
    )

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    plots = {
        "beeswarm.png": lambda: shap.plots.beeswarm(explanation, show=False),
        "bar.png": lambda: shap.plots.bar(explanation, show=False),
        "waterfall.png": lambda: shap.plots.waterfall(explanation[0], show=False),
    }
    for name, draw in plots.items():
        draw()
        plt.gcf().savefig(folder / name, dpi=110, bbox_inches="tight")
        plt.close("all")
    _say(f"Plots written to {folder.resolve()}: {', '.join(plots)}")
    product_kernel = _product_kernel_section(X_train, y_train, X_test, n_rows, seed)
    hsic = _hsic_section(X, y)
    topk = _topk_section(model, background, rows, reference, X, y, seed)
    raw_table = _table_section(folder, n_rows, seed)
    return {"table": table, "product_kernel": product_kernel, "hsic": hsic, "topk": topk, "table_section": raw_table}
