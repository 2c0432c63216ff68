"""Exact values and pairs of tree games: the leaf tables by their sums, the values by enumeration and the axioms."""

from fractions import Fraction
from math import comb, factorial

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from sklearn_shapq.algorithms import leaf_tables, tree_interactions, tree_shapley_values
from sklearn_shapq.backends import TreeArrays
from tests.brute_force import brute_force_shapley, interventional_value


def _moebius_weight(index, size):
    """w(|T|) of ``index`` as the definitions give it: pairs and singletons (exact fractions)."""
    if size == 0:
        return Fraction(0), Fraction(0)
    if index is None or index in ("shap", "k-SII", "SII"):
        return (Fraction(1, size - 1) if size >= 2 else Fraction(0)), Fraction(1, size)
    if index == "STII":
        return (Fraction(1, comb(size, 2)) if size >= 2 else Fraction(0)), Fraction(int(size == 1))
    faith_pair = Fraction(1) if size == 2 else Fraction(comb(size - 1, 2), 2 * comb(size + 1, 4)) if size > 2 else 0
    faith_single = (
        Fraction(1) if size == 1 else -Fraction(2 * comb(size - 1, 2), 3 * comb(size + 1, 3)) if size > 2 else 0
    )
    return Fraction(faith_pair), Fraction(faith_single)


@pytest.mark.parametrize("index", [None, "SII", "STII", "FSII"])
def test_leaf_tables_are_the_moebius_sums_of_a_leaf_game(index):
    """A leaf's game [A ⊆ S][B ∩ S = ∅] has m(A ∪ T) = (−1)^|T|, T ⊆ B: sum its weights term by term."""
    depth = 7
    singles, pairs = leaf_tables(index, depth)
    for a in range(depth + 1):
        for b in range(depth + 1 - a):
            # the coalitions A ∪ T with |T| = t, counted by which of the players they hold
            def total(fixed_in_b, kind, a=a, b=b):
                free = b - fixed_in_b
                return float(
                    sum(
                        comb(free, t) * (-1) ** (t + fixed_in_b) * _moebius_weight(index, a + t + fixed_in_b)[kind]
                        for t in range(free + 1)
                    )
                )

            if a >= 1:
                assert singles[0, a, b] == pytest.approx(total(0, 1), abs=1e-15)
            if b >= 1:
                assert singles[1, a, b] == pytest.approx(total(1, 1), abs=1e-15)
            if pairs is not None:
                if a >= 2:
                    assert pairs[0, a, b] == pytest.approx(total(0, 0), abs=1e-15)
                if a >= 1 and b >= 1:
                    assert pairs[1, a, b] == pytest.approx(total(1, 0), abs=1e-15)
                if b >= 2:
                    assert pairs[2, a, b] == pytest.approx(total(2, 0), abs=1e-15)


def test_shapley_weights_are_the_beta_function():
    singles, _ = leaf_tables(None, 9)
    for a in range(1, 10):
        for b in range(10 - a):
            assert singles[0, a, b] == factorial(a - 1) * factorial(b) / factorial(a + b)


def _read(model):
    """A fitted scikit-learn regression tree as TreeArrays (its float32 comparisons)."""
    tree = model.tree_
    feature = np.where(tree.feature >= 0, tree.feature, -1).astype(np.int64)
    return TreeArrays(
        feature=feature,
        threshold=tree.threshold.astype(np.float64),
        left=tree.children_left.astype(np.int64),
        right=tree.children_right.astype(np.int64),
        missing_left=np.zeros(feature.shape[0], dtype=bool),
        value=tree.value[:, :, 0].copy(),
        roots=np.array([0]),
        strict=False,
        float32_inputs=True,
        float32_sums=False,
        max_depth=int(model.get_depth()),
    )


@pytest.fixture(scope="module")
def deep_tree():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 6))
    y = X[:, 0] * X[:, 1] * X[:, 2] + np.sin(3 * X[:, 3]) + X[:, 4] * X[:, 5]
    return X, DecisionTreeRegressor(max_depth=12, random_state=0).fit(X, y)


def test_values_of_a_deep_tree_are_the_enumerated_values(deep_tree):
    X, model = deep_tree
    trees, background = _read(model), X[200:230]
    values = tree_shapley_values(trees, X[:4], background, np.arange(6), 6)
    for x, phi in zip(X[:4], values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(model.predict, x, background, s)[()], 6)
        np.testing.assert_allclose(phi[:, 0], expected, rtol=1e-10, atol=1e-12)


def test_axioms_dummy_symmetry_and_efficiency(deep_tree):
    X, model = deep_tree
    trees, background = _read(model), X[200:230]
    rows = X[:5].copy()
    rows[:, 3] = background[0, 3]  # every row and background row agree on column 3 …
    background = background.copy()
    background[:, 3] = background[0, 3]
    values = tree_shapley_values(trees, rows, background, np.arange(6), 6)[:, :, 0]
    np.testing.assert_array_equal(values[:, 3], 0.0)  # … so it is a dummy
    expected = model.predict(rows) - model.predict(background).mean()
    np.testing.assert_allclose(values.sum(axis=1), expected, atol=1e-12)
    swapped = tree_shapley_values(trees, rows, background, np.array([1, 0, 2, 3, 4, 5]), 6)[:, :, 0]
    np.testing.assert_array_equal(swapped[:, [1, 0]], values[:, [0, 1]])  # players renamed, values follow


def test_interactions_sum_to_the_values(deep_tree):
    X, model = deep_tree
    trees, background = _read(model), X[200:220]
    values = tree_shapley_values(trees, X[:3], background, np.arange(6), 6)
    matrix = tree_interactions(trees, X[:3], background, np.arange(6), 6, index="shap")
    np.testing.assert_allclose(matrix.sum(axis=2), values, atol=1e-12)
    np.testing.assert_allclose(matrix, np.swapaxes(matrix, 1, 2), atol=1e-15)
