"""PermutationShapExplainer.explain_interactions: enumeration and unbiased estimates against brute force."""

from itertools import combinations
from math import comb, factorial

import numpy as np
import pandas as pd
import pytest

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import border_evals, minimum_pair_evals, pair_design
from sklearn_shapq.algorithms._interaction_sampling import MIN_UNITS

from brute_force import faith_interactions, interventional_frame_value, interventional_value, random_polynomial_model
from table_helpers import census_pipeline, people

D = 6
INDICES = ("shap", "k-SII", "SII", "STII")


# --------------------------------------------------------------------------------------------
# brute force, from the definitions
# --------------------------------------------------------------------------------------------


def brute_force_matrix(value, d, index):
    """The (d, d, k) matrix of ``index`` from the subset formulas; value(tuple of players) -> (k,)."""
    cache = {}

    def v(s):
        key = tuple(sorted(s))
        if key not in cache:
            cache[key] = np.atleast_1d(np.asarray(value(key), dtype=float))
        return cache[key]

    k = v(()).shape[0]
    phi = np.zeros((d, k))
    for i in range(d):
        others = [u for u in range(d) if u != i]
        for size in range(d):
            weight = factorial(size) * factorial(d - size - 1) / factorial(d)
            for s in combinations(others, size):
                phi[i] += weight * (v(s + (i,)) - v(s))
    pairs = np.zeros((d, d, k))
    for i, j in combinations(range(d), 2):
        others = [u for u in range(d) if u not in (i, j)]
        total = np.zeros(k)
        for size in range(d - 1):
            if index == "STII":
                weight = 2.0 / (d * comb(d - 1, size))
            else:
                weight = factorial(size) * factorial(d - size - 2) / factorial(d - 1)
            for s in combinations(others, size):
                total += weight * (v(s + (i, j)) - v(s + (i,)) - v(s + (j,)) + v(s))
        pairs[i, j] = pairs[j, i] = total
    out = pairs.copy()
    for i in range(d):
        if index == "shap":
            out[i] = pairs[i] / 2.0
            out[i, i] = phi[i] - pairs[i].sum(0) / 2.0
        elif index == "k-SII":
            out[i, i] = phi[i] - pairs[i].sum(0) / 2.0
        elif index == "SII":
            out[i, i] = phi[i]
        else:
            out[i, i] = v((i,)) - v(())
    return out


def brute_force_rows(f, rows, background, index):
    return np.array(
        [
            brute_force_matrix(lambda s, x=x: interventional_value(f, x, background, s), rows.shape[1], index)
            for x in rows
        ]
    )


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    f = random_polynomial_model(D, rng, order=3, n_terms=14)
    background = rng.normal(size=(12, D))
    rows = rng.normal(size=(3, D))
    return f, background, rows


def fitted(f, background, **params):
    params = {"background_size": None, "random_state": 0, "progress": False, **params}
    return PermutationShapExplainer(f, **params).fit(background)


# --------------------------------------------------------------------------------------------
# exact by enumeration
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", INDICES)
def test_enumeration_is_the_brute_force_matrix(problem, index):
    f, background, rows = problem
    explanation = fitted(f, background).explain_interactions(rows, index=index)
    assert explanation.diagnostics["exact"] and explanation.values.shape == (3, D, D)
    np.testing.assert_allclose(explanation.values, brute_force_rows(f, rows, background, index)[..., 0], atol=1e-10)
    np.testing.assert_array_equal(explanation.error_std, 0.0)


def test_enumeration_of_several_outputs_and_groups(problem):
    f, background, rows = problem

    def two(Z):
        return np.stack([f(Z), np.tanh(Z[:, 0] * Z[:, 3])], axis=1)

    explanation = fitted(two, background).explain_interactions(rows, index="k-SII")
    assert explanation.values.shape == (3, D, D, 2)
    np.testing.assert_allclose(explanation.values, brute_force_rows(two, rows, background, "k-SII"), atol=1e-10)
    groups = {"a": [0, 1], "b": [2], "c": [3, 4, 5]}
    grouped = fitted(f, background, feature_groups=groups).explain_interactions(rows, index="STII")
    columns = list(groups.values())

    def group_value(x, s):
        return interventional_value(f, x, background, [c for g in s for c in columns[g]])

    expected = np.array([brute_force_matrix(lambda s, x=x: group_value(x, s), 3, "STII")[..., 0] for x in rows])
    np.testing.assert_allclose(grouped.values, expected, atol=1e-10)
    assert grouped.feature_names == ["a", "b", "c"]


