"""PermutationShapExplainer: estimates keyed by row content, explain changes nothing, bounded memory."""

import copy
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS

from fitted_state import assert_same_state

SAMPLERS = sorted(set(SHAPLEY_ALGORITHMS) - {"exact"})


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    return X, model


@pytest.mark.parametrize("algorithm", SAMPLERS)
def test_a_row_alone_equals_the_row_anywhere_in_any_batch(diabetes, algorithm):
    """Bit-identical values whatever the row's position, batch, block size, or company; duplicates agree."""
    X, model = diabetes
    budget = 1000 if algorithm == "stratified" else 400  # stratified needs 8 d² = 800
    explainer = PermutationShapExplainer(
        model, algorithm=algorithm, max_evals=budget, background_size=20, random_state=7
    )
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
    explainer = PermutationShapExplainer(
        model, algorithm="orthogonal", max_evals=200, background_size=5, random_state=1
    )
    explainer.fit(X)
    many = explainer.set_params(batch_size=5 * 50).explain(X[:60]).values
    for row in (0, 31, 59):
        np.testing.assert_array_equal(many[row], explainer.explain(X[[row]]).values[0])


def test_a_block_holds_games_for_the_threads_when_one_model_call_holds_one_game(diabetes, monkeypatch):
    """The kernels split a block's games among threads: a block takes at least 8 games (memory
    permitting), though a model call of 20 rows holds one coalition of one game."""
    from sklearn_shapq.algorithms._leverage import LeverageAlgorithm

    X, model = diabetes
    sizes, estimate = [], LeverageAlgorithm.estimate

    def recorded(self, game, games, keys, parts=None):
        sizes.append(len(games))
        return estimate(self, game, games, keys, parts=parts)

    monkeypatch.setattr(LeverageAlgorithm, "estimate", recorded)
    explainer = PermutationShapExplainer(
        model,
        algorithm="leverage",
        max_evals=100,
        background_size=20,
        background_parts=1,
        batch_size=20,
        random_state=1,
    ).fit(X)
    explainer.explain(X[:20])
    assert sizes == [8, 8, 4]


@pytest.mark.parametrize("algorithm", ["exact", "sbq", "orthogonal", "owen", "stratified"])
def test_explain_changes_no_attribute_and_runs_from_threads(diabetes, algorithm):
    X, model = diabetes
    data = X[:, :6] if algorithm == "exact" else X
    budget = {"exact": "auto", "stratified": 1000}.get(algorithm, 400)
    target = (lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 5]) if algorithm == "exact" else model
    explainer = PermutationShapExplainer(
        target, algorithm=algorithm, max_evals=budget, background_size=10, random_state=2
    )
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
    huge = SHAPLEY_ALGORITHMS["orthogonal"](10**9, 10, 0)
    assert huge.n_evals > 10**9 - 20 and tracemalloc.get_traced_memory()[1] < 2**20
    tracemalloc.stop()
    peaks = []
    for n_orderings in (100_000, 400_000):  # 400,000 orderings at once would be 290 MiB of masked rows and gains
        explainer = PermutationShapExplainer(linear, algorithm="mc", max_evals=2 + 9 * n_orderings, background_size=1)
        explainer.fit(X)
        tracemalloc.start()
        explanation = explainer.explain(X[:1])
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        expected = np.arange(1.0, 11.0) * (X[0] - explainer.background_[0])
        np.testing.assert_allclose(explanation.values[0], expected, atol=1e-9)
        assert explanation.diagnostics["n_evals"][0] == 2 + 9 * n_orderings
    assert peaks[1] < 1.2 * peaks[0] and peaks[1] < 160 * 2**20, peaks  # one chunk, whatever the budget
    for algorithm in ("sobol", "herding", "sbq"):  # one shared design of ~10^8 orderings cannot be held
        with pytest.raises(ValueError, match="lower max_evals|at most"):
            PermutationShapExplainer(linear, algorithm=algorithm, max_evals=10**9).fit(X)
    calls.clear()
    with pytest.raises(ValueError, match="d <= 30"):
        PermutationShapExplainer(linear, algorithm="exact", max_evals=10**9).fit(np.zeros((3, 31)))
    assert not calls  # refused before the model was called


