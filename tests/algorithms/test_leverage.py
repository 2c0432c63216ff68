"""Leverage SHAP and paired KernelSHAP against brute force.

Exactness (all pairs; order-2 games), efficiency, keys, calibration, and how each places its pairs.
"""

from math import comb

import numpy as np
import pytest

from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS, RowParts, leverage_pairs
from sklearn_shapq.algorithms._leverage import (
    ENUMERATED_CLASS_SIZE,
    class_capacities,
    class_coalitions,
    shapley_kernel_sizes,
)
from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.games import CallableGame, InterventionalGame, make_model_function
from sklearn_shapq.samplers import row_keys, split_keys

from brute_force import brute_force_shapley
from game_helpers import interventional_game, pairwise_model, polynomial_setup, run_estimator, truth
from strict_twin import StrictBackend

REGRESSIONS = ["leverage", "kernel", "leverage_cv"]
"""The samplers that regress on complementary pairs (sizes differ; leverage_cv adds a control variate)."""


@pytest.mark.parametrize("d", [2, 3, 6, 7, 12, 40])
@pytest.mark.parametrize("n_pairs", [1, 5, 10, 37, 200])
def test_pairs_give_every_size_the_same_count_up_to_capacity(d, n_pairs):
    capacity = class_capacities(d)
    n_pairs = min(n_pairs, 2 ** (d - 1) - 1)
    pairs = leverage_pairs(n_pairs, d)
    assert pairs.sum() == n_pairs and (pairs <= capacity).all() and (pairs >= 0).all()
    per_size = np.where(2 * np.arange(1, d // 2 + 1) == d, 2 * pairs, pairs)  # coalitions of size t
    open_sizes = per_size[pairs < capacity]
    if open_sizes.size:  # sizes below capacity: within one pair of each other, at least every full size
        assert open_sizes.max() - open_sizes.min() <= 2
        assert (per_size[pairs == capacity] <= open_sizes.max()).all()


@pytest.mark.parametrize("d", [6, 7, 12, 40])
@pytest.mark.parametrize("n_pairs", [10, 37, 200])
def test_kernel_pairs_follow_the_shapley_kernel_up_to_capacity(d, n_pairs):
    capacity = class_capacities(d)
    n_pairs = min(n_pairs, 2 ** (d - 1) - 1)
    pairs = leverage_pairs(n_pairs, d, shapley_kernel_sizes(d))
    assert pairs.sum() == n_pairs and (pairs <= capacity).all()
    per_size = np.where(2 * np.arange(1, d // 2 + 1) == d, 2 * pairs, pairs)  # coalitions of size t
    open_classes = pairs < capacity
    if open_classes.sum() > 1:  # coalitions per size proportional to 1 / (t (d − t)), within rounding
        ratio = per_size[open_classes] / shapley_kernel_sizes(d)[open_classes]
        assert ratio.max() - ratio.min() <= 2.0 / shapley_kernel_sizes(d)[open_classes].min()
    if open_classes[0]:
        assert pairs[0] == pairs.max()  # the smallest sizes get the most


@pytest.mark.parametrize("d", [24, 30])
@pytest.mark.parametrize("short", [0, 1, 17])
def test_kernel_pairs_sum_to_the_budget_up_to_every_pair(d, short):
    """Near every pair the kernel's small shares need coalitions per size far above 2 n_pairs:
    the bisection must start where every class is full."""
    n_pairs = 2 ** (d - 1) - 1 - short
    pairs = leverage_pairs(n_pairs, d, shapley_kernel_sizes(d))
    assert pairs.sum() == n_pairs and (pairs <= class_capacities(d)).all()


def test_capacities_are_the_pairs_there_are():
    for d in range(2, 12):
        assert class_capacities(d).sum() == 2 ** (d - 1) - 1
        assert class_capacities(d)[-1] == comb(d, d // 2) / (2 if d % 2 == 0 else 1)


@pytest.mark.parametrize(("d", "t", "n"), [(6, 2, 7), (6, 3, 4), (9, 4, 60), (40, 3, 25)])
def test_class_draws_have_the_class_size_and_no_repeated_pair(d, t, n):
    keys = row_keys(0, np.arange(3.0)[:, None])
    sets = class_coalitions(keys, d, one_class(d, t, n))
    assert sets.shape == (3, n, d) and (sets.sum(-1) == t).all()
    if 2 * t == d:
        assert sets[:, :, 0].all()  # player 0 in S at t = d / 2: S and its complement never both drawn
    if comb(d, t) <= ENUMERATED_CLASS_SIZE:
        for row in sets:
            assert len({m.tobytes() for m in row}) == n  # without replacement
    assert not np.array_equal(sets[0], sets[1])  # rows draw their own


def one_class(d: int, t: int, n: int) -> np.ndarray:
    """Pairs per class: n of class t, none of the others."""
    pairs = np.zeros(d // 2, dtype=np.int64)
    pairs[t - 1] = n
    return pairs


@pytest.mark.parametrize("d", [9, 40])
def test_a_class_draws_the_same_coalitions_alone_or_with_others(d):
    """Each class is keyed by (row key, t): drawing the classes together (large ones in one kernel
    call) gives each the coalitions it draws alone, one class after another."""
    keys = row_keys(3, np.arange(4.0)[:, None])
    pairs = np.zeros(d // 2, dtype=np.int64)
    pairs[[0, 1, 2, d // 2 - 1]] = [d, 5, 7, 6]  # the first listed whole (d pairs), the others drawn
    together = class_coalitions(keys, d, pairs)
    alone = [class_coalitions(keys, d, one_class(d, t + 1, n)) for t, n in enumerate(pairs) if n]
    np.testing.assert_array_equal(together, np.concatenate(alone, axis=1))
    assert together.shape == (4, pairs.sum(), d)
    sizes = np.repeat(np.flatnonzero(pairs) + 1, pairs[pairs > 0])
    np.testing.assert_array_equal(together.sum(-1), np.broadcast_to(sizes, (4, sizes.size)))


def test_drawn_pairs_come_in_random_order_so_that_the_jackknife_groups_are_a_random_partition():
    """The groups take the pairs round-robin; in listing order, the first listed coalition would
    always open its row's draws (group 0). In the order of the draws its place is uniform."""
    d, t, n, rows = 8, 2, 10, 4000
    sets = class_coalitions(row_keys(0, np.arange(float(rows))[:, None]), d, one_class(d, t, n))
    first_listed = sets[:, :, 0] & sets[:, :, 1]  # {0, 1}, the first coalition of the class's listing
    drawn = first_listed.any(axis=1)
    places = np.argmax(first_listed[drawn], axis=1)
    assert drawn.mean() == pytest.approx(n / comb(d, t), abs=0.03)
    counts = np.bincount(places, minlength=n)
    expected = drawn.sum() / n
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))  # uniform over the n places


@pytest.mark.parametrize("d", [3, 4, 5, 6])
@pytest.mark.parametrize("sampler", REGRESSIONS)
def test_every_pair_gives_the_exact_values(sampler, d):
    f, background, X = polynomial_setup(1, d, order=d, n_rows=2)
    game = interventional_game(f, background, X)
    estimate, estimator = run_estimator(sampler, game, 2**d, seed=3)
    assert estimator.exact and estimator.n_evals == 2**d
    np.testing.assert_allclose(estimate.values[:, :, 0], truth(f, X, background), atol=1e-10)
    np.testing.assert_array_equal(estimate.stderr, 0.0)


@pytest.mark.parametrize(("d", "budget"), [(5, 22), (8, 40), (10, 100)])
@pytest.mark.parametrize("sampler", REGRESSIONS)
def test_games_with_pairwise_interactions_are_exact_with_any_pairs(sampler, d, budget):
    rng = np.random.default_rng(d)
    f = pairwise_model(d, rng)
    background, X = rng.normal(size=(6, d)), rng.normal(size=(3, d))
    estimate, estimator = run_estimator(sampler, interventional_game(f, background, X), budget, seed=1)
    assert not estimator.exact
    expected = truth(f, X, background)
    # to rounding: the regression's ridge (1e-10 relative) is refined away
    np.testing.assert_allclose(estimate.values[:, :, 0], expected, rtol=0, atol=1e-13 * np.abs(expected).max())


@pytest.mark.parametrize("budget", [22, 50, 120])
@pytest.mark.parametrize("sampler", REGRESSIONS)
def test_efficiency_holds_exactly(sampler, budget):
    f, background, X = polynomial_setup(2, 9, order=4, n_rows=5)
    game = interventional_game(f, background, X)
    estimate, _ = run_estimator(sampler, game, budget, seed=0)
    total = game.full_value - game.empty_value
    np.testing.assert_allclose(estimate.values.sum(axis=1), total, atol=1e-10)
    assert (game.n_evals == 2 + 2 * ((budget - 2) // 2)).all()


@pytest.mark.parametrize("sampler", REGRESSIONS)
def test_a_row_alone_equals_the_row_in_a_batch_and_duplicates_agree(sampler):
    f, background, X = polynomial_setup(3, 7, order=3, n_rows=3)
    rows = X[[0, 1, 0, 2]]
    together, _ = run_estimator(sampler, interventional_game(f, background, rows), 60, seed=4)
    alone, _ = run_estimator(sampler, interventional_game(f, background, X[[0]]), 60, seed=4)
    np.testing.assert_array_equal(together.values[0], alone.values[0])
    np.testing.assert_array_equal(together.values[0], together.values[2])
    np.testing.assert_array_equal(together.stderr[0], alone.stderr[0])


def test_the_minimum_budget_is_one_pair_per_jackknife_group_and_one_and_a_half_per_unknown():
    estimator = SHAPLEY_ALGORITHMS["leverage"]
    assert estimator.minimum_evals(5) == 22  # ten pairs, one per jackknife group
    assert estimator.minimum_evals(10) == 2 + 2 * 14  # 1.5 pairs for each of the 9 unknowns, rounded up
    assert estimator.minimum_evals(3) == 2 + 2 * 3  # all three pairs of 3 players
    assert "below the minimum" in estimator.refusal(29, 10)


def test_a_budget_near_one_pair_per_unknown_is_refused_where_the_regression_would_amplify_the_noise():
    """A review's case (d = 31, 2d evaluations): errors 5x the values' size, intervals covering 0.76."""
    for name in REGRESSIONS:
        estimator = SHAPLEY_ALGORITHMS[name]
        assert "below the minimum" in estimator.refusal(62, 31)
        assert estimator.refusal(92, 31) is None


@pytest.mark.slow
@pytest.mark.parametrize(("d", "budget"), [(8, 60), (8, 120), (12, 150)])
@pytest.mark.parametrize("sampler", REGRESSIONS)
def test_95_percent_intervals_cover_the_exact_values(sampler, d, budget):
    """Coverage of the jackknife t-intervals over 60 independent draws of 8 rows (spec §3): 0.93-1.0."""
    from scipy.stats import t as student_t

    f, background, X = polynomial_setup(5, d, order=3, n_background=10, n_rows=8)
    exact = truth(f, X, background)
    covered = []
    for seed in range(60):
        estimate, _ = run_estimator(sampler, interventional_game(f, background, X), budget, seed=seed)
        half = student_t.ppf(0.975, estimate.dof)[:, None] * estimate.stderr[:, :, 0]
        covered.append(np.abs(estimate.values[:, :, 0] - exact) <= half)
    assert 0.93 <= np.mean(covered) <= 1.0


@pytest.mark.parametrize("sampler", REGRESSIONS)
def test_the_cupy_code_path_gives_the_cpu_values(sampler):
    """The regressions (and leverage_cv's surrogates) on the numpy twins of the CUDA backend: the
    strict one refuses, as cupy does, any host array meeting a device array."""
    rng = np.random.default_rng(4)
    background, rows = rng.normal(size=(5, 9)), rng.normal(size=(4, 9))

    def model(Z):
        return Z[:, 0] * Z[:, 1] * Z[:, 2] - abs(Z[:, 3]) * Z[:, 4] + Z[:, 5] * Z[:, 6] * Z[:, 7] * Z[:, 8]

    def run(backend):
        function = make_model_function(model, "predict", backend)
        game = InterventionalGame(function, backend.to_device(background), backend.to_device(rows))
        estimate, _ = run_estimator(sampler, game, 120, keys=row_keys(1, rows))
        return backend.to_numpy(estimate.values), backend.to_numpy(estimate.stderr)

    cpu_values, cpu_stderr = run(CpuBackend())
    for backend in (ArrayBackend(np, "numpy-twin"), StrictBackend()):
        values, stderr = run(backend)
        np.testing.assert_allclose(values, cpu_values, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(stderr, cpu_stderr, rtol=1e-9, atol=1e-12)


def test_the_control_variate_is_more_accurate_and_its_bias_small_on_a_game_with_high_order_interactions():
    """leverage_cv against brute force over 40 independent draws: its error is well below Leverage
    SHAP's on the same evaluations, and its bias (the mean error, which draws without replacement
    leave; module docstring) is a small part of the error Leverage SHAP has."""
    f, background, X = polynomial_setup(7, 10, order=5, n_background=6, n_rows=3)
    exact = truth(f, X, background)
    draws = {"leverage": [], "leverage_cv": []}
    for seed in range(40):
        for sampler, values in draws.items():
            estimate, _ = run_estimator(sampler, interventional_game(f, background, X), 160, seed=seed)
            values.append(estimate.values[:, :, 0])
    errors = {sampler: np.sqrt(np.mean((np.array(values) - exact) ** 2)) for sampler, values in draws.items()}
    assert errors["leverage_cv"] < 0.7 * errors["leverage"]
    bias = np.sqrt(np.mean((np.mean(draws["leverage_cv"], axis=0) - exact) ** 2))
    assert bias < 0.25 * errors["leverage"]


def test_the_surrogates_linear_parts_never_enter_the_estimate(monkeypatch):
    """Each fold's surrogate enters without its linear part (the regression fits that from every
    pair): a different slope on player 0 added to every fold's surrogate, an extra tree whose leaves
    follow player 0 alone, leaves the values unchanged. Before, each pair was corrected by its own
    fold's linear part and the mean of the folds' Shapley values added back, so the folds' differing
    linear parts entered the estimate."""
    import sklearn_shapq.algorithms._leverage_control_variate as control_variate
    from sklearn_shapq.algorithms._oblivious_boosting import ObliviousEnsemble

    f, background, X = polynomial_setup(9, 10, order=5, n_background=4, n_rows=2)
    plain, _ = run_estimator("leverage_cv", interventional_game(f, background, X), 200, seed=3)
    fit = control_variate.fit_oblivious_boosting
    rng = np.random.default_rng(0)

    def with_slopes(masks, targets, weights, settings, backend):
        ensemble = fit(masks, targets, weights, settings, backend)
        _, rows, problems, depth = ensemble.players.shape
        slope = rng.normal(scale=5.0, size=(rows, problems))  # one per row and fold
        players = np.broadcast_to(np.arange(depth), (1, rows, problems, depth))  # level 0: player 0
        leaves = slope[None, :, :, None] * ((np.arange(2**depth) >> (depth - 1)) & 1)
        return ObliviousEnsemble(
            np.concatenate([ensemble.players, players]),
            np.concatenate([ensemble.leaves, leaves]),
            ensemble.predictions + slope[:, None, :] * masks[:, :, :1],
        )

    monkeypatch.setattr(control_variate, "fit_oblivious_boosting", with_slopes)
    shifted, _ = run_estimator("leverage_cv", interventional_game(f, background, X), 200, seed=3)
    np.testing.assert_allclose(shifted.values, plain.values, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(shifted.stderr, plain.stderr, rtol=1e-9, atol=1e-10)


def test_the_control_variate_adds_no_bias_when_the_draws_cover_most_of_a_class():
    """d = 8 at 220 evaluations draws 109 of the 127 pairs without replacement: fold g's pairs are
    never its surrogate's training pairs. Over 300 draws (brute force truth) the mean error stays
    a small part of the error, as it does for Leverage SHAP (0.25 and 0.06 of the RMSE; without
    the finite-population correction of the module docstring it was 0.63)."""
    d, n_draws = 8, 300
    weights = np.random.default_rng(0).normal(size=d)

    def value(masks):
        z = masks.astype(float)
        return 3 * np.tanh(z @ weights) + 2 * z[:, 0] * z[:, 1] * z[:, 2] * z[:, 3] + np.exp(z[:, 4:].sum(1) / 2)

    def coalition_value(coalition):
        mask = np.zeros((1, d), dtype=bool)
        mask[0, list(coalition)] = True
        return value(mask)[0]

    exact = brute_force_shapley(coalition_value, d)
    keys = np.arange(1, n_draws + 1, dtype=np.uint64) * np.uint64(2654435761)
    estimator = SHAPLEY_ALGORITHMS["leverage_cv"](220, d, 0)
    values = estimator.estimate(CallableGame(value, d), np.zeros(n_draws, dtype=np.intp), keys).values[:, :, 0]
    rmse, bias = np.sqrt(np.mean((values - exact) ** 2)), np.sqrt(np.mean((values.mean(axis=0) - exact) ** 2))
    assert bias < 0.4 * rmse


def test_the_drawn_share_of_each_pair_is_that_of_its_class():
    """π of the finite-population correction: 1 for classes listed whole, n_t / C_t for classes
    drawn without replacement, 0 for classes drawn independently (above 2^14 pairs)."""
    estimator = SHAPLEY_ALGORITHMS["leverage_cv"](602, 20, 0)
    capacity = [comb(20, t) for t in range(1, 11)]
    capacity[-1] //= 2  # class d/2 holds the coalitions with player 0
    expected = []
    for t, n in enumerate(estimator.pairs, start=1):
        share = 1.0 if n == capacity[t - 1] else (n / capacity[t - 1] if capacity[t - 1] <= 2**14 else 0.0)
        expected += [share] * int(n)
    np.testing.assert_allclose(estimator._drawn_fraction(), expected)
    assert {0.0, 1.0} <= set(expected) and any(0 < share < 1 for share in expected)


def test_below_10_sampled_pairs_the_control_variate_is_the_plain_regression():
    f, background, X = polynomial_setup(8, 5, order=4, n_rows=2)
    game = interventional_game(f, background, X)
    plain, _ = run_estimator("leverage", game, 30, seed=2)
    adjusted, estimator = run_estimator("leverage_cv", game, 30, seed=2)
    assert estimator.sampled_pairs.sum() == 9  # class 1 listed whole, 9 of the 10 pairs of class 2
    np.testing.assert_array_equal(adjusted.values, plain.values)
    np.testing.assert_array_equal(adjusted.stderr, plain.stderr)
    f, background, X = polynomial_setup(8, 8, order=4, n_rows=2)
    game = interventional_game(f, background, X)
    more, estimator = run_estimator("leverage_cv", game, 22, seed=2)  # 10 sampled pairs: the surrogates run
    assert estimator.sampled_pairs.sum() == 10
    assert not np.array_equal(more.values, run_estimator("leverage", game, 22, seed=2)[0].values)


def split_row_parts(n_rows: int, n_parts: int) -> tuple[np.ndarray, RowParts]:
    """The games' own keys and their rows' keys and parts, for n_rows rows split into n_parts games each."""
    keys = row_keys(0, np.arange(float(n_rows))[:, None])
    return split_keys(keys, n_parts), RowParts(np.repeat(keys, n_parts), np.tile(np.arange(n_parts), n_rows), n_parts)


def test_the_parts_of_a_row_share_out_a_class_and_each_part_draws_as_an_unsplit_game():
    """6 parts of 9 pairs of a class of 35: each coalition once or twice in a row; in each part the
    9 are distinct, and over rows every coalition is in a part with probability 9/35."""
    d, t, n, n_parts, n_rows = 7, 3, 9, 6, 3000
    game_keys, parts = split_row_parts(n_rows, n_parts)
    sets = class_coalitions(game_keys, d, one_class(d, t, n), parts)
    assert sets.shape == (n_rows * n_parts, n, d) and (sets.sum(-1) == t).all()
    codes = (sets * (1 << np.arange(d))).sum(-1)  # (games, n): each coalition as an integer
    assert all(len(set(game.tolist())) == n for game in codes)  # without replacement in a part
    members = np.unique(codes)
    assert members.size == comb(d, t)
    per_row = (codes.reshape(n_rows, -1)[:, :, None] == members).sum(axis=1)  # (rows, 35)
    assert per_row.min() == 1 and per_row.max() == 2  # 54 draws over 35 coalitions
    for part in (0, 5):
        frequency = (codes[part::n_parts, :, None] == members).any(axis=1).sum(axis=0)
        expected = n_rows * n / comb(d, t)
        assert np.all(np.abs(frequency - expected) < 5 * np.sqrt(expected))
    first = (codes[::n_parts] == members[0]).any(axis=1)  # the place of one coalition in part 0: uniform
    places = np.bincount(np.argmax(codes[::n_parts][first] == members[0], axis=1), minlength=n)
    assert np.all(np.abs(places - first.sum() / n) < 5 * np.sqrt(first.sum() / n))


def test_a_part_draws_the_same_coalitions_alone_or_beside_other_games():
    d, n_parts = 9, 4
    pairs = np.zeros(d // 2, dtype=np.int64)
    pairs[[0, 1, 2]] = [d, 5, 30]  # the first listed whole, the others spread
    game_keys, parts = split_row_parts(3, n_parts)
    together = class_coalitions(game_keys, d, pairs, parts)
    for game in (0, 6, 11):
        alone = RowParts(parts.row_keys[[game]], parts.part[[game]], n_parts)
        np.testing.assert_array_equal(class_coalitions(game_keys[[game]], d, pairs, alone)[0], together[game])
    assert not np.array_equal(together[4], together[5])  # parts draw other coalitions
