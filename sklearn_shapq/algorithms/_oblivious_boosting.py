"""Boosted oblivious trees on coalition masks, fitted for many problems at once, and their exact Shapley values.

The surrogate of the cross-fitted control variate (:mod:`._leverage_control_variate`). A tree is
*oblivious*: every node of a level splits on the same player, so a tree of depth D is D players
and 2^D leaf values, and a leaf is a condition "these players in S, those out of S". Such a tree
is a sum of games ``c · [A ⊆ S] · [B ∩ S = ∅]`` whose Shapley values are closed forms
(:func:`oblivious_shapley`), so the surrogate's Shapley values are exact.

Design decisions
----------------
* **Batched.** One fit serves B × M problems: B explained rows, each with its own coalitions
  (n, d), and M problems per row (outputs × folds) that share the row's coalitions but have their
  own targets and 0/1 training weights.
* **On the backend.** The fit is the backend's :meth:`~sklearn_shapq.backends.ArrayBackend.fit_oblivious_trees`:
  a numba kernel per (row, problem) on the CPU, batched array code on cupy (and the twins in CI);
  :mod:`sklearn_shapq.backends._oblivious_fit` has the splits, the gains and the costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import factorial
from typing import Any

import numpy as np


@dataclass(frozen=True)
class BoostingSettings:
    """Size of the boosted ensemble.

    Attributes
    ----------
    n_trees : int
        Boosting rounds.
    depth : int
        Levels of each tree (capped at the number of players).
    learning_rate : float
        Shrinkage of each tree's leaf values.
    l2 : float
        λ, the ridge on each leaf's value.
    """

    n_trees: int = 50
    depth: int = 5
    learning_rate: float = 0.2
    l2: float = 1.0


@dataclass
class ObliviousEnsemble:
    """Boosted oblivious trees of B × M problems and their predictions on the training coalitions.

    Attributes
    ----------
    players : int array of shape (T, B, M, D)
        The player each level of each tree splits on.
    leaves : array of shape (T, B, M, 2^D)
        Leaf values; leaf index ``Σ_l bit_l 2^(D − 1 − l)``, bit_l = 1 when level l's player is in S.
    predictions : array of shape (B, n, M)
        The ensemble at each row's coalitions.
    """

    players: Any
    leaves: Any
    predictions: Any


def fit_oblivious_boosting(
    masks: Any, targets: Any, weights: Any, settings: BoostingSettings, backend: Any
) -> ObliviousEnsemble:
    """Fit boosted oblivious trees to ``targets`` of every problem, by squared loss.

    Parameters
    ----------
    masks : bool array of shape (B, n, d)
        The coalitions of each row (the training inputs of the row's M problems).
    targets : float array of shape (B, n, M)
        Targets of each problem at each coalition.
    weights : float array of shape (B, n, M)
        Training weight of each coalition in each problem (0: held out; it is still predicted).
    settings : BoostingSettings
    backend : ArrayBackend
        Where the arrays live, and its fit (:meth:`~sklearn_shapq.backends.ArrayBackend.fit_oblivious_trees`).

    Returns
    -------
    ObliviousEnsemble

    Examples
    --------
    >>> masks = np.array([[[0, 0], [1, 0], [0, 1], [1, 1]]], dtype=bool)
    >>> targets = (2.0 * masks[..., 0] + masks[..., 1])[..., None]  # (1, 4, 1): v(S) = 2 x0 + x1
    >>> from sklearn_shapq.backends import CpuBackend
    >>> settings = BoostingSettings(200, 2, 0.5, 0.0)
    >>> fit = fit_oblivious_boosting(masks, targets, np.ones_like(targets), settings, CpuBackend())
    >>> np.round(fit.predictions[0, :, 0], 6).tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    depth = min(settings.depth, masks.shape[2])
    players, leaves, predictions = backend.fit_oblivious_trees(
        masks, targets, weights, settings.n_trees, depth, settings.learning_rate, settings.l2
    )
    return ObliviousEnsemble(players, leaves, predictions)


def oblivious_shapley(ensemble: ObliviousEnsemble, n_players: int, xp: Any = np) -> Any:
    """Exact Shapley values of the ensemble as a game, S ↦ f(1_S): (B, M, d).

    A leaf with value c asks players A in S and players B out of S (|A| = a, |B| = b). The game
    ``c · [A ⊆ S] · [B ∩ S = ∅]`` gives each i ∈ A ``c (a − 1)! b! / (a + b)!`` and each i ∈ B
    ``−c a! (b − 1)! / (a + b)!`` (the probability, over orderings, that i comes last of A with
    all of B after it, or first of B with all of A before it), and nothing to the other players.

    Examples
    --------
    >>> ensemble = ObliviousEnsemble(np.array([[[[1, 0]]]]), np.array([[[[0.0, 0.0, 0.0, 6.0]]]]), None)
    >>> oblivious_shapley(ensemble, 3)[0, 0].tolist()  # 6 · x0 · x1: 3 each
    [3.0, 3.0, 0.0]
    """
    depth = ensemble.players.shape[-1]
    leaf = np.arange(2**depth)
    bits = (leaf[:, None] >> (depth - 1 - np.arange(depth))) & 1  # (2^D, D)
    inside = bits.sum(axis=1)  # a of each leaf
    share_in = np.array([factorial(max(a - 1, 0)) * factorial(depth - a) for a in inside]) / factorial(depth)
    share_out = np.array([-factorial(a) * factorial(max(depth - a - 1, 0)) for a in inside]) / factorial(depth)
    shares = xp.asarray(np.where(bits == 1, share_in[:, None], share_out[:, None]))  # (2^D, D)
    per_level = xp.matmul(ensemble.leaves, shares)  # (T, B, M, D)
    one_hot = ensemble.players[..., None] == xp.arange(n_players)  # (T, B, M, D, d)
    return (per_level[..., None] * one_hot).sum(axis=(0, 3))
