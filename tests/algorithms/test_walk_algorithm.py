"""Permutation-walk estimators of every registered sampler: exactness, efficiency, unbiasedness, errors, tol.

Repeated runs are one explained row repeated under distinct row keys (per-row samplers: one call,
every row walks its own orderings) or under distinct seeds (shared designs are built per call).
"""

import pickle

import numpy as np
import pytest

from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS, PermutationWalkAlgorithm
from sklearn_shapq.algorithms._walk_algorithm import TOL_MIN_UNITS
from sklearn_shapq.samplers import ORDERING_SOURCES, row_keys
from sklearn_shapq.samplers._sources import DesignSource

from brute_force import random_polynomial_model
from game_helpers import interventional_game, pairwise_model, run_estimator, truth

WALKS = tuple(ORDERING_SOURCES)
PER_ROW = tuple(name for name in WALKS if not issubclass(ORDERING_SOURCES[name], DesignSource))
DESIGNS = tuple(name for name in WALKS if issubclass(ORDERING_SOURCES[name], DesignSource))


@pytest.fixture(scope="module")
def polynomial():
    rng = np.random.default_rng(5)
    d = 5
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(8, d)), rng.normal(size=(3, d))
    return f, background, X, truth(f, X, background)


def repeated_runs(name, f, background, x, budget, n_runs, **options):
    """n_runs independent estimates (values, stderr) of the single row x (1, d)."""
    if name in PER_ROW:
        keys = row_keys(99, np.arange(n_runs, dtype=float)[:, None])  # well-mixed 64-bit keys
        game = interventional_game(f, background, np.repeat(x, n_runs, axis=0))
        estimate, _ = run_estimator(name, game, budget, seed=1, keys=keys, **options)
        return estimate.values[..., 0], estimate.stderr[..., 0]
    runs = [
        run_estimator(name, interventional_game(f, background, x), budget, seed=s, **options)[0] for s in range(n_runs)
    ]
    return np.array([r.values[0, :, 0] for r in runs]), np.array([r.stderr[0, :, 0] for r in runs])


def test_the_sampler_split():
    assert set(PER_ROW) == {"mc", "antithetic", "orthogonal"}
    assert set(DESIGNS) == {"sobol", "herding", "sbq"}


@pytest.mark.parametrize("name", WALKS)
def test_each_source_has_one_walk_class_of_its_name(name):
    walk = SHAPLEY_ALGORITHMS[name]
    assert issubclass(walk, PermutationWalkAlgorithm) and walk is not PermutationWalkAlgorithm
    assert walk.name == name and walk.ordering_source is ORDERING_SOURCES[name]
    assert SHAPLEY_ALGORITHMS[name] is walk  # made once, then looked up
    assert walk.draws_per_game() == (name in PER_ROW)  # shared designs: every game walks the same orderings
    assert walk.minimum_evals(6) == 2 + ORDERING_SOURCES[name].orderings_per_step * 5
    estimator = walk(200, 6, 0)
    assert type(estimator.source) is ORDERING_SOURCES[name] and estimator.name == name
    assert pickle.loads(pickle.dumps(walk)) is walk  # pickled as the walk over its source
    assert type(pickle.loads(pickle.dumps(estimator))) is walk


# ---------------------------------------------------------------- exactness and efficiency


@pytest.mark.parametrize("name", WALKS)
@pytest.mark.parametrize("budget", ["minimum", 30, 101])
def test_walks_are_exactly_efficient(name, budget, polynomial):
    f, background, X, _ = polynomial
    d = X.shape[1]
    budget = SHAPLEY_ALGORITHMS[name].minimum_evals(d) if budget == "minimum" else budget
    estimate, _ = run_estimator(name, interventional_game(f, background, X), budget)
    np.testing.assert_allclose(estimate.values[..., 0].sum(axis=1), f(X) - f(background).mean(), atol=1e-10, rtol=0)


@pytest.mark.parametrize("name", WALKS)
def test_additive_games_are_exact_with_zero_spread(name):
    rng = np.random.default_rng(1)
    d = 6
    coef = rng.normal(size=d)
    background, X = rng.normal(size=(7, d)), rng.normal(size=(4, d))
    estimate, _ = run_estimator(name, interventional_game(lambda Z: np.sin(Z) @ coef, background, X), 60)
    expected = (np.sin(X) - np.sin(background).mean(0)) * coef
    np.testing.assert_allclose(estimate.values[..., 0], expected, atol=1e-12)
    np.testing.assert_allclose(estimate.stderr, 0.0, atol=1e-12)


