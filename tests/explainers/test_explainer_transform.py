"""Explainers as Pipeline steps: transform gives the Shapley values, named columns, set_output, clone."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_shapq import PermutationShapExplainer, ProductKernelShapExplainer


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y


def explainers(X, y):
    logistic = LogisticRegression(max_iter=500).fit(X, y)
    ridge = KernelRidge(kernel="rbf", gamma=0.2).fit(X, y.to_numpy(dtype=float))
    return {
        "permutation": PermutationShapExplainer(
            logistic, max_evals=60, background_size=30, random_state=0, progress=False
        ),
        "product_kernel": ProductKernelShapExplainer(ridge, background_size=30),
    }


@pytest.mark.parametrize("name", ["permutation", "product_kernel"])
def test_a_pipeline_clusters_rows_in_shapley_space_with_named_pandas_output(iris, name):
    X, y = iris
    explainer = explainers(X, y)[name]
    pipeline = make_pipeline(explainer, KMeans(3, n_init=3, random_state=0)).set_output(transform="pandas")
    labels = pipeline.fit_predict(X)
    assert labels.shape == (150,)
    values = pipeline[0].transform(X.iloc[:5])
    assert isinstance(values, pd.DataFrame)
    assert list(values.columns) == list(pipeline[0].get_feature_names_out())
    explanation = pipeline[0].explain(X.iloc[:5])
    layout = explanation.values
    if layout.ndim == 3:
        layout = layout.transpose(0, 2, 1).reshape(5, -1)
    np.testing.assert_allclose(values.to_numpy(), layout)
    np.testing.assert_array_equal(values.index, X.index[:5])


def test_k_outputs_are_laid_out_output_by_output(iris):
    X, y = iris
    explainer = explainers(X, y)["permutation"].fit(X)
    names = explainer.get_feature_names_out()
    assert len(names) == 3 * 4 and names[0] == "0__sepal length (cm)" and names[4] == "1__sepal length (cm)"
    values = explainer.transform(X.iloc[:2])
    np.testing.assert_allclose(values[:, 4:8], explainer.explain(X.iloc[:2]).values[:, :, 1])


def test_one_output_keeps_the_feature_names_and_groups_name_their_column(iris):
    X, y = iris
    binary = LogisticRegression(max_iter=500).fit(X, y == 2)
    explainer = PermutationShapExplainer(
        binary, feature_groups={"petal": ["petal length (cm)", "petal width (cm)"]}, progress=False
    ).fit(X)
    assert list(explainer.get_feature_names_out()) == ["sepal length (cm)", "sepal width (cm)", "petal"]
    assert explainer.transform(X.iloc[:4]).shape == (4, 3)


def test_set_output_survives_clone_and_grid_search(iris):
    X, y = iris
    explainer = explainers(X, y)["permutation"].set_output(transform="pandas")
    assert isinstance(clone(explainer).fit(X).transform(X.iloc[:2]), pd.DataFrame)
    pipeline = make_pipeline(explainer, KMeans(n_init=2, random_state=0))
    search = GridSearchCV(pipeline, {"kmeans__n_clusters": [2, 3]}, cv=2).fit(X)
    assert isinstance(search.best_estimator_[0].transform(X.iloc[:2]), pd.DataFrame)