def test_fsii_is_the_weighted_least_squares_fit_and_efficient(problem):
    f, background, rows = problem

    def two(Z):
        return np.stack([f(Z), np.tanh(Z[:, 0] * Z[:, 3])], axis=1)

    explanation = fitted(two, background).explain_interactions(rows, index="FSII", max_evals=2**D)
    codes = np.arange(2**D)
    for x, values in zip(rows, explanation.values, strict=True):
        table = np.array(
            [interventional_value(two, x, background, np.flatnonzero(c >> np.arange(D) & 1)) for c in codes]
        )
        np.testing.assert_allclose(values, faith_interactions(table), atol=1e-10)
        upper = values[np.triu_indices(D)].sum(axis=0)  # singletons and each pair once
        np.testing.assert_allclose(upper, table[-1] - table[0], atol=1e-10)


@pytest.mark.parametrize("rows_kind", ["array", "dask"])
def test_fsii_below_the_enumerating_budget_is_refused_naming_max_evals(problem, rows_kind):
    f, background, rows = problem
    if rows_kind == "dask":
        rows = pytest.importorskip("dask.array").from_array(rows, chunks=2)
    with pytest.raises(ValueError, match=r"max_evals must reach 2\^6 = 64 \(got 63\).*feature_groups="):
        fitted(f, background).explain_interactions(rows, index="FSII", max_evals=63)
    with pytest.raises(ValueError, match=r"\(max_evals='auto' gave 1024\)"):  # at p = 11, 'auto' is 1024 < 2^11
        fitted(lambda Z: Z.sum(axis=1), np.zeros((2, 11))).explain_interactions(np.ones((1, 11)), index="FSII")


# --------------------------------------------------------------------------------------------
# sampled: unbiased, with honest standard errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("index", "parts"), [("SII", 1), ("STII", 2), ("SII", 3)])
def test_sampled_pairs_are_unbiased_and_their_intervals_cover(problem, index, parts):
    f, background, rows = problem
    row = rows[:1]
    truth = brute_force_rows(f, row, background, index)[0, :, :, 0]
    explainer = fitted(f, background, background_parts=parts)
    estimates, errors, lower, upper = [], [], [], []
    for seed in range(150):
        explainer.random_state = seed
        explanation = explainer.explain_interactions(row, index=index, max_evals=30)
        estimates.append(explanation.values[0])
        errors.append(explanation.error_std[0])
        lower.append(explanation.lower_bounds[0])
        upper.append(explanation.upper_bounds[0])
    assert not explanation.diagnostics["exact"] and explanation.diagnostics["background_parts"] == parts
    estimates, errors = np.array(estimates), np.array(errors)
    off = ~np.eye(D, dtype=bool)
    mean = estimates.mean(0)[off]
    standard_error = estimates.std(0, ddof=1)[off] / np.sqrt(len(estimates))
    z = (mean - truth[off]) / standard_error
    assert np.abs(z).max() < 4.0, z
    # the reported standard errors match the spread of the estimates
    ratio = np.sqrt((errors[:, off] ** 2).mean(0)) / estimates.std(0, ddof=1)[off]
    assert 0.8 < np.median(ratio) < 1.25, ratio
    covered = (np.array(lower)[:, off] <= truth[off]) & (truth[off] <= np.array(upper)[:, off])
    assert 0.9 < covered.mean() < 0.99, covered.mean()


@pytest.fixture(scope="module")
def wider_problem():
    rng = np.random.default_rng(3)
    f = random_polynomial_model(8, rng, order=4, n_terms=16)
    return f, rng.normal(size=(6, 8)), rng.normal(size=(1, 8))


