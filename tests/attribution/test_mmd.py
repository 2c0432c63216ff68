"""MMDAttribution: brute force, textbook statistic, invariances, permutation test, parameters, state."""

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

from sklearn_shapq import MMDAttribution
from sklearn_shapq.backends import ArrayBackend

from brute_force import brute_force_shapley
from fitted_state import assert_call_changes_nothing, threaded_results
from kernel_statistic_oracles import mmd2_textbook, mmd_weights, rbf_factors, shapley_of_pairs

# MMDAttribution.fit takes two samples, fit(X, Z): scikit-learn's estimator checks that pass a target as
# the second argument do not apply (tests/test_sklearn_estimator_checks.py lists them); its parameter
# validation check does, below.


@pytest.mark.parametrize("statistic", ["unbiased", "biased"])
@pytest.mark.parametrize("d", [1, 3, 6])
def test_matches_brute_force_and_textbook(d, statistic):
    rng = np.random.default_rng(d)
    X, Z = rng.normal(size=(12, d)), rng.normal(size=(9, d)) * 1.3 + 0.2
    sigma = rng.uniform(0.5, 2.0, size=d)
    fitted = MMDAttribution(bandwidth=sigma, statistic=statistic).fit(X, Z)
    U = np.r_[X, Z]
    unbiased = statistic == "unbiased"
    W = mmd_weights(12, 9, unbiased)
    assert W.sum() == pytest.approx(0.0, abs=1e-14)  # v(∅) = 0
    np.testing.assert_allclose(fitted.attributions_, shapley_of_pairs(W, rbf_factors(U, U, sigma)), rtol=0, atol=1e-13)
    textbook = mmd2_textbook(X, Z, sigma, unbiased)
    assert fitted.mmd2_ == pytest.approx(textbook, rel=1e-12)
    assert fitted.attributions_.sum() == pytest.approx(textbook, rel=1e-10, abs=1e-14)


GROUPINGS = [  # feature_groups, and the players they make: (name, columns), ordered by first column
    ({"bd": ["d", "b"]}, [("a", [0]), ("bd", [1, 3]), ("c", [2]), ("e", [4])]),
    ({"bde": [3, 1, -1]}, [("a", [0]), ("bde", [1, 3, 4]), ("c", [2])]),
    ({"ce": ["e", 2], "ab": [0, "b"]}, [("ab", [0, 1]), ("ce", [2, 4]), ("d", [3])]),
]


@pytest.mark.parametrize("device", ["cpu", ArrayBackend(np)], ids=["numba", "array twin"])
@pytest.mark.parametrize("method", ["prefix_suffix", "quadrature"])
@pytest.mark.parametrize("statistic", ["unbiased", "biased"])
@pytest.mark.parametrize("feature_groups, players", GROUPINGS)
def test_feature_groups_match_brute_force_of_the_grouped_statistic(feature_groups, players, statistic, method, device):
    rng = np.random.default_rng(14)
    X, Z = rng.normal(size=(12, 5)), rng.normal(size=(9, 5)) * [1.0, 1.5, 1.0, 0.7, 1.2] + 0.2
    sigma = rng.uniform(0.5, 2.0, size=5)
    names = list("abcde")
    fitted = MMDAttribution(
        bandwidth=sigma, statistic=statistic, feature_groups=feature_groups, algorithm=method, device=device
    ).fit(pd.DataFrame(X, columns=names), pd.DataFrame(Z, columns=names))

    def value(coalition):  # MMD² on the columns of the coalition's players
        columns = [j for p in coalition for j in players[p][1]]
        return mmd2_textbook(X[:, columns], Z[:, columns], sigma[columns], statistic == "unbiased")

    expected = brute_force_shapley(value, len(players))
    np.testing.assert_allclose(fitted.attributions_, expected, rtol=0, atol=1e-10)
    assert fitted.attributions_.sum() == pytest.approx(fitted.mmd2_, abs=1e-10)
    assert fitted.mmd2_ == pytest.approx(mmd2_textbook(X, Z, sigma, statistic == "unbiased"), abs=1e-12)
    assert fitted.feature_groups_.names == fitted.explain().feature_names == [name for name, _ in players]


def test_feature_groups_leave_the_statistic_and_the_p_value_alone():
    rng = np.random.default_rng(15)
    X, Z = rng.normal(size=(25, 4)), rng.normal(size=(20, 4)) + [0.0, 0.8, 0.0, 0.8]
    grouped = MMDAttribution(n_permutations=19, random_state=0, feature_groups={"shifted": [1, 3]}).fit(X, Z)
    plain = MMDAttribution(n_permutations=19, random_state=0).fit(X, Z)
    assert grouped.feature_groups_.names == ["x0", "shifted", "x2"]
    assert grouped.mmd2_ == pytest.approx(plain.mmd2_, rel=1e-12) and grouped.p_value_ == plain.p_value_


