"""The Shapley estimator registry: contents, minimum budgets and refusals, accounting, keyed rows, backends.

Properties every registered estimator must have, checked through the registry so that a newly
registered family is covered without a new test.
"""

import math

import numpy as np
import pytest

import sklearn_shapq.algorithms._exact as exact_module
import sklearn_shapq.algorithms._owen as owen_module
import sklearn_shapq.algorithms._stratified as stratified_module
import sklearn_shapq.algorithms._walk_algorithm as walk_module
from sklearn_shapq.algorithms import (
    SHAPLEY_ALGORITHMS,
    ExactAlgorithm,
    KernelShapAlgorithm,
    LeverageAlgorithm,
    LeverageControlVariateAlgorithm,
    OwenAlgorithm,
    OwenHalvedAlgorithm,
    PermutationWalkAlgorithm,
    ShapleyAlgorithm,
    ShapleyEstimate,
    StratifiedAlgorithm,
)
from sklearn_shapq.backends import ArrayBackend
from sklearn_shapq.samplers import ORDERING_SOURCES, row_keys

from brute_force import random_polynomial_model
from game_helpers import CountingModel, interventional_game, run_estimator

NAMES = sorted(SHAPLEY_ALGORITHMS)
CORNER_FREE = ("owen", "owen_halved", "stratified")
"""Estimators that send every coalition, ∅ and N included, through the game (no cached corners)."""
REGRESSIONS = ("leverage", "kernel", "leverage_cv")


def _minimum_by_hand(name, d):
    """The documented minimum budgets, written out."""
    if name == "exact":
        return 2**d
    if name in ("antithetic", "orthogonal"):  # v(∅), v(N) and one pair of orderings
        return 2 + 2 * (d - 1)
    if name in ORDERING_SOURCES:  # v(∅), v(N) and one ordering
        return 2 + (d - 1)
    if name in ("owen", "owen_halved"):  # two runs of two grid points of d + 1 evaluations
        return 2 * 2 * (d + 1)
    if name in REGRESSIONS:  # v(∅), v(N), a pair per jackknife group and 1.5 per unknown (or all)
        return 2 + 2 * min(max(10, math.ceil(1.5 * (d - 1))), 2 ** (d - 1) - 1)
    assert name == "stratified"  # two phase-1 samples of 2 evaluations in each of the d² strata, half the budget
    return 8 * d * d


def _budget(name, d):
    """A budget every estimator runs with on d players (a few units above its minimum; leverage: short of all pairs)."""
    if name in REGRESSIONS:
        return min(4 * _minimum_by_hand(name, d), 2 ** (d - 1) + 1)
    return max(4 * _minimum_by_hand(name, d), 60)


# ---------------------------------------------------------------- contents


def test_registry_contents():
    assert set(SHAPLEY_ALGORITHMS) == set(ORDERING_SOURCES) | {
        "exact",
        "kernel",
        "leverage",
        "leverage_cv",
        "owen",
        "owen_halved",
        "stratified",
    }
    for name in ORDERING_SOURCES:  # every ordering source has its walk, a class of its own
        assert issubclass(SHAPLEY_ALGORITHMS[name], PermutationWalkAlgorithm)
        assert SHAPLEY_ALGORITHMS[name].ordering_source is ORDERING_SOURCES[name]
    assert SHAPLEY_ALGORITHMS["exact"] is ExactAlgorithm
    assert SHAPLEY_ALGORITHMS["owen"] is OwenAlgorithm
    assert SHAPLEY_ALGORITHMS["owen_halved"] is OwenHalvedAlgorithm
    assert SHAPLEY_ALGORITHMS["stratified"] is StratifiedAlgorithm
    assert SHAPLEY_ALGORITHMS["leverage"] is LeverageAlgorithm
    assert SHAPLEY_ALGORITHMS["kernel"] is KernelShapAlgorithm
    assert SHAPLEY_ALGORITHMS["leverage_cv"] is LeverageControlVariateAlgorithm
    for name, cls in SHAPLEY_ALGORITHMS.items():  # one class per name, which it carries
        assert issubclass(cls, ShapleyAlgorithm) and cls.name == name
    assert len(set(SHAPLEY_ALGORITHMS.values())) == len(SHAPLEY_ALGORITHMS)
    efficient = {name for name, cls in SHAPLEY_ALGORITHMS.items() if cls.efficient}
    assert efficient == set(ORDERING_SOURCES) | {"exact", *REGRESSIONS}
    assert {name for name, cls in SHAPLEY_ALGORITHMS.items() if cls.supports_tol} == set(ORDERING_SOURCES)