class CountingModel:
    """A linear model that counts the rows it is asked to predict."""

    def __init__(self, d):
        self.coef = np.arange(1.0, d + 1.0)
        self.rows = 0

    def __call__(self, Z):
        self.rows += len(Z)
        return Z @ self.coef


@pytest.mark.parametrize("algorithm", ["exact", "antithetic", "sbq", "owen", "stratified"])
def test_diagnostics_count_what_the_model_received(algorithm):
    rng = np.random.default_rng(0)
    d, n_background, n_rows = 4, 6, 3
    X = rng.normal(size=(40, d))
    model = CountingModel(d)
    explainer = PermutationShapExplainer(model, algorithm=algorithm, max_evals=200, background_size=n_background)
    explainer.fit(X)
    assert model.rows == n_background  # fit: v(∅) over the background, once
    model.rows = 0
    explanation = explainer.explain(X[:n_rows])
    diagnostics = explanation.diagnostics
    n_evals = diagnostics["n_evals"]
    cached = 0 if algorithm in ("owen", "stratified") else 2  # walks and exact reuse v(∅) and v(N)
    checked = n_background  # explain predicts the background once: is the model still the one of fit?
    assert diagnostics["n_model_rows"] == model.rows == n_rows * (1 + (n_evals[0] - cached) * n_background) + checked
    assert (n_evals <= explainer.max_evals_).all() and diagnostics["algorithm"] == algorithm
    np.testing.assert_allclose(explanation.base_values, (explainer.background_ @ model.coef).mean())


def test_early_stopping_reports_each_rows_evaluations_and_refuses_samplers_without_it():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 5))
    noisy = lambda Z: np.sin(3 * Z[:, 0] * Z[:, 1]) + Z[:, 2] * Z[:, 3] * Z[:, 4]  # noqa: E731
    rows = np.vstack([np.zeros(5), X[:3]])  # a row at the origin has a near-deterministic game
    loose = PermutationShapExplainer(noisy, algorithm="mc", max_evals=2 + 400 * 4, tol=10.0, random_state=0).fit(X)
    stopped = loose.explain(rows).diagnostics["n_evals"]
    assert (stopped == 2 + 40 * 4).all()  # every row stops at the first check: 400 / 10 rounds = 40 units
    full = PermutationShapExplainer(noisy, algorithm="mc", max_evals=2 + 400 * 4, random_state=0).fit(X)
    assert (full.explain(rows).diagnostics["n_evals"] == 2 + 400 * 4).all()
    for algorithm in ("owen", "owen_halved", "stratified", "exact"):
        with pytest.raises(ValueError, match="early stopping"):
            PermutationShapExplainer(noisy, algorithm=algorithm, max_evals=500, tol=0.1).fit(X)


def test_intervals_use_students_t_on_the_units_degrees_of_freedom():
    from scipy.stats import t as student_t

    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4))
    f = lambda Z: Z[:, 0] * Z[:, 1] * Z[:, 2] + Z[:, 3]  # noqa: E731
    explainer = PermutationShapExplainer(f, algorithm="owen", max_evals=200, random_state=0, background_parts=1)
    explanation = explainer.fit(X).explain(X[:2])
    half = explanation.upper_bounds - explanation.values
    np.testing.assert_allclose(half, student_t.ppf(0.975, 1) * explanation.error_std)  # two runs: 1 dof


def test_values_do_not_depend_on_batch_size_or_threads(diabetes):
    X, model = diabetes
    base = dict(algorithm="orthogonal", max_evals=300, background_size=15, random_state=3)
    reference = PermutationShapExplainer(model, **base).fit(X).explain(X[:7]).values
    for options in (dict(batch_size=15), dict(batch_size=1000), dict(n_jobs=2), dict(n_jobs=-1, batch_size=45)):
        values = PermutationShapExplainer(model, **base, **options).fit(X).explain(X[:7]).values
        np.testing.assert_array_equal(values, reference)