@pytest.mark.parametrize(
    ("index", "parts", "max_evals", "design"),
    [
        # sizes 0-2 and 6-8 enumerated (74 evaluations), the order-2 surrogate, the middle (3-5) regression-adjusted
        ("SII", 1, 150, (2, 38)),
        ("STII", 6, 150, (2, 38)),
        # sizes 0, 1, 7, 8 and the additive surrogate, regression-adjusted
        ("SII", 2, 100, (1, 41)),
        ("SII", 6, 60, (1, 21)),
        # too few units for the regression
        ("STII", 2, 40, (1, 11)),
    ],
)
def test_with_more_border_sizes_and_a_regression_the_pairs_stay_unbiased_and_covered(
    wider_problem, index, parts, max_evals, design
):
    f, background, row = wider_problem
    assert pair_design(max_evals, 8) == design
    truth = brute_force_rows(f, row, background, index)[0, :, :, 0]
    explainer = fitted(f, background, background_parts=parts)
    estimates, errors, covered = [], [], []
    for seed in range(150):
        explainer.random_state = seed
        explanation = explainer.explain_interactions(row, index=index, max_evals=max_evals)
        estimates.append(explanation.values[0])
        errors.append(explanation.error_std[0])
        covered.append((explanation.lower_bounds[0] <= truth) & (truth <= explanation.upper_bounds[0]))
    assert explanation.diagnostics["n_evals"].tolist() == [max_evals]
    off = ~np.eye(8, dtype=bool)
    estimates, errors = np.array(estimates), np.array(errors)
    z = (estimates.mean(0)[off] - truth[off]) / (estimates.std(0, ddof=1)[off] / np.sqrt(len(estimates)))
    assert np.abs(z).max() < 4.0, z
    ratio = np.sqrt((errors[:, off] ** 2).mean(0)) / estimates.std(0, ddof=1)[off]
    # the regression's errors are widened (REGRESSION_STDERR_WIDENING) for coverage: up to 1.3x the spread
    assert 0.8 < np.median(ratio) < (1.4 if design[1] >= 16 else 1.25), ratio
    assert 0.92 < np.array(covered)[:, off].mean() < 0.99


@pytest.mark.parametrize("parts", [1, 3])
def test_a_game_of_order_2_is_exact_once_sizes_2_and_d_minus_2_are_enumerated(parts):
    # the surrogate's pair terms are the game's own: the residual is zero, the estimate exact
    rng = np.random.default_rng(4)
    f = random_polynomial_model(8, rng, order=2, n_terms=20)
    background, rows = rng.normal(size=(6, 8)), rng.normal(size=(2, 8))
    explainer = fitted(f, background, background_parts=parts)
    explanation = explainer.explain_interactions(rows, index="SII", max_evals=150)
    assert not explanation.diagnostics["exact"]
    np.testing.assert_allclose(explanation.values, brute_force_rows(f, rows, background, "SII")[..., 0], atol=1e-10)
    off = ~np.eye(8, dtype=bool)
    assert np.abs(explanation.error_std[:, off]).max() < 1e-10
    # with sizes 0, 1, d - 1 and d only, the additive surrogate leaves the pairs to sampling
    sampled = explainer.explain_interactions(rows, index="SII", max_evals=40)
    assert np.abs(sampled.error_std[:, off]).max() > 1e-3


@pytest.mark.parametrize("d", [4, 5, 8, 10, 13, 20, 30])
def test_the_design_enumerates_the_most_border_sizes_the_budget_allows(d):
    for max_evals in range(minimum_pair_evals(d), min(2**d, 4000), 7):
        border, n_units = pair_design(max_evals, d)
        used = border_evals(border, d) + 2 * n_units
        assert 1 <= border <= (d - 2) // 2 and used <= max_evals < used + 2
        assert n_units >= MIN_UNITS or border == 1
        larger = border + 1
        assert larger > (d - 2) // 2 or border_evals(larger, d) + 2 * MIN_UNITS > max_evals


def test_sampled_shap_rows_sum_to_the_explanation_values(problem):
    f, background, rows = problem
    explainer = fitted(f, background, max_evals=40)  # estimated values, not exact
    interactions = explainer.explain_interactions(rows, max_evals=40)
    explanation = explainer.explain(rows)
    assert not interactions.diagnostics["exact"] and explainer.algorithm_ != "exact"
    np.testing.assert_allclose(interactions.values.sum(axis=2), explanation.values, atol=1e-10)
    np.testing.assert_allclose(interactions.values, interactions.values.transpose(0, 2, 1), atol=1e-12)
    np.testing.assert_allclose(interactions.values.sum(axis=(1, 2)) + interactions.base_values, f(rows), atol=1e-10)
    k_sii = explainer.explain_interactions(rows, index="k-SII", max_evals=40).values
    np.testing.assert_allclose(np.triu(k_sii).sum(axis=(1, 2)) + interactions.base_values, f(rows), atol=1e-10)
    assert interactions.diagnostics["n_model_rows"] > 3 * 40 * len(background)  # the values' rows counted too