# ---------------------------------------------------------------- budgets


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("d", [2, 3, 10])
def test_minimum_and_refusal_below_it(name, d):
    cls = SHAPLEY_ALGORITHMS[name]
    minimum = cls.minimum_evals(d)
    assert minimum == _minimum_by_hand(name, d)
    reason = cls.refusal(minimum - 1, d)
    assert isinstance(reason, str) and "below the minimum" in reason and name in reason
    assert cls.refusal(minimum, d) is None
    estimator = cls(minimum, d, 0)
    assert 0 < estimator.n_evals <= minimum


@pytest.mark.parametrize("name", NAMES)
def test_every_estimator_runs_at_its_minimum(name):
    d = 3
    rng = np.random.default_rng(0)
    f = random_polynomial_model(d, rng)
    game = interventional_game(f, rng.normal(size=(4, d)), rng.normal(size=(2, d)))
    budget = SHAPLEY_ALGORITHMS[name].minimum_evals(d)
    estimate, estimator = run_estimator(name, game, budget)
    assert np.isfinite(estimate.values).all()
    np.testing.assert_array_equal(estimate.n_evals, estimator.n_evals)
    np.testing.assert_array_equal(game.n_evals, estimator.n_evals)
    assert estimator.n_evals <= budget


@pytest.mark.parametrize(
    ("name", "max_evals", "d", "spent"),
    [
        ("exact", 64, 6, 64),
        ("exact", 10**6, 6, 64),  # exact spends 2^d whatever the budget
        ("mc", 100, 10, 2 + 10 * 9),
        ("sobol", 100, 10, 2 + 10 * 9),
        ("herding", 100, 10, 2 + 10 * 9),
        ("sbq", 100, 10, 2 + 10 * 9),
        ("antithetic", 100, 10, 2 + 10 * 9),
        ("orthogonal", 100, 10, 2 + 10 * 9),
        ("antithetic", 101, 11, 2 + 8 * 10),  # whole pairs: the odd remainder is left unused
        ("orthogonal", 2 + 9 * 10, 11, 2 + 8 * 10),
        ("mc", 2 + 9 * 10, 11, 2 + 9 * 10),
        ("herding", 2 + 100 * 3, 4, 2 + 24 * 3),  # all 4! orderings enumerate: no more are walked
        ("sbq", 2 + 100 * 3, 4, 2 + 24 * 3),
        ("sobol", 2 + 100 * 3, 4, 2 + 100 * 3),  # sobol does not enumerate
        ("owen", 100, 4, 2 * 10 * 5),  # 2 runs x 10 grid points x (d + 1)
        ("owen_halved", 100, 4, 2 * 10 * 5),
        ("owen", 95, 4, 2 * 9 * 5),
        ("owen_halved", 95, 4, 2 * 8 * 5),  # the grid rounded down to an even size
        ("stratified", 801, 10, 800),  # 2 evaluations per sample
    ],
)
def test_planned_spending(name, max_evals, d, spent):
    assert SHAPLEY_ALGORITHMS[name].refusal(max_evals, d) is None
    assert SHAPLEY_ALGORITHMS[name](max_evals, d, 0).n_evals == spent


