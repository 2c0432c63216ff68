"""Explaining dask collections: lazy, and bit-identical to an eager explain for any chunking or partitioning."""

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import xgboost
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.svm import SVR

from sklearn_shapq import PermutationShapExplainer, ProductKernelShapExplainer, TopKShapley
from sklearn_shapq.dask import lazy_estimates, to_explanation

from table_helpers import census_pipeline, people


@pytest.fixture(scope="module")
def regression():
    X, y = make_friedman1(300, 6, noise=0.5, random_state=0)
    return X, y, xgboost.XGBRegressor(n_estimators=20, max_depth=3).fit(X, y)


@pytest.fixture(scope="module")
def three_classes():
    X, y = make_friedman1(300, 6, noise=0.5, random_state=1)
    labels = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    return X, HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, labels)


@pytest.mark.parametrize("algorithm", ["leverage", "orthogonal", "antithetic"])
def test_a_dask_array_gives_the_eager_values_for_any_chunking(regression, algorithm):
    X, _, model = regression
    explainer = PermutationShapExplainer(model, algorithm=algorithm, max_evals=60, random_state=3, progress=False)
    explainer.fit(X[:40])
    rows = X[40:97]
    eager = explainer.explain(rows).values
    for chunks in (1, 7, 57, (20, 30, 7)):
        lazy = explainer.explain(da.from_array(rows, chunks=(chunks, 3)))  # columns split too
        assert isinstance(lazy, da.Array) and lazy.shape == eager.shape
        np.testing.assert_array_equal(lazy.compute(), eager)


def test_k_outputs_keep_their_axis_and_estimates_come_from_one_explain(three_classes):
    X, model = three_classes
    explainer = PermutationShapExplainer(model, max_evals=60, random_state=1, progress=False).fit(X[:30])
    rows = X[30:55]
    eager = explainer.explain(rows)
    estimates = lazy_estimates(explainer, da.from_array(rows, chunks=10))
    assert estimates["values"].shape == (25, 6, 3) and estimates["base_values"].shape == (25, 3)
    values, stderr, base = dask.compute(estimates["values"], estimates["error_std"], estimates["base_values"])
    np.testing.assert_array_equal(values, eager.values)
    np.testing.assert_array_equal(stderr, eager.error_std)
    np.testing.assert_array_equal(base, eager.base_values)


def test_a_dask_dataframe_keeps_the_index_and_names_the_columns(regression):
    X, y, _ = regression
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    model = xgboost.XGBRegressor(n_estimators=20, max_depth=3).fit(frame, y)
    rows = frame.iloc[50:90].set_axis(np.arange(1000, 1040))
    explainer = PermutationShapExplainer(model, max_evals=40, random_state=5, progress=False).fit(frame.iloc[:30])
    lazy = explainer.explain(dd.from_pandas(rows, npartitions=4))
    assert isinstance(lazy, dd.DataFrame)
    values = lazy.compute()
    assert list(values.columns) == list(frame.columns)
    assert values.index.tolist() == rows.index.tolist()
    np.testing.assert_array_equal(values.to_numpy(), explainer.explain(rows).values)


def test_k_outputs_of_a_dataframe_are_named_output_by_output(three_classes):
    X, _ = three_classes
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    labels = np.digitize(X[:, 0] + X[:, 1], [0.7, 1.3])
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(frame, labels)
    explainer = PermutationShapExplainer(model, max_evals=60, random_state=2, progress=False).fit(frame.iloc[:30])
    values = explainer.explain(dd.from_pandas(frame.iloc[30:50], npartitions=3)).compute()
    assert list(values.columns) == list(explainer.get_feature_names_out())
    np.testing.assert_array_equal(values.to_numpy(), explainer.transform(frame.iloc[30:50]))


