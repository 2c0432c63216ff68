"""Exact Shapley values and order-2 interactions of the interventional games of additive tree ensembles.

A leaf of a tree contributes u(S) = [A ⊆ S] [B ∩ S = ∅] to the game of an explained row x and a
background row z (:mod:`sklearn_shapq.backends._tree_shapley`), whose Möbius coefficients are
``m(A ∪ T) = (−1)^|T|`` for T ⊆ B. An index weighing m(T) by ``w(|T|)`` gives a player of A
Σ_t C(b, t) (−1)^t w(a + t), and a weight w(s) = Σ_c α_c / (s + c) sums in closed form:
Σ_u C(n, u) (−1)^u / (a₀ + u + c) = B(a₀ + c, n + 1). Shapley weighs 1/s, SII's pairs 1/(s − 1),
STII's pairs 2/(s − 1) − 2/s, FSII's pairs 6/s − 6/(s + 1) and its singletons 4/s − 6/(s + 1).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import factorial

import numpy as np

from sklearn_shapq.algorithms._product_kernel_interactions import check_interaction_index, interaction_matrix
from sklearn_shapq.backends import TreeArrays, tree_leaf_sums

_SHAPLEY = ((0, 1),)
"""w(s) = 1/s as (c, α_c) terms of Σ_c α_c / (s + c)."""
_PAIR_WEIGHTS = {"SII": ((-1, 1),), "STII": ((-1, 2), (0, -2)), "FSII": ((0, 6), (1, -6))}
_FSII_SINGLES = ((0, 4), (1, -6))


def _alternating(n: int, start: int, terms: tuple[tuple[int, int], ...]) -> float:
    """Σ_{u=0}^{n} C(n, u) (−1)^u w(start + u) for w(s) = Σ_c α_c / (s + c), by B(start + c, n + 1), rounded once."""
    total = sum(
        Fraction(alpha * factorial(start + c - 1) * factorial(n), factorial(start + c + n)) for c, alpha in terms
    )
    return float(total)


@lru_cache(maxsize=32)
def leaf_tables(index: str | None, depth: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Return the per-leaf weights of ``index`` for leaves with ``a = |A|``, ``b = |B|``, ``a + b ≤ depth``.

    Parameters
    ----------
    index : {None, "shap", "k-SII", "SII", "STII", "FSII"}
        None: the Shapley values only. "shap", "k-SII" and "SII": the Shapley values and SII's pairs
        (what :func:`interaction_matrix` assembles them from).
    depth : int

    Returns
    -------
    singles : ndarray of shape (2, depth + 1, depth + 1)
        A player's weight ``[0, a, b]`` in A, ``[1, a, b]`` in B.
    pairs : ndarray of shape (3, depth + 1, depth + 1) or None
        A pair's weight ``[c, a, b]`` where c of the two are in B.

    Examples
    --------
    >>> singles, _ = leaf_tables(None, 2)
    >>> float(singles[0, 1, 1]), float(singles[1, 1, 1])  # f(x) − f(z) shared by the two players
    (0.5, -0.5)
    """
    size = depth + 1
    singles = np.zeros((2, size, size))
    pairs = None if index is None else np.zeros((3, size, size))
    single_terms = _FSII_SINGLES if index == "FSII" else _SHAPLEY
    pair_terms = _PAIR_WEIGHTS.get(index if index in ("STII", "FSII") else "SII")
    for a in range(size):
        for b in range(size - a):
            if index == "STII":  # the singletons m({i}) = v({i}) − v(∅)
                singles[0, a, b] = float(a == 1)
                singles[1, a, b] = -float(a == 0 and b >= 1)
            else:
                singles[0, a, b] = _alternating(b, a, single_terms) if a >= 1 else 0.0
                singles[1, a, b] = -_alternating(b - 1, a + 1, single_terms) if b >= 1 else 0.0
            if pairs is not None and pair_terms is not None:
                pairs[0, a, b] = _alternating(b, a, pair_terms) if a >= 2 else 0.0
                pairs[1, a, b] = -_alternating(b - 1, a + 1, pair_terms) if a >= 1 and b >= 1 else 0.0
                pairs[2, a, b] = _alternating(b - 2, a + 2, pair_terms) if b >= 2 else 0.0
    singles.setflags(write=False)
    if pairs is not None:
        pairs.setflags(write=False)
    return singles, pairs


def tree_shapley_values(
    trees: TreeArrays, rows: np.ndarray, background: np.ndarray, player_of_column: np.ndarray, n_players: int
) -> np.ndarray:
    """Exact Shapley values of the interventional games of ``rows`` over ``background``.

    Parameters
    ----------
    trees : TreeArrays
    rows : ndarray of shape (n, d)
    background : ndarray of shape (N, d)
    player_of_column : int ndarray of shape (d,)
        Each column's player (a feature group's columns share one).
    n_players : int

    Returns
    -------
    ndarray of shape (n, n_players, n_outputs)

    Examples
    --------
    A stump on column 0 (x₀ ≤ 0: 0, else 1) and two columns: only column 0 moves the output.

    >>> from sklearn_shapq.backends import TreeArrays
    >>> stump = TreeArrays(
    ...     feature=np.array([0, -1, -1]), threshold=np.zeros(3), left=np.array([1, -1, -1]),
    ...     right=np.array([2, -1, -1]), missing_left=np.zeros(3, bool), value=np.array([[0.0], [0.0], [1.0]]),
    ...     roots=np.array([0]), strict=False, float32_inputs=False, float32_sums=False,
    ...     max_depth=1,
    ... )
    >>> x, background = np.array([[1.0, 5.0]]), np.array([[-1.0, 0.0], [2.0, 0.0]])
    >>> tree_shapley_values(stump, x, background, np.arange(2), 2)[0, :, 0]
    array([0.5, 0. ])
    """
    singles, _ = leaf_tables(None, min(trees.max_depth, n_players))  # |A| + |B| ≤ both
    values, _ = tree_leaf_sums(trees, rows, background, player_of_column, n_players, singles)
    return values


def tree_interactions(
    trees: TreeArrays,
    rows: np.ndarray,
    background: np.ndarray,
    player_of_column: np.ndarray,
    n_players: int,
    index: str = "shap",
) -> np.ndarray:
    """Exact order-2 matrices of ``index`` of the games of :func:`tree_shapley_values`.

    Parameters
    ----------
    trees : TreeArrays
    rows : ndarray of shape (n, d)
    background : ndarray of shape (N, d)
    player_of_column : int ndarray of shape (d,)
    n_players : int
    index : {"shap", "k-SII", "SII", "STII", "FSII"}, default="shap"
        As in :func:`~sklearn_shapq.algorithms.product_kernel_interactions`.

    Returns
    -------
    ndarray of shape (n, n_players, n_players, n_outputs)
    """
    check_interaction_index(index)
    singles_table, pairs_table = leaf_tables(index, min(trees.max_depth, n_players))
    singles, pairs = tree_leaf_sums(trees, rows, background, player_of_column, n_players, singles_table, pairs_table)
    return interaction_matrix(pairs, singles, index)