@pytest.mark.parametrize("name", ["mc", "antithetic"])
def test_additive_games_are_exact_with_a_single_unit(name):
    d = 9
    coef = np.random.default_rng(0).normal(size=d)
    rng = np.random.default_rng(1)
    background, X = rng.normal(size=(20, d)), rng.normal(size=(5, d))
    budget = SHAPLEY_ALGORITHMS[name].minimum_evals(d)  # one ordering, or one pair
    estimate, _ = run_estimator(name, interventional_game(lambda Z: np.sin(Z) @ coef, background, X), budget)
    np.testing.assert_allclose(estimate.values[..., 0], (np.sin(X) - np.sin(background).mean(0)) * coef, atol=1e-12)
    assert np.isnan(estimate.stderr).all()  # a single unit has no spread to estimate an error from


@pytest.mark.parametrize("name", ["antithetic", "orthogonal"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_pairs", [1, 3])
def test_pairwise_games_are_exact_with_reversal_pairs(name, seed, n_pairs):
    rng = np.random.default_rng(seed)
    d = 8 if n_pairs == 1 else 6
    f = pairwise_model(d, rng) if seed else random_polynomial_model(d, rng, order=2, n_terms=20)
    background, X = rng.normal(size=(5, d)), rng.normal(size=(3, d))
    budget = 2 + 2 * n_pairs * (d - 1)
    estimate, estimator = run_estimator(name, interventional_game(f, background, X), budget, seed=seed)
    assert estimator.n_evals == budget
    np.testing.assert_allclose(estimate.values[..., 0], truth(f, X, background), atol=1e-10)


@pytest.mark.parametrize("name", WALKS)
def test_dummy_and_symmetric_players(name):
    d = 5

    def f(Z):  # players 0 and 1 symmetric; player 4 a dummy; interactions of order two only
        return Z[:, 0] * Z[:, 1] + Z[:, 0] + Z[:, 1] + Z[:, 2] * Z[:, 3] ** 2

    x = np.array([[1.5, 1.5, 0.3, -2.0, 7.0]])
    estimate, _ = run_estimator(name, interventional_game(f, np.zeros((1, d)), x), 100)
    phi = estimate.values[0, :, 0]
    assert phi[4] == 0.0  # every gain of a dummy is exactly 0
    if name in ("antithetic", "orthogonal"):  # exact for pairwise games, so symmetric
        assert phi[0] == pytest.approx(phi[1], abs=1e-12)


def test_a_third_order_term_breaks_pairwise_exactness(polynomial):
    f, background, X, expected = polynomial
    for name in ("antithetic", "orthogonal"):  # guards against a test that cannot fail
        estimate, _ = run_estimator(name, interventional_game(f, background, X), 2 + 4 * 4)
        assert np.abs(estimate.values[..., 0] - expected).max() > 1e-6


@pytest.mark.parametrize("name", WALKS)
@pytest.mark.parametrize("d", [2, 3])
def test_small_d(name, d):
    rng = np.random.default_rng(d)
    f = pairwise_model(d, rng)
    background, X = rng.normal(size=(4, d)), rng.normal(size=(3, d))
    estimate, _ = run_estimator(name, interventional_game(f, background, X), 40)
    values = estimate.values[..., 0]
    enumerated = name in ("herding", "sbq")  # 40 evaluations pay for all d! orderings
    if (d == 2 and name != "mc") or name in ("antithetic", "orthogonal") or enumerated:
        np.testing.assert_allclose(values, truth(f, X, background), atol=1e-10)
    np.testing.assert_allclose(values.sum(axis=1), f(X) - f(background).mean(), atol=1e-10)


@pytest.mark.parametrize(("name", "d", "budget"), [("sbq", 4, 182), ("herding", 4, 182), ("herding", 3, 500)])
def test_complete_designs_are_exact_with_zero_error(name, d, budget):
    rng = np.random.default_rng(0)
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(6, d)), rng.normal(size=(3, d))
    for tol in (None, 1e-6):
        estimate, estimator = run_estimator(name, interventional_game(f, background, X), budget, tol=tol)
        np.testing.assert_allclose(estimate.values[..., 0], truth(f, X, background), atol=1e-10)
        assert (estimate.stderr == 0).all()
        # all d! orderings and no more are walked, with or without a tolerance
        np.testing.assert_array_equal(estimate.n_evals, 2 + np.prod(range(1, d + 1)) * (d - 1))
        assert estimator.n_evals == estimate.n_evals[0]


def test_sobol_with_two_features_is_exact_with_zero_error():
    """At d = 2 an even number of alternating orderings weighs both permutations ½: exact, zero error."""
    rng = np.random.default_rng(0)
    f = random_polynomial_model(2, rng)
    background, X = rng.normal(size=(6, 2)), rng.normal(size=(3, 2))
    estimate, _ = run_estimator("sobol", interventional_game(f, background, X), 40)  # 38 orderings
    np.testing.assert_allclose(estimate.values[..., 0], truth(f, X, background), atol=1e-10)
    assert (estimate.stderr == 0).all()
    odd, _ = run_estimator("sobol", interventional_game(f, background, X), 2 + 37)  # 37: not exact
    assert (odd.stderr > 0).all()
    stopping, _ = run_estimator("sobol", interventional_game(f, background, X), 2 + 200, tol=1e-9)
    np.testing.assert_allclose(stopping.values[..., 0], truth(f, X, background), atol=1e-10)
    assert (stopping.n_evals < 2 + 200).all()  # an exact check stops the walk


# ---------------------------------------------------------------- unbiasedness and errors


@pytest.mark.slow
@pytest.mark.parametrize("name", WALKS)
def test_unbiased_over_independent_runs(name, polynomial):
    f, background, X, expected = polynomial
    values, _ = repeated_runs(name, f, background, X[:1], 2 + 4 * 4, 150)  # 4 orderings
    sem = values.std(0, ddof=1) / np.sqrt(len(values))
    assert (np.abs(values.mean(0) - expected[0]) <= 4 * sem + 1e-12).all()
    assert (values.std(0) > 0).all()  # independent runs, not copies


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mc", "antithetic"])
def test_estimates_are_unbiased_and_errors_calibrated(name):
    rng = np.random.default_rng(10)
    d = 6
    f = random_polynomial_model(d, rng, order=4)
    background, x = rng.normal(size=(10, d)), rng.normal(size=(1, d))
    expected = truth(f, x, background)[0]
    values, stderr = repeated_runs(name, f, background, x, 102, 200)
    spread = values.std(0)
    # unbiased: the mean of 200 runs is within 4 standard errors of the exact value
    assert np.all(np.abs(values.mean(0) - expected) <= 4 * spread / np.sqrt(200) + 1e-12)
    # the reported standard error matches the spread across runs (within 25%)
    np.testing.assert_allclose(np.sqrt((stderr**2).mean(0)), spread, rtol=0.25)


@pytest.mark.slow
def test_block_standard_errors_are_calibrated():
    """Errors over independent orthogonal blocks cover the truth as a t interval with 9 dof would."""
    rng = np.random.default_rng(2024)
    d = 5
    hidden, bias, out = 0.8 * rng.normal(size=(d, 16)), 0.3 * rng.normal(size=16), rng.normal(size=16)

    def f(Z):  # a small tanh network: interactions of every order
        return np.tanh(Z @ hidden + bias) @ out

    background, X = rng.normal(size=(8, d)), rng.normal(size=(3, d))
    expected = truth(f, X, background)
    covered = []
    for x, phi in zip(X, expected, strict=True):
        values, stderr = repeated_runs("orthogonal", f, background, x[None], 2 + 80 * 4, 60)
        covered.append(np.abs(values - phi) <= 1.96 * stderr)
    assert 0.85 <= np.mean(covered) <= 0.99  # ten blocks of 8 orderings: about 0.92 expected


@pytest.mark.slow
@pytest.mark.parametrize("name", DESIGNS)
def test_shared_design_errors_are_conservative(name, polynomial):
    f, background, X, expected = polynomial
    budget = 2 + 40 * 4
    first, _ = run_estimator(name, interventional_game(f, background, X), budget, seed=0)
    assert (first.stderr > 0).all()
    errors = []
    for seed in range(30):
        estimate, _ = run_estimator(name, interventional_game(f, background, X), budget, seed=seed)
        errors.append((estimate.values[..., 0] - expected) ** 2)
    rmse = np.sqrt(np.mean(errors, axis=0))
    assert np.median(first.stderr[..., 0] / rmse) >= 0.8  # reported errors do not understate


# ---------------------------------------------------------------- early stopping


@pytest.mark.parametrize("name", WALKS)
def test_early_stopping(name, polynomial):
    f, background, X, _ = polynomial
    d = X.shape[1]
    budget = 2 + 200 * 4  # orthogonal: 25 blocks, enough to pass the 10-unit minimum

    def run(tol):
        return run_estimator(name, interventional_game(f, background, X), budget, seed=0, tol=tol)

    loose, estimator = run(1e3)
    assert (loose.n_evals < budget).all() and estimator.n_evals <= budget
    assert (loose.stderr < 1e3).all()
    assert (loose.dof >= TOL_MIN_UNITS - 1).all()
    bounds = estimator.source.bounds(0, estimator.source.n_units)
    np.testing.assert_array_equal(loose.n_evals, 2 + (d - 1) * bounds[loose.dof.astype(int) + 1])
    np.testing.assert_allclose(loose.values[..., 0].sum(1), f(X) - f(background).mean(), atol=1e-10)
    strict, _ = run(1e-9)
    full, _ = run(None)
    useful = ORDERING_SOURCES[name].useful_orderings(200, d)  # herding and sbq: all 5! orderings, no more
    assert useful == (120 if name in ("herding", "sbq") else 200)
    np.testing.assert_array_equal(full.n_evals, 2 + useful * (d - 1))
    # a row stops early only when its errors really are below tol
    stopped = strict.n_evals < full.n_evals
    assert (strict.stderr[stopped] < 1e-9).all()
    np.testing.assert_allclose(strict.values[~stopped], full.values[~stopped], atol=1e-12)


def test_early_stopping_stops_rows_independently():
    """An additive row stops at the first check; a row with interactions walks on."""
    d = 4
    background = np.zeros((1, d))

    def f(Z):
        return Z @ [1.0, 2.0, 3.0, 4.0] + 5.0 * Z[:, 0] * Z[:, 1] * Z[:, 2]

    X = np.array([[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]])  # the product vanishes in row 0
    estimate, _ = run_estimator("mc", interventional_game(f, background, X), 2 + 200 * (d - 1), tol=1e-6)
    assert estimate.n_evals[0] == 2 + 20 * (d - 1)  # the first check: 200 / 10 orderings
    assert estimate.n_evals[1] == 2 + 200 * (d - 1)
    np.testing.assert_allclose(estimate.values[0, :, 0], [1.0, 0.0, 3.0, 4.0], atol=1e-12)


def test_early_stopping_waits_for_ten_units():
    """Two agreeing units must not stop a row: their error estimate is too noisy."""
    rng = np.random.default_rng(0)
    d = 4
    f = random_polynomial_model(d, rng)
    background, x = rng.normal(size=(6, d)), rng.normal(size=(1, d))
    keys = row_keys(5, np.arange(50, dtype=float)[:, None])
    game = interventional_game(f, background, np.repeat(x, 50, axis=0))
    estimate, _ = run_estimator("antithetic", game, 2 + 40 * 3, keys=keys, tol=10.0)
    np.testing.assert_array_equal(estimate.n_evals, 2 + 20 * 3)  # stopped at the first check: 10 pairs
    np.testing.assert_array_equal(estimate.dof, TOL_MIN_UNITS - 1)


def test_tol_is_ignored_by_estimators_without_early_stopping():
    assert not SHAPLEY_ALGORITHMS["owen"].supports_tol and not SHAPLEY_ALGORITHMS["stratified"].supports_tol
    assert not SHAPLEY_ALGORITHMS["exact"].supports_tol


# ---------------------------------------------------------------- weighted designs


def test_sbq_weights_enter_the_estimate(polynomial):
    """SBQ's weights are not uniform: its estimate is Σ_u w_u ū_u, still exactly efficient."""
    f, background, X, _ = polynomial
    d = X.shape[1]
    estimate, estimator = run_estimator("sbq", interventional_game(f, background, X), 2 + 30 * (d - 1), seed=3)
    source = estimator.source
    assert not source.uniform_weights
    weights = source.unit_weights(source.n_units)
    assert not np.allclose(weights, weights[0])
    orderings = source.orderings(row_keys(3, X), 0, source.n_units, interventional_game(f, background, X).backend)
    by_hand = np.zeros((3, d))
    for b, x in enumerate(X):
        for ordering, w in zip(orderings[b], weights, strict=True):
            coalition = []
            for player in ordering:
                before = truth_value(f, x, background, coalition)
                coalition = coalition + [int(player)]
                by_hand[b, player] += w * (truth_value(f, x, background, coalition) - before)
    np.testing.assert_allclose(estimate.values[..., 0], by_hand, atol=1e-12)


def truth_value(f, x, background, coalition):
    rows = background.copy()
    rows[:, coalition] = x[coalition]
    return f(rows).mean()