def test_auto_parts_are_fewer_where_the_regression_runs_on_many_players():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(101, 30))
    explainer = fitted(lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 2], X[:100])
    # 30 players, 1500 evaluations: the regression runs; at most max(20, 100 * 10 / 30) parts, a divisor of 100
    assert explainer.explain_interactions(X[100:], max_evals=1500).diagnostics["background_parts"] == 25
    # 80 evaluations leave 9 units: no regression, one part per background row
    assert explainer.explain_interactions(X[100:], max_evals=80).diagnostics["background_parts"] == 100


def test_shap_interaction_values_is_shaps_name_for_the_shap_matrices(problem):
    f, background, rows = problem
    explainer = fitted(f, background)
    np.testing.assert_array_equal(
        explainer.shap_interaction_values(rows), explainer.explain_interactions(rows, index="shap").values
    )


def test_a_row_alone_equals_the_row_in_a_batch(problem):
    f, background, rows = problem
    explainer = fitted(f, background, background_parts=2)
    batch = np.concatenate([rows, rows[::-1]])
    together = explainer.explain_interactions(batch, max_evals=40)
    for r in range(len(rows)):
        alone = explainer.explain_interactions(rows[r : r + 1], max_evals=40)
        np.testing.assert_array_equal(alone.values[0], together.values[r])
        np.testing.assert_array_equal(alone.error_std[0], together.error_std[r])
        np.testing.assert_array_equal(together.values[r], together.values[len(batch) - 1 - r])


# --------------------------------------------------------------------------------------------
# tables, names, refusals
# --------------------------------------------------------------------------------------------


def test_a_raw_table_with_strings_keeps_its_names_and_is_exact():
    frame, y = people(300)
    model = census_pipeline(frame, y)
    background, rows = frame.iloc[:20], frame.iloc[[50, 51]]
    explainer = fitted(model, background)
    explanation = explainer.explain_interactions(rows, index="SII")
    assert explanation.feature_names == list(frame.columns)
    assert explanation.display_data[:, 1].tolist() == rows.workclass.tolist()
    d = frame.shape[1]
    expected = np.array(
        [
            brute_force_matrix(
                lambda s, r=r: interventional_frame_value(model.decision_function, rows.iloc[[r]], background, s),
                d,
                "SII",
            )[..., 0]
            for r in range(len(rows))
        ]
    )
    np.testing.assert_allclose(explanation.values, expected, atol=1e-10)
    sampled = explainer.explain_interactions(rows, max_evals=20)
    np.testing.assert_allclose(sampled.values.sum(axis=2), explainer.explain(rows).values, atol=1e-10)


def test_several_outputs_when_sampled():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 5))
    from sklearn.linear_model import LogisticRegression

    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    model = LogisticRegression().fit(X, y)
    explainer = fitted(model, X[:10])
    frame = pd.DataFrame(X[10:13], columns=[f"x{j}" for j in range(5)])
    interactions = explainer.explain_interactions(frame.to_numpy(), max_evals=20)
    assert interactions.values.shape == (3, 5, 5, 3) and interactions.error_std.shape == (3, 5, 5, 3)
    np.testing.assert_allclose(interactions.values.sum(axis=2), explainer.explain(X[10:13]).values, atol=1e-10)


