"""Plugins registered after import with ``sklearn_shapq.register`` reach every public class that takes their kind.

A Shapley algorithm and an ordering source (whose walk is then a Shapley algorithm of its name) run in
``PermutationShapExplainer(algorithm=...)``; a top-k algorithm runs in ``TopKShapley(algorithm=...)``,
as a selector (``fit``) and per row (``explain``). Parameter validation reads the live registries,
so a name is refused before registration and after removal.
"""

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.linear_model import Ridge

import sklearn_shapq
from sklearn_shapq import PermutationShapExplainer, TopKShapley
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS, TOPK_ALGORITHMS, PermutationWalkAlgorithm
from sklearn_shapq.algorithms._stratified import StratifiedAlgorithm
from sklearn_shapq.algorithms._topk_permutation import ApproShapley
from sklearn_shapq.samplers import ORDERING_SOURCES
from sklearn_shapq.samplers._sources import AntitheticSource

INVALID = "'algorithm' parameter"


@pytest.fixture
def data():
    X, y = make_friedman1(120, 6, random_state=0)
    return X, y, Ridge().fit(X, y)


@pytest.fixture
def plugins():
    """Register classes for one test; unregister them afterwards, whatever happened."""
    registered = []

    def add(cls):
        registered.append(sklearn_shapq.register(cls))
        return cls

    yield add
    for cls in reversed(registered):
        if cls.registry.get(cls.name) is cls:
            cls.registry.unregister(cls.name)


def explain(model, X, name, **params):
    explainer = PermutationShapExplainer(model, algorithm=name, random_state=0, progress=False, **params)
    return explainer, explainer.fit(X[:30]).explain(X[:3])


def test_a_shapley_algorithm_registered_after_import_runs_in_the_permutation_explainer(data, plugins):
    X, _, model = data
    with pytest.raises(ValueError, match=INVALID):
        PermutationShapExplainer(model, algorithm="plugin_stratified", progress=False).fit(X)

    @plugins
    class PluginStratified(StratifiedAlgorithm):
        name = "plugin_stratified"

    assert SHAPLEY_ALGORITHMS["plugin_stratified"] is PluginStratified
    explainer, explanation = explain(model, X, "plugin_stratified", max_evals=400)
    assert explainer.algorithm_ == "plugin_stratified" and explanation.diagnostics["algorithm"] == "plugin_stratified"
    _, builtin = explain(model, X, "stratified", max_evals=400)  # the same class under another name
    np.testing.assert_array_equal(explanation.values, builtin.values)
    SHAPLEY_ALGORITHMS.unregister("plugin_stratified")
    with pytest.raises(ValueError, match=INVALID):
        PermutationShapExplainer(model, algorithm="plugin_stratified", progress=False).fit(X)


def test_a_plugin_with_the_three_argument_estimate_runs_on_split_rows(data, plugins):
    """A plugin written for ``estimate(game, games, keys)`` runs on rows split by background parts as
    before: the base class's ``estimate_parts`` calls it, each part drawn alone."""
    X, _, model = data

    @plugins
    class ThreeArguments(StratifiedAlgorithm):
        name = "plugin_three_arguments"

        def estimate(self, game, games, keys):
            return super().estimate(game, games, keys)

    for parts in (1, 5):
        explainer, explanation = explain(model, X, "plugin_three_arguments", max_evals=400, background_parts=parts)
        assert explanation.diagnostics["background_parts"] == parts
        np.testing.assert_allclose(
            explanation.values.sum(axis=1) + explanation.base_values, model.predict(X[:3]), atol=1e-9
        )


def test_an_ordering_source_registered_after_import_runs_in_the_permutation_explainer(data, plugins):
    X, _, model = data
    with pytest.raises(ValueError, match=INVALID):
        PermutationShapExplainer(model, algorithm="plugin_antithetic", progress=False).fit(X)

    @plugins
    class PluginAntithetic(AntitheticSource):
        name = "plugin_antithetic"

    assert ORDERING_SOURCES["plugin_antithetic"] is PluginAntithetic
    walk = SHAPLEY_ALGORITHMS["plugin_antithetic"]  # its walk: a Shapley algorithm of its name
    assert issubclass(walk, PermutationWalkAlgorithm) and walk.ordering_source is PluginAntithetic
    explainer, explanation = explain(model, X, "plugin_antithetic", max_evals=60)
    assert explainer.algorithm_ == "plugin_antithetic" and explanation.diagnostics["algorithm"] == "plugin_antithetic"
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(X[:3]))
    _, builtin = explain(model, X, "antithetic", max_evals=60)  # the same orderings under another name
    np.testing.assert_array_equal(explanation.values, builtin.values)
    ORDERING_SOURCES.unregister("plugin_antithetic")  # its walk goes with it
    assert "plugin_antithetic" not in SHAPLEY_ALGORITHMS
    with pytest.raises(ValueError, match=INVALID):
        PermutationShapExplainer(model, algorithm="plugin_antithetic", progress=False).fit(X)


def test_a_topk_algorithm_registered_after_import_runs_in_both_modes(data, plugins):
    X, y, model = data
    with pytest.raises(ValueError, match=INVALID):
        TopKShapley(Ridge(), n_features_to_select=2, algorithm="plugin_walks", progress=False).fit(X, y)

    @plugins
    class PluginWalks(ApproShapley):
        name = "plugin_walks"

    assert TOPK_ALGORITHMS["plugin_walks"] is PluginWalks
    params = {"n_features_to_select": 2, "max_evals": 60, "random_state": 0, "progress": False}
    selector = TopKShapley(Ridge(), algorithm="plugin_walks", cv=3, **params).fit(X, y)
    assert selector.algorithm_ == "plugin_walks" and selector.get_support().sum() == 2
    builtin = TopKShapley(Ridge(), algorithm="permutation", cv=3, **params).fit(X, y)
    np.testing.assert_array_equal(selector.get_support(), builtin.get_support())
    local = TopKShapley(model, prefit=True, algorithm="plugin_walks", **params).fit(X[:30])
    values = local.explain(X[:3]).values
    assert values.shape == (3, 6)
    builtin = TopKShapley(model, prefit=True, algorithm="permutation", **params).fit(X[:30])
    np.testing.assert_array_equal(values, builtin.explain(X[:3]).values)
    TOPK_ALGORITHMS.unregister("plugin_walks")
    with pytest.raises(ValueError, match=INVALID):
        TopKShapley(Ridge(), n_features_to_select=2, algorithm="plugin_walks", progress=False).fit(X, y)


def test_the_fixture_removes_what_a_test_registered():
    for name in ("plugin_stratified", "plugin_antithetic"):
        assert name not in SHAPLEY_ALGORITHMS and name not in ORDERING_SOURCES
    assert "plugin_walks" not in TOPK_ALGORITHMS