@pytest.mark.parametrize(
    "feature_groups, match",
    [
        ({"g": ["x0", "height"]}, "'height', which is not a column"),
        ({"g": ["x0", "x1"], "h": ["x2", 1]}, "'x1' appears in groups 'g' and 'h'"),
    ],
)
def test_bad_feature_groups_are_refused_in_fit(feature_groups, match):
    X = np.random.default_rng(16).normal(size=(20, 3))
    with pytest.raises(ValueError, match=match):
        MMDAttribution(feature_groups=feature_groups).fit(X, X + 1.0)


def test_small_worked_example():
    P = np.array([[0.0, 0.0], [1.0, 0.5], [0.2, 1.0]])
    Q = np.array([[2.0, 0.0], [1.5, 1.5]])
    for statistic, unbiased in (("unbiased", True), ("biased", False)):
        fitted = MMDAttribution(bandwidth=1.0, statistic=statistic).fit(P, Q)  # exp(−0.5 (a − b)²)
        U = np.r_[P, Q]
        expected = shapley_of_pairs(mmd_weights(3, 2, unbiased), rbf_factors(U, U, [1.0, 1.0]))
        np.testing.assert_allclose(fitted.attributions_, expected, rtol=1e-12)
        assert fitted.attributions_.sum() == pytest.approx(mmd2_textbook(P, Q, 1.0, unbiased), rel=1e-12)


def test_invariances():
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(30, 4)), rng.normal(size=(25, 4)) + [0, 0, 0.5, 1.0]
    forward = MMDAttribution(bandwidth="median_per_feature").fit(X, Z)
    backward = MMDAttribution(bandwidth="median_per_feature").fit(Z, X)
    np.testing.assert_allclose(forward.attributions_, backward.attributions_, rtol=1e-12)
    same = MMDAttribution(statistic="biased").fit(X, X.copy())
    assert same.mmd2_ == pytest.approx(0.0, abs=1e-14)
    np.testing.assert_allclose(same.attributions_, 0.0, atol=1e-14)


def test_working_memory_blocks_do_not_change_the_statistic_or_the_p_value():
    rng = np.random.default_rng(2)
    X, Z = rng.normal(size=(30, 3)), rng.normal(size=(20, 3)) + 0.3
    whole = MMDAttribution(n_permutations=19, random_state=0).fit(X, Z)
    with sklearn.config_context(working_memory=50 * 8 * 6 * 4 / 2**20):  # 4 rows of the pooled 50 per block
        blocked = MMDAttribution(n_permutations=19, random_state=0).fit(X, Z)
    np.testing.assert_allclose(blocked.attributions_, whole.attributions_, rtol=0, atol=1e-12 * abs(whole.mmd2_))
    assert blocked.p_value_ == whole.p_value_