def test_a_raw_table_as_a_dask_dataframe():
    frame, y = people(200, seed=3)
    model = census_pipeline(frame, y)
    explainer = PermutationShapExplainer(model, max_evals=40, random_state=0, progress=False).fit(frame.iloc[:40])
    rows = frame.iloc[40:70]
    values = explainer.explain(dd.from_pandas(rows, npartitions=3)).compute()
    np.testing.assert_allclose(values.to_numpy(), explainer.explain(rows).values, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("convert_string", [True, False])
@pytest.mark.parametrize("missing", [None, np.nan])
def test_string_columns_give_the_eager_values_whatever_dask_converts(convert_string, missing):
    """dask's default string conversion makes None and NaN <NA>, which the pipeline's encoder takes for a new level."""
    frame, y = people(200, seed=4)
    frame = frame.assign(workclass=frame.workclass.astype(object).where(frame.workclass.notna(), missing))
    frame["occupation"] = pd.Series(np.where(np.arange(200) % 3, "tech", "care"), dtype="str")  # str, no missing
    model = census_pipeline(frame, y)
    explainer = PermutationShapExplainer(model, max_evals=40, random_state=0, progress=False).fit(frame.iloc[:40])
    rows = frame.iloc[40:70]
    assert rows.workclass.isna().any()
    with dask.config.set({"dataframe.convert-string": convert_string}):
        collection = dd.from_pandas(rows, npartitions=3)
        values = explainer.explain(collection).compute()
    assert isinstance(collection.dtypes["workclass"], pd.StringDtype) is convert_string
    # the logistic pipeline's outputs move in the last bit with the rows predicted beside them (9e-16,
    # BLAS), and a game split into 40 parts of one background row each carries that to about 1e-13
    np.testing.assert_allclose(values.to_numpy(), explainer.explain(rows).values, rtol=1e-10, atol=1e-12)


def test_a_converted_column_whose_missing_kind_is_lost_is_refused_naming_it():
    frame, y = people(200, seed=4)
    frame = frame.assign(workclass=frame.workclass.astype(object))
    frame.loc[frame.workclass.isna(), "workclass"] = [None, np.nan] * int(frame.workclass.isna().sum() // 2) + [
        None
    ] * (int(frame.workclass.isna().sum()) % 2)
    model = census_pipeline(frame, y)
    explainer = PermutationShapExplainer(model, max_evals=40, random_state=0, progress=False).fit(frame)
    with dask.config.set({"dataframe.convert-string": True}):
        lazy = explainer.explain(dd.from_pandas(frame.iloc[:30], npartitions=2))
    with pytest.raises(ValueError, match=r"dask converted column 'workclass' .*None and nan"):
        lazy.compute()


def test_a_computed_slice_becomes_an_explanation_for_the_plots(regression):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import shap

    X, _, model = regression
    explainer = PermutationShapExplainer(model, max_evals=60, random_state=4, progress=False).fit(X[:40])
    estimates = lazy_estimates(explainer, da.from_array(X[40:100], chunks=16))
    computed = dict(zip(estimates, dask.compute(*estimates.values()), strict=True))
    explanation = to_explanation(explainer, X[40:100], computed)
    eager = explainer.explain(X[40:100])
    np.testing.assert_array_equal(explanation.values, eager.values)
    np.testing.assert_array_equal(explanation.base_values, eager.base_values)
    np.testing.assert_array_equal(explanation.data, eager.data)
    assert explanation.feature_names == eager.feature_names
    shap.plots.beeswarm(explanation, show=False)
    plt.close("all")


def test_without_a_seed_every_block_of_one_call_draws_alike(regression):
    """random_state=None: one fresh seed per lazy call, so duplicates in different blocks agree."""
    X, _, model = regression
    explainer = PermutationShapExplainer(model, algorithm="orthogonal", max_evals=60, progress=False).fit(X[:40])
    rows = np.concatenate([X[40:50], X[40:50]])
    values = explainer.explain(da.from_array(rows, chunks=10)).compute()
    np.testing.assert_array_equal(values[:10], values[10:])
    assert explainer.random_state is None  # the explainer itself is unchanged


def test_top_k_local_mode_and_the_product_kernel_explainer(regression):
    X, y, model = regression
    top_k = TopKShapley(model, n_features_to_select=2, prefit=True, max_evals=300, random_state=2, progress=False).fit(
        X[:50]
    )
    lazy = top_k.explain(da.from_array(X[50:70], chunks=6))
    assert lazy.shape == (20, 6)
    np.testing.assert_array_equal(lazy.compute(), top_k.explain(X[50:70]).values)
    kernel = ProductKernelShapExplainer(SVR(C=10.0).fit(X[:200], y[:200])).fit(X[:40])
    lazy = kernel.explain(da.from_array(X[50:70], chunks=6))
    np.testing.assert_array_equal(lazy.compute(), kernel.explain(X[50:70]).values)


def test_wrong_columns_are_refused_before_any_work(regression):
    X, _, model = regression
    explainer = PermutationShapExplainer(model, max_evals=40, progress=False).fit(X[:40])
    with pytest.raises(ValueError, match="6 columns"):
        explainer.explain(da.from_array(X[:, :5], chunks=10))
    with pytest.raises(ValueError, match="6 columns"):
        explainer.explain(da.from_array(X[:, 0], chunks=10))


def test_on_a_distributed_cluster(dask_client, regression):
    X, _, model = regression
    explainer = PermutationShapExplainer(model, max_evals=60, random_state=8, progress=False).fit(X[:40])
    lazy = explainer.explain(da.from_array(X[40:100], chunks=13))
    np.testing.assert_array_equal(dask_client.compute(lazy).result(), explainer.explain(X[40:100]).values)


def test_a_large_explainer_is_scattered_once(dask_client, regression, monkeypatch):
    import distributed

    import sklearn_shapq.dask as dask_module

    X, _, model = regression
    explainer = PermutationShapExplainer(model, max_evals=60, random_state=8, progress=False).fit(X[:40])
    client = distributed.get_client()
    scattered = []
    scatter = client.scatter
    monkeypatch.setattr(client, "scatter", lambda data, **kw: scattered.append(kw) or scatter(data, **kw))
    monkeypatch.setattr(dask_module, "SCATTER_BYTES", 0)
    lazy = explainer.explain(da.from_array(X[40:100], chunks=13))
    assert len(scattered) == 1 and scattered[0]["broadcast"]
    np.testing.assert_array_equal(dask_client.compute(lazy).result(), explainer.explain(X[40:100]).values)


@pytest.mark.slow
def test_on_worker_processes(regression):
    """Spawned workers: pickling, imports and numba in fresh processes."""
    from distributed import Client, LocalCluster

    X, _, model = regression
    explainer = PermutationShapExplainer(model, max_evals=60, random_state=9, progress=False).fit(X[:40])
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0", silence_logs=40
        ) as cluster,
        Client(cluster) as client,
    ):
        lazy = explainer.explain(da.from_array(X[40:100], chunks=15))
        np.testing.assert_array_equal(client.compute(lazy).result(), explainer.explain(X[40:100]).values)


