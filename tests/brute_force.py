"""Independent oracles: interventional games and Shapley values by direct enumeration."""

from itertools import combinations
from math import comb, factorial

import numpy as np
import pandas as pd


def interventional_value(f, x, background, coalition):
    """v_x(S) = mean_z f(x_S, z_rest), written without any package code."""
    rows = background.copy()
    idx = list(coalition)
    rows[:, idx] = x[idx]
    return np.asarray(f(rows), dtype=float).mean(axis=0)


def brute_force_shapley(value, d):
    """Shapley values from the subset formula, value(tuple of players) -> float or (k,) array."""
    cache = {}

    def v(s):
        key = tuple(sorted(s))
        if key not in cache:
            cache[key] = np.asarray(value(key), dtype=float)
        return cache[key]

    phi = []
    for i in range(d):
        others = [j for j in range(d) if j != i]
        total = 0.0
        for size in range(d):
            weight = factorial(size) * factorial(d - size - 1) / factorial(d)
            for s in combinations(others, size):
                total = total + weight * (v(s + (i,)) - v(s))
        phi.append(total)
    return np.array(phi)


def random_polynomial_model(d, rng, order=3, n_terms=12):
    """A random model with interactions up to ``order``: f(Z) = sum_t c_t prod_{j in T_t} g_t(Z_j)."""
    terms = []
    for _ in range(n_terms):
        size = int(rng.integers(1, min(order, d) + 1))
        players = rng.choice(d, size=size, replace=False)
        terms.append((players, rng.normal(), rng.normal(size=size)))

    def f(Z):
        Z = np.asarray(Z)
        out = np.zeros(Z.shape[0])
        for players, coef, shifts in terms:
            out += coef * np.prod(np.tanh(Z[:, players] + shifts), axis=1)
        return out

    return f


def interventional_frame_value(predict, x, background, coalition):
    """v_x(S) on DataFrames: every background row with the cells of S taken from the one-row frame x."""
    rows = background.copy()
    for j in coalition:
        column = background.columns[j]
        rows[column] = pd.Series([x[column].iloc[0]] * len(rows), index=rows.index, dtype=background[column].dtype)
    return np.asarray(predict(rows), dtype=float).mean(axis=0)


def faith_interactions(table):
    """Order-2 Faith-Shap (FSII) from v of all coalitions, by its definition: a weighted least squares.

    ``table`` (2^d, k), code bit j = player j. The polynomial b + Σ_i a_i x_i + Σ_{i<j} a_ij x_i x_j
    closest to v under the Shapley kernel's weights (d − 1) / (C(d, s) s (d − s)), with v(∅) and
    v(N) matched exactly (the constraints of a KKT system). Returns the (d, d, k) matrix: a_ij off
    the diagonal, a_i on it.
    """
    n_coalitions, k = table.shape
    d = n_coalitions.bit_length() - 1
    masks = ((np.arange(n_coalitions)[:, None] >> np.arange(d)) & 1).astype(float)
    sizes = masks.sum(axis=1).astype(int)
    pairs = list(combinations(range(d), 2))
    design = np.concatenate(
        [np.ones((n_coalitions, 1)), masks] + [masks[:, [i]] * masks[:, [j]] for i, j in pairs], axis=1
    )
    weights = np.array([0.0 if s in (0, d) else (d - 1) / (comb(d, s) * s * (d - s)) for s in sizes])
    ends = design[[0, -1]]
    n_features = design.shape[1]
    kkt = np.block([[2 * design.T @ (weights[:, None] * design), ends.T], [ends, np.zeros((2, 2))]])
    right = np.concatenate([2 * design.T @ (weights[:, None] * table), table[[0, -1]]])
    coefficients = np.linalg.solve(kkt, right)[:n_features]
    out = np.zeros((d, d, k))
    out[np.arange(d), np.arange(d)] = coefficients[1 : d + 1]
    for (i, j), row in zip(pairs, coefficients[d + 1 :], strict=True):
        out[i, j] = out[j, i] = row
    return out
