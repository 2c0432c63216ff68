"""Boosted oblivious trees on coalition masks for B × M problems at once, and their exact Shapley values.

The surrogate of :mod:`._leverage_control_variate`; the fit is the backend's ``fit_oblivious_trees``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import factorial
from typing import Any

import numpy as np


@dataclass(frozen=True)
class BoostingSettings:
    """Size of the boosted ensemble: rounds, levels per tree (at most d), leaf shrinkage and leaf ridge λ."""

    n_trees: int = 50
    depth: int = 5
    learning_rate: float = 0.2
    l2: float = 1.0


@dataclass
class ObliviousEnsemble:
    """Boosted oblivious trees of B × M problems and their predictions on the training coalitions.

    ``players`` (T, B, M, D) of each level, ``leaves`` (T, B, M, 2^D) indexed by
    ``Σ_l bit_l 2^(D − 1 − l)`` (bit_l: level l's player in S), ``predictions`` (B, n, M).
    """

    players: Any
    leaves: Any
    predictions: Any


def fit_oblivious_boosting(
    masks: Any, targets: Any, weights: Any, settings: BoostingSettings, backend: Any
) -> ObliviousEnsemble:
    """Fit boosted oblivious trees to ``targets`` of every problem, by squared loss.

    ``masks`` (B, n, d) are shared by a row's M problems; ``targets`` and ``weights`` are (B, n, M)
    (weight 0: held out, still predicted).

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

    A leaf c · [A ⊆ S] · [B ∩ S = ∅] gives each i ∈ A ``c (a − 1)! b! / (a + b)!`` and each
    i ∈ B ``−c a! (b − 1)! / (a + b)!`` (a = |A|, b = |B|).

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