def test_sampler_limits_are_refused_before_any_work():
    sbq = SHAPLEY_ALGORITHMS["sbq"]
    assert "herding" in sbq.refusal(2 + 2001 * 9, 10)  # greedy SBQ: at most 2000 orderings
    assert sbq.refusal(2 + 2000 * 9, 10) is None
    assert sbq.refusal(2 + 5000 * 3, 4) is None  # d! <= n: enumeration, no greedy steps
    herding = SHAPLEY_ALGORITHMS["herding"]
    assert "MiB" in herding.refusal(2 + 70_000 * 999, 1000)  # a shared design beyond 256 MiB
    assert "MiB" in SHAPLEY_ALGORITHMS["sobol"].refusal(2 + 70_000 * 999, 1000)
    assert SHAPLEY_ALGORITHMS["orthogonal"].refusal(2 + 70_000 * 999, 1000) is None  # per row
    assert "2^40" in SHAPLEY_ALGORITHMS["exact"].refusal(10**15, 40)
    assert "2^31" in SHAPLEY_ALGORITHMS["exact"].refusal(2**40, 31)


# ---------------------------------------------------------------- accounting


@pytest.mark.parametrize(
    ("name", "batch_size"),
    [
        ("exact", "auto"),
        ("antithetic", 97),
        ("mc", 1),
        ("orthogonal", 50),
        ("sobol", "auto"),
        ("herding", 40),
        ("sbq", "auto"),
        ("owen", 30),
        ("owen_halved", "auto"),
        ("stratified", 26),
    ],
)
def test_model_sees_exactly_the_reported_rows(name, batch_size):
    d, n_background, n_rows, max_evals = 7, 13, 5, 400
    rng = np.random.default_rng(0)
    model = CountingModel(d)
    game = interventional_game(
        model, rng.normal(size=(n_background, d)), rng.normal(size=(n_rows, d)), batch_size=batch_size
    )
    assert model.rows == n_background  # v(∅) of the walks comes from the background, once
    model.rows = model.calls = 0
    estimate, estimator = run_estimator(name, game, max_evals)
    assert game.n_model_rows == model.rows and game.n_model_calls == model.calls
    np.testing.assert_array_equal(game.n_evals, estimate.n_evals)  # reported = counted by the game
    spent = int(estimate.n_evals[0])
    assert (estimate.n_evals == spent).all() and spent == estimator.n_evals
    assert max_evals - 4 * (d + 1) < spent <= max_evals or name == "exact"  # rounding to whole units
    if name in CORNER_FREE:  # every coalition, ∅ and N included, costs N model rows
        assert model.rows == n_rows * spent * n_background
    else:  # v(N) is one model row per explained row; v(∅) came from the background
        assert model.rows == n_rows * ((spent - 2) * n_background + 1)
    if batch_size != "auto":
        assert model.calls >= model.rows / max(batch_size, n_background)


# ---------------------------------------------------------------- keyed rows: no dependence on company


@pytest.mark.parametrize("name", NAMES)
def test_a_rows_values_depend_on_its_key_alone(name):
    d = 5
    rng = np.random.default_rng(3)
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(6, d)), rng.normal(size=(4, d))
    X[2] = X[0]  # a repeated row
    budget = _budget(name, d)
    together, _ = run_estimator(name, interventional_game(f, background, X), budget, seed=11)
    keys = row_keys(11, X)
    assert keys[0] == keys[2] and len(set(keys.tolist())) == 3
    np.testing.assert_array_equal(together.values[0], together.values[2])  # equal rows, equal values
    np.testing.assert_array_equal(together.stderr[0], together.stderr[2])
    for r in range(4):  # alone, or in another order, or another block
        alone, _ = run_estimator(name, interventional_game(f, background, X[r : r + 1]), budget, seed=11)
        np.testing.assert_array_equal(alone.values[0], together.values[r])
        np.testing.assert_array_equal(alone.stderr[0], together.stderr[r])
    game = interventional_game(f, background, X)
    reordered, _ = run_estimator(name, game, budget, seed=11, games=[3, 1], keys=keys[[3, 1]])
    np.testing.assert_array_equal(reordered.values, together.values[[3, 1]])
    other_seed, _ = run_estimator(name, interventional_game(f, background, X), budget, seed=12)
    if name != "exact":
        assert not np.array_equal(other_seed.values, together.values)


