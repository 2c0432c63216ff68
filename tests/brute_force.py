"""Independent oracles: interventional games and Shapley values by direct enumeration."""

from itertools import combinations
from math import factorial

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