def test_several_outputs_with_the_regression_match_one_output_at_a_time():
    # 50 evaluations at d = 6 leave 18 units: the regression-adjusted path, output by output. The
    # outputs share the fit's prior (from their summed slopes): proportional outputs have the prior of each alone
    rng = np.random.default_rng(2)
    X = rng.normal(size=(12, 6))

    def two(Z):
        first = Z[:, 0] * Z[:, 1] * Z[:, 2] + np.tanh(Z[:, 3] * Z[:, 4]) * Z[:, 5]
        return np.stack([first, -3.0 * first], axis=1)

    assert pair_design(50, 6) == (1, 18)
    both = fitted(two, X[:6]).explain_interactions(X[6:9], index="SII", max_evals=50)
    for output in range(2):
        alone = fitted(lambda Z, o=output: two(Z)[:, o], X[:6]).explain_interactions(X[6:9], index="SII", max_evals=50)
        np.testing.assert_allclose(both.values[..., output], alone.values, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(both.error_std[..., output], alone.error_std, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    ("index", "hint"), [("shapley", ""), ("sii", "Did you mean 'SII'"), ("kSII", "Did you mean 'k-SII'"), (None, "")]
)
def test_a_bad_index_is_refused_by_name(problem, index, hint):
    f, background, rows = problem
    with pytest.raises(ValueError, match="index") as refused:
        fitted(f, background).explain_interactions(rows, index=index)
    assert hint in str(refused.value) and ("Did you mean" in str(refused.value)) == bool(hint)


@pytest.mark.parametrize("max_evals", [10, 2.5, "many"])
def test_a_bad_budget_is_refused_by_name(problem, max_evals):
    f, background, rows = problem
    with pytest.raises(ValueError, match="max_evals"):
        fitted(f, background).explain_interactions(rows, max_evals=max_evals)


def test_dask_collections_give_the_eager_values_lazily():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 6))
    explainer = fitted(lambda Z: Z[:, 0] * Z[:, 1] + np.sin(Z[:, 2] * Z[:, 3] * Z[:, 4]), X[:8])
    for max_evals in ("auto", 40):  # exact, sampled
        eager = explainer.explain_interactions(X, index="k-SII", max_evals=max_evals).values
        lazy = explainer.explain_interactions(da.from_array(X, chunks=(7, 6)), index="k-SII", max_evals=max_evals)
        assert lazy.shape == (20, 6, 6)
        np.testing.assert_array_equal(lazy.compute(), eager)
    with pytest.raises(ValueError, match="max_evals"):  # refused at once, not on the workers
        explainer.explain_interactions(da.from_array(X, chunks=10), max_evals=3)
    lazy_shap = explainer.shap_interaction_values(da.from_array(X, chunks=(7, 6)))
    np.testing.assert_array_equal(lazy_shap.compute(), explainer.shap_interaction_values(X))


def test_a_dask_dataframe_with_strings_gives_the_eager_values():
    dd = pytest.importorskip("dask.dataframe")
    frame, y = people(120)
    model = census_pipeline(frame, y)
    explainer = fitted(model, frame.iloc[:10])
    rows = frame.iloc[20:32]
    eager = explainer.explain_interactions(rows, max_evals=40)
    lazy = explainer.explain_interactions(dd.from_pandas(rows, npartitions=3), max_evals=40)
    np.testing.assert_array_equal(lazy.compute(), eager.values)


@pytest.mark.parametrize(("index", "max_evals"), [("shap", 40), ("STII", 40), ("SII", 64)])
def test_one_progress_bar_counts_every_model_row(monkeypatch, index, max_evals):
    """explain_interactions shows one bar that counts all its model rows, the values' included where sampled."""
    from sklearn_shapq.explainers import _permutation

    bars = []

    def recorded(enabled, total, desc, unit):
        bar = _permutation.progress_bar.__wrapped__(enabled, total, desc, unit)
        bars.append((enabled, bar))
        return bar

    recorded.__wrapped__ = _permutation.progress_bar
    monkeypatch.setattr(_permutation, "progress_bar", recorded)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(14, 6))
    explainer = fitted(lambda Z: Z[:, 0] * Z[:, 1] + np.tanh(Z[:, 2] + Z[:, 3]), X[:10], progress=True)
    explanation = explainer.explain_interactions(X[10:], index=index, max_evals=max_evals)
    shown = [bar for enabled, bar in bars if enabled]
    assert len(shown) == 1
    # the total is planned before the calls (an upper bound: the exact plan shares v(∅) and v(N) across rows)
    assert shown[0].n == explanation.diagnostics["n_model_rows"] <= shown[0].total
    assert shown[0].n > 0.9 * shown[0].total