def test_k_outputs_of_an_array_become_the_eager_explanation(three_classes):
    X, model = three_classes
    explainer = PermutationShapExplainer(model, max_evals=60, random_state=4, progress=False).fit(X[:30])
    estimates = lazy_estimates(explainer, da.from_array(X[30:36], chunks=1))
    computed = dict(zip(estimates, dask.compute(*estimates.values()), strict=True))
    explanation, eager = to_explanation(explainer, X[30:36], computed), explainer.explain(X[30:36])
    np.testing.assert_array_equal(explanation.values, eager.values)
    np.testing.assert_array_equal(explanation.error_std, eager.error_std)
    np.testing.assert_array_equal(explanation.base_values, eager.base_values)


def test_a_generator_seed_gives_one_draw_for_every_chunking(regression):
    X, _, model = regression
    rows = np.concatenate([X[40:60], X[40:60]])
    explainer = PermutationShapExplainer(
        model, algorithm="orthogonal", max_evals=60, random_state=np.random.default_rng(1), progress=False
    ).fit(X[:40])
    values = explainer.explain(da.from_array(rows, chunks=5)).compute()
    np.testing.assert_array_equal(values[:20], values[20:])  # duplicates in other blocks: the same seed


def test_a_callable_model_on_a_distributed_cluster(dask_client, regression):
    X, _, _ = regression
    explainer = PermutationShapExplainer(lambda A: A[:, 0] * A[:, 1], max_evals=60, random_state=2, progress=False)
    explainer.fit(X[:30])
    lazy = explainer.explain(da.from_array(X[30:50], chunks=7))
    np.testing.assert_array_equal(dask_client.compute(lazy).result(), explainer.explain(X[30:50]).values)


def test_clear_errors_before_any_work(regression):
    X, y, model = regression
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    named = xgboost.XGBRegressor(n_estimators=5).fit(frame, y)
    explainer = PermutationShapExplainer(named, max_evals=40, progress=False).fit(frame.iloc[:30])
    renamed = dd.from_pandas(frame.iloc[:20].rename(columns={"f0": "g0"}), npartitions=2)
    with pytest.raises(ValueError, match=r"X must have the columns \['f0'"):
        explainer.explain(renamed)
    with pytest.raises(TypeError, match="transform takes in-memory data"):
        explainer.transform(dd.from_pandas(frame.iloc[:20], npartitions=2))
    import dask.bag as db

    with pytest.raises(TypeError, match="dask Array or DataFrame"):
        explainer.explain(db.from_sequence([1, 2]))
    top_k = TopKShapley(model, n_features_to_select=2, prefit=True, max_evals=300, random_state=0, progress=False).fit(
        X[:40]
    )
    values = top_k.explain(da.from_array(X[40:50], chunks=5)).compute()
    with pytest.raises(ValueError, match="pass estimates\\['base_values'\\]"):
        to_explanation(top_k, X[40:50], {"values": values})