@pytest.mark.slow
def test_attributes_a_distribution_shift_to_the_shifted_variables():
    rng = np.random.default_rng(0)
    n, d = 300, 8
    X = rng.normal(size=(n, d))
    Z = rng.normal(size=(n, d))
    Z[:, d // 2 :] = rng.standard_t(3, size=(n, d // 2))  # same mean and location, heavier tails
    fitted = MMDAttribution(n_permutations=49, random_state=0).fit(X, Z)
    assert fitted.attributions_.sum() == pytest.approx(fitted.mmd2_, rel=1e-10)
    assert np.all(fitted.attributions_[d // 2 :] > 0)
    assert np.all(fitted.attributions_[: d // 2] < fitted.attributions_[d // 2 :].min())
    assert np.mean(fitted.attributions_[: d // 2]) < 0 < np.mean(fitted.attributions_[d // 2 :])
    assert fitted.p_value_ == pytest.approx(1 / 50)


@pytest.mark.slow
def test_permutation_test_is_calibrated_under_the_null():
    p_values = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X, Z = rng.normal(size=(40, 3)), rng.normal(size=(40, 3))
        p_values.append(MMDAttribution(n_permutations=49, random_state=seed).fit(X, Z).p_value_)
    assert 0.02 <= min(p_values) and np.mean(np.array(p_values) < 0.05) <= 0.15
    assert 0.3 < np.mean(p_values) < 0.7


def test_random_state_gives_the_same_p_value_and_a_generator_is_accepted():
    rng = np.random.default_rng(3)
    X, Z = rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 0.4
    first = MMDAttribution(n_permutations=29, random_state=5).fit(X, Z).p_value_
    assert MMDAttribution(n_permutations=29, random_state=5).fit(X, Z).p_value_ == first
    assert 0 < MMDAttribution(n_permutations=29, random_state=np.random.default_rng(5)).fit(X, Z).p_value_ <= 1


def test_explain_changes_nothing_and_threads_agree():
    rng = np.random.default_rng(4)
    X, Z = rng.normal(size=(30, 4)), rng.normal(size=(30, 4)) * 1.5
    mmd = MMDAttribution(n_permutations=9, random_state=0).fit(X, Z)
    explanation = assert_call_changes_nothing(mmd, lambda m: m.explain())
    np.testing.assert_array_equal(explanation.values[0], mmd.attributions_)
    for other in threaded_results(mmd.explain):
        np.testing.assert_array_equal(other.values, explanation.values)
    for fitted in threaded_results(lambda: clone(mmd).fit(X, Z)):
        np.testing.assert_array_equal(fitted.attributions_, mmd.attributions_)
        assert fitted.p_value_ == mmd.p_value_


@pytest.mark.parametrize(
    "name, value",
    [
        ("kernel", "cosine"),
        ("bandwidth", 0.0),
        ("statistic", "V"),
        ("n_permutations", 0),
        ("feature_groups", ["x0"]),
        ("method", "brute_force"),
        ("device", "tpu"),
        ("random_state", "seed"),
        ("progress", "yes"),
    ],
)
def test_invalid_parameters_raise_invalid_parameter_error(name, value):
    X = np.random.default_rng(5).normal(size=(20, 3))
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        MMDAttribution(**{name: value}).fit(X, X)


def test_every_parameter_is_constrained():
    assert set(MMDAttribution._parameter_constraints) == set(MMDAttribution().get_params())
    check_param_validation("MMDAttribution", MMDAttribution())  # a bad type and a bad value per parameter


def test_bad_input():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 3))
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="features"):
        MMDAttribution().fit(X, X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        MMDAttribution().fit(X, bad)
    with pytest.raises(ValueError, match="at least 2"):
        MMDAttribution().fit(X, X[:1])
    with pytest.raises(ValueError, match="bandwidth"):
        MMDAttribution(bandwidth=[1.0, 2.0]).fit(X, X)


@pytest.mark.gpu
def test_cuda_equals_cpu():
    rng = np.random.default_rng(9)
    X, Z = rng.normal(size=(40, 6)), rng.normal(size=(30, 6)) + 0.2
    cpu = MMDAttribution().fit(X, Z)
    cuda = MMDAttribution(device="cuda").fit(X, Z)
    np.testing.assert_allclose(cuda.attributions_, cpu.attributions_, rtol=1e-10, atol=1e-14)


# ---------------------------------------------------------------- no silent wrong answer


@pytest.mark.parametrize("bandwidth", ["median", "median_per_feature"])
def test_a_constant_column_gets_zero_and_the_others_their_brute_force_values(bandwidth):
    rng = np.random.default_rng(4)
    X, Z = rng.normal(size=(10, 4)), rng.normal(size=(8, 4)) + [0.0, 0.5, 0.0, 0.0]
    X[:, 2] = Z[:, 2] = -1.0  # constant in the pooled sample
    fitted = MMDAttribution(bandwidth=bandwidth).fit(X, Z)
    assert fitted.attributions_[2] == 0.0
    U = np.r_[X, Z]
    expected = shapley_of_pairs(mmd_weights(10, 8, True), rbf_factors(U, U, fitted.bandwidths_))
    np.testing.assert_allclose(fitted.attributions_, expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_extreme_scales_give_the_attributions_and_p_value_of_the_rescaled_data(scale):
    rng = np.random.default_rng(7)
    X, Z = rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + [0.0, 0.8, 0.0]
    params = dict(bandwidth="median_per_feature", n_permutations=30, random_state=0)
    plain = MMDAttribution(**params).fit(X, Z)
    scaled = MMDAttribution(**params).fit(X * [1.0, scale, 1.0], Z * [1.0, scale, 1.0])
    np.testing.assert_allclose(scaled.attributions_, plain.attributions_, rtol=1e-9, atol=1e-15)
    assert scaled.p_value_ == plain.p_value_


def test_bad_columns_of_z_and_overflowing_bandwidths_are_refused_naming_them():
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(20, 2)), columns=["a", "b"])
    with pytest.raises(TypeError, match=r"Z has non-numeric columns \['a'\]; kernels are computed on numbers"):
        MMDAttribution().fit(X, X.assign(a="x"))
    with pytest.raises(ValueError, match=r"bandwidth: column 'a' divided by its bandwidth 1e-320 overflows"):
        MMDAttribution(bandwidth=[1e-320, 1.0]).fit(X, X + 1.0)
