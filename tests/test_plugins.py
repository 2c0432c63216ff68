"""A plugin registered after import reaches every public class that takes its name (parameter validation included)."""

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.linear_model import Ridge

from sklearn_shapq import PermutationShapExplainer, TopKShapley
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS, TOPK_ALGORITHMS, register_sampler, register_topk
from sklearn_shapq.algorithms._topk_permutation import ApproShapley
from sklearn_shapq.samplers import ORDERING_SOURCES
from sklearn_shapq.samplers._sources import MonteCarloSource


@pytest.fixture
def data():
    X, y = make_friedman1(120, 6, random_state=0)
    return X, y, Ridge().fit(X, y)


def test_a_sampler_registered_after_import_runs_in_the_permutation_explainer(data):
    X, _, model = data
    with pytest.raises(ValueError, match="'sampler' parameter"):
        PermutationShapExplainer(model, sampler="plugin_mc", progress=False).fit(X)

    @register_sampler
    class PluginMonteCarlo(MonteCarloSource):
        name = "plugin_mc"

    try:
        explainer = PermutationShapExplainer(model, sampler="plugin_mc", max_evals=60, random_state=0, progress=False)
        explanation = explainer.fit(X[:30]).explain(X[:3])
        assert explainer.sampler_ == "plugin_mc" and explanation.diagnostics["sampler"] == "plugin_mc"
        np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(X[:3]))
    finally:
        del ORDERING_SOURCES["plugin_mc"], SHAPLEY_ALGORITHMS["plugin_mc"]
    with pytest.raises(ValueError, match="'sampler' parameter"):
        PermutationShapExplainer(model, sampler="plugin_mc", progress=False).fit(X)


def test_a_topk_method_registered_after_import_runs_in_both_modes(data):
    X, y, model = data
    with pytest.raises(ValueError, match="'method' parameter"):
        TopKShapley(Ridge(), k=2, method="plugin_walks", progress=False).fit(X, y)

    @register_topk
    class PluginWalks(ApproShapley):
        name = "plugin_walks"

    try:
        selector = TopKShapley(Ridge(), k=2, method="plugin_walks", cv=3, max_evals=60, random_state=0, progress=False)
        assert selector.fit(X, y).get_support().sum() == 2
        local = TopKShapley(
            model, k=2, prefit=True, method="plugin_walks", max_evals=60, random_state=0, progress=False
        )
        assert local.fit(X[:30]).explain(X[:3]).values.shape == (3, 6)
    finally:
        del TOPK_ALGORITHMS["plugin_walks"]