@pytest.mark.parametrize("name", NAMES)
def test_smaller_chunks_change_nothing(name, monkeypatch):
    d = 5
    rng = np.random.default_rng(4)
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(6, d)), rng.normal(size=(3, d))
    budget = _budget(name, d) * 3
    reference, _ = run_estimator(name, interventional_game(f, background, X), budget, seed=2)
    monkeypatch.setattr(walk_module, "ROW_MASK_BYTES", 1)  # one unit per chunk
    monkeypatch.setattr(owen_module, "_ROW_MASK_BYTES", 1)  # one grid point per chunk
    monkeypatch.setattr(stratified_module, "_ROW_MASK_BYTES", 7 * d * 8)  # seven samples per chunk
    monkeypatch.setattr(exact_module, "_CODE_CHUNK", 3)  # three coalitions per chunk
    chunked, _ = run_estimator(name, interventional_game(f, background, X), budget, seed=2)
    np.testing.assert_allclose(chunked.values, reference.values, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(chunked.stderr, reference.stderr, rtol=1e-9, atol=1e-13)
    np.testing.assert_array_equal(chunked.n_evals, reference.n_evals)


@pytest.mark.parametrize("name", NAMES)
def test_generic_array_backend_gives_the_same_estimates(name):
    """The array-namespace code a GPU backend runs (xp = numpy) against the numba CPU backend."""
    d = 4
    rng = np.random.default_rng(5)
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(5, d)), rng.normal(size=(3, d))
    # regressions: 6 of the 7 pairs, so that every leave-one-group-out system is regular (with 3
    # pairs it is singular up to the ridge, which magnifies the kernels' other order of additions)
    budget = 14 if name in REGRESSIONS else _budget(name, d)
    cpu, _ = run_estimator(name, interventional_game(f, background, X), budget, seed=1)
    twin_game = interventional_game(f, background, X, backend=ArrayBackend(np, "twin"))
    twin, _ = run_estimator(name, twin_game, budget, seed=1)
    np.testing.assert_allclose(twin.values, cpu.values, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(twin.stderr, cpu.stderr, rtol=1e-9, atol=1e-13)
    np.testing.assert_array_equal(twin.dof, cpu.dof)


@pytest.mark.parametrize("name", NAMES)
def test_estimate_shapes_and_outputs(name):
    """(B, d, k) values; an output's estimate is that of its own single-output game (same draws)."""
    d = 4
    rng = np.random.default_rng(6)
    fs = [random_polynomial_model(d, rng) for _ in range(2)]
    background, X = rng.normal(size=(5, d)), rng.normal(size=(3, d))

    def both(Z):
        return np.column_stack([g(Z) for g in fs])

    budget = _budget(name, d)
    estimate, _ = run_estimator(name, interventional_game(both, background, X), budget, seed=4)
    assert isinstance(estimate, ShapleyEstimate)
    assert estimate.values.shape == estimate.stderr.shape == (3, d, 2)
    assert estimate.dof.shape == estimate.n_evals.shape == (3,)
    if name == "stratified":  # phase 2 is allocated on the variance summed over the outputs
        return
    for j, g in enumerate(fs):
        single, _ = run_estimator(name, interventional_game(g, background, X), budget, seed=4)
        np.testing.assert_allclose(estimate.values[..., j], single.values[..., 0], rtol=1e-12, atol=1e-13)


def test_dof_of_each_family():
    d = 4
    rng = np.random.default_rng(7)
    f = random_polynomial_model(d, rng)
    game_args = (f, rng.normal(size=(5, d)), rng.normal(size=(2, d)))
    expected = {
        "exact": math.inf,
        "stratified": math.inf,
        "owen": 1.0,  # two runs
        "owen_halved": 1.0,
        "mc": 19.0,  # 20 orderings, one unit each
        "antithetic": 9.0,  # 10 pairs
        "orthogonal": 3.0,  # blocks of 2 (d − 1) = 6 orderings: 6 + 6 + 6 + 2
        "sobol": 19.0,
    }
    for name, dof in expected.items():
        budget = 2 + 20 * (d - 1) if name in ORDERING_SOURCES else _budget(name, d)
        estimate, _ = run_estimator(name, interventional_game(*game_args), budget)
        np.testing.assert_array_equal(estimate.dof, dof)
    # fewer than two blocks fit: each reversed pair is a unit
    estimate, _ = run_estimator("orthogonal", interventional_game(*game_args), 2 + 10 * (d - 1))
    np.testing.assert_array_equal(estimate.dof, 4.0)


@pytest.mark.parametrize("name", NAMES)
def test_additive_games_are_exact(name):
    rng = np.random.default_rng(1)
    d = 6
    coef = rng.normal(size=d)
    background, X = rng.normal(size=(7, d)), rng.normal(size=(4, d))
    budget = 2**d if name == "exact" else max(SHAPLEY_ALGORITHMS[name].minimum_evals(d), 60)
    estimate, _ = run_estimator(name, interventional_game(lambda Z: Z @ coef, background, X), budget)
    np.testing.assert_allclose(estimate.values[..., 0], coef * (X - background.mean(0)), atol=1e-10)
    np.testing.assert_allclose(estimate.stderr, 0.0, atol=1e-10)


def test_large_batches_few_model_calls():
    d, n_background, n_rows = 10, 50, 40
    model = CountingModel(d)
    rng = np.random.default_rng(0)
    game = interventional_game(model, rng.normal(size=(n_background, d)), rng.normal(size=(n_rows, d)))
    model.calls = 0
    run_estimator("antithetic", game, 200)
    # 40 rows x 198 coalitions x 50 background rows = 396,000 model rows fit one auto batch (plus v(N))
    assert model.calls <= 3


@pytest.mark.parametrize("name", ["antithetic", "owen_halved", "stratified"])
def test_threaded_model_calls_change_nothing(name):
    d = 6
    rng = np.random.default_rng(8)
    background, X = rng.normal(size=(20, d)), rng.normal(size=(9, d))
    budget = _budget(name, d)
    results = []
    for n_jobs, batch_size in ((1, "auto"), (2, 200), (3, "auto")):
        model = CountingModel(d)
        with interventional_game(model, background, X, batch_size=batch_size, n_jobs=n_jobs) as game:
            model.rows = 0
            estimate, _ = run_estimator(name, game, budget, seed=1)
            assert model.rows == game.n_model_rows
        results.append(estimate.values)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_cuda_backend_gives_the_same_estimates(name):
    """Keyed draws are made on the host: a row's estimate on the GPU is its CPU estimate (to rounding)."""
    from sklearn_shapq.backends import resolve_backend

    def f(Z):  # array-namespace neutral: numpy on the CPU, cupy on the GPU
        return Z[:, 0] * Z[:, 1] * Z[:, 2] + 0.5 * Z[:, 3] - Z[:, 1] * Z[:, 4]

    d = 5
    rng = np.random.default_rng(9)
    background, X = rng.normal(size=(6, d)), rng.normal(size=(4, d))
    budget = _budget(name, d)
    cpu, _ = run_estimator(name, interventional_game(f, background, X), budget, seed=3)
    backend = resolve_backend("cuda")
    gpu_game = interventional_game(f, background, X, backend=backend)
    gpu, _ = run_estimator(name, gpu_game, budget, seed=3)
    np.testing.assert_allclose(backend.to_numpy(gpu.values), cpu.values, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(backend.to_numpy(gpu.stderr), cpu.stderr, rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(gpu.n_evals, cpu.n_evals)
    np.testing.assert_array_equal(gpu_game.n_evals, cpu.n_evals)


def test_an_ordering_source_registered_later_is_a_shapley_algorithm_of_its_name():
    from sklearn_shapq import register
    from sklearn_shapq.samplers._sources import MonteCarloSource

    @register
    class Reversed(MonteCarloSource):
        name = "test_reversed"

    try:
        assert ORDERING_SOURCES["test_reversed"] is Reversed
        walk = SHAPLEY_ALGORITHMS["test_reversed"]
        assert issubclass(walk, PermutationWalkAlgorithm) and walk.ordering_source is Reversed
        assert "test_reversed" in list(SHAPLEY_ALGORITHMS)
        assert walk.minimum_evals(5) == 2 + 4
        estimator = walk(50, 5, 0)
        assert isinstance(estimator.source, Reversed) and estimator.name == "test_reversed"
    finally:
        assert ORDERING_SOURCES.unregister("test_reversed") is Reversed
    assert "test_reversed" not in SHAPLEY_ALGORITHMS and "test_reversed" not in list(SHAPLEY_ALGORITHMS)
    with pytest.raises(KeyError, match="No Shapley algorithm is registered as 'test_reversed'; the registered names"):
        SHAPLEY_ALGORITHMS["test_reversed"]


def test_one_way_to_register_and_its_refusals():
    from sklearn_shapq import register
    from sklearn_shapq.algorithms import TOPK_ALGORITHMS
    from sklearn_shapq.algorithms._topk_permutation import ApproShapley
    from sklearn_shapq.samplers._sources import MonteCarloSource

    with pytest.raises(TypeError, match="has no registry"):
        register(object)
    with pytest.raises(TypeError, match="must set its own class attribute `name`"):

        @register
        class Unnamed(LeverageAlgorithm):  # inherits "leverage": a variant needs its own name
            pass

    with pytest.raises(TypeError, match="is abstract"):

        @register
        class Abstract(ShapleyAlgorithm):
            name = "test_abstract"

    with pytest.raises(ValueError, match="'exact' is already the Shapley algorithm"):

        @register
        class Exact(ExactAlgorithm):
            name = "exact"

    with pytest.raises(ValueError, match="'mc' is already the Shapley algorithm derived from ordering source 'mc'"):

        @register
        class NotAWalk(ExactAlgorithm):
            name = "mc"

    with pytest.raises(ValueError, match="'exact' is already the Shapley algorithm"):  # a source's walk takes its name

        @register
        class Source(MonteCarloSource):
            name = "exact"

    with pytest.raises(ValueError, match="'auto' is reserved"):

        @register
        class Auto(ExactAlgorithm):
            name = "auto"

    assert register(ExactAlgorithm) is ExactAlgorithm  # registering the same class again changes nothing
    with pytest.raises(ValueError, match="derived from the ordering source"):
        SHAPLEY_ALGORITHMS.unregister("mc")
    with pytest.raises(KeyError, match="No top-k algorithm is registered as 'nope'"):
        TOPK_ALGORITHMS.unregister("nope")

    @register
    class Walks(ApproShapley):  # the registries are separate: a top-k algorithm may share a Shapley name
        name = "exact"

    try:
        assert TOPK_ALGORITHMS["exact"] is Walks and SHAPLEY_ALGORITHMS["exact"] is ExactAlgorithm
    finally:
        TOPK_ALGORITHMS.unregister("exact")
    assert set(SHAPLEY_ALGORITHMS) == set(NAMES) and "exact" not in TOPK_ALGORITHMS
