"""PermutationShapExplainer: estimates keyed by row content, explain changes nothing, bounded memory."""

import copy
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.estimators import SHAPLEY_ESTIMATORS

from fitted_state import assert_same_state

SAMPLERS = sorted(set(SHAPLEY_ESTIMATORS) - {"exact"})


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    return X, model


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_a_row_alone_equals_the_row_anywhere_in_any_batch(diabetes, sampler):
    """Bit-identical values whatever the row's position, batch, block size, or company; duplicates agree."""
    X, model = diabetes
    budget = 1000 if sampler == "stratified" else 400  # stratified needs 8 d² = 800
    explainer = PermutationShapExplainer(model, sampler=sampler, max_evals=budget, background_size=20, random_state=7)
    explainer.fit(X)
    alone = explainer.explain(X[[3]]).values[0]
    batch = explainer.explain(X[[0, 1, 2, 3, 4, 3]]).values
    np.testing.assert_array_equal(batch[3], alone)
    np.testing.assert_array_equal(batch[5], alone)  # a duplicate row
    shuffled = explainer.explain(X[[9, 3, 8]]).values
    np.testing.assert_array_equal(shuffled[1], alone)
    tiny_batches = explainer.set_params(batch_size=20).explain(X[[5, 3]]).values  # one coalition per model call
    np.testing.assert_array_equal(tiny_batches[1], alone)
    assert not np.array_equal(batch[0], batch[1])  # different rows, different draws and values


def test_rows_in_many_blocks_equal_rows_alone(diabetes):
    """More rows than fit one block: every block gives each row its own values."""
    X, model = diabetes
    explainer = PermutationShapExplainer(model, sampler="orthogonal", max_evals=200, background_size=5, random_state=1)
    explainer.fit(X)
    many = explainer.set_params(batch_size=5 * 50).explain(X[:60]).values
    for row in (0, 31, 59):
        np.testing.assert_array_equal(many[row], explainer.explain(X[[row]]).values[0])


@pytest.mark.parametrize("sampler", ["exact", "sbq", "orthogonal", "owen", "stratified"])
def test_explain_changes_no_attribute_and_runs_from_threads(diabetes, sampler):
    X, model = diabetes
    data = X[:, :6] if sampler == "exact" else X
    budget = {"exact": "auto", "stratified": 1000}.get(sampler, 400)
    target = (lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 5]) if sampler == "exact" else model
    explainer = PermutationShapExplainer(target, sampler=sampler, max_evals=budget, background_size=10, random_state=2)
    explainer.fit(data)
    before = copy.deepcopy(vars(explainer))
    serial = explainer.explain(data[:4]).values
    assert_same_state(before, vars(explainer))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: explainer.explain(data[:4]).values, range(4)))
    for values in results:
        np.testing.assert_array_equal(values, serial)
    assert_same_state(before, vars(explainer))


def test_any_budget_runs_in_bounded_memory_or_is_refused_before_any_work(diabetes):
    """max_evals=10**9 used to ask for 8.3 GiB at once; walks now merge units chunk by chunk."""
    X, _ = diabetes
    calls = []

    def linear(Z):
        calls.append(len(Z))
        return Z @ np.arange(1.0, 11.0)

    tracemalloc.start()  # planning a billion evaluations holds nothing of the budget's size
    huge = SHAPLEY_ESTIMATORS["orthogonal"]("orthogonal", 10**9, 10, 0)
    assert huge.n_evals > 10**9 - 20 and tracemalloc.get_traced_memory()[1] < 2**20
    tracemalloc.stop()
    peaks = []
    for n_orderings in (100_000, 400_000):  # 400,000 orderings at once would be 290 MiB of masked rows and gains
        explainer = PermutationShapExplainer(linear, sampler="mc", max_evals=2 + 9 * n_orderings, background_size=1)
        explainer.fit(X)
        tracemalloc.start()
        explanation = explainer.explain(X[:1])
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        expected = np.arange(1.0, 11.0) * (X[0] - explainer.background_[0])
        np.testing.assert_allclose(explanation.values[0], expected, atol=1e-9)
        assert explanation.diagnostics["n_evals"][0] == 2 + 9 * n_orderings
    assert peaks[1] < 1.2 * peaks[0] and peaks[1] < 160 * 2**20, peaks  # one chunk, whatever the budget
    for sampler in ("sobol", "herding", "sbq"):  # one shared design of ~10^8 orderings cannot be held
        with pytest.raises(ValueError, match="lower max_evals|at most"):
            PermutationShapExplainer(linear, sampler=sampler, max_evals=10**9).fit(X)
    calls.clear()
    with pytest.raises(ValueError, match="d <= 30"):
        PermutationShapExplainer(linear, sampler="exact", max_evals=10**9).fit(np.zeros((3, 31)))
    assert not calls  # refused before the model was called
