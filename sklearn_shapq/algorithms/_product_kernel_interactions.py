"""Exact pairwise interactions of product-kernel games, in the conventions users meet.

Indices (p players, rows of the matrix sum as stated):

- "shap" (shap's TreeExplainer ``shap_interaction_values``): Φ_ij = SII_ij / 2 (i ≠ j),
  Φ_ii = φ_i − Σ_{j≠i} Φ_ij; row i sums to φ_i, the matrix to v(N) − v(∅).
- "k-SII" (order-2 k-SII, Bordt and von Luxburg 2023): SII_ij off the diagonal, the singletons
  φ_i − ½ Σ_{j≠i} SII_ij on it; the diagonal and upper triangle sum to v(N) − v(∅).
- "SII" (Grabisch and Roubens 1999): SII_ij off the diagonal, the SII of the singleton, φ_i, on it.
- "STII" (Shapley–Taylor of order 2, Sundararajan et al. 2020): STII_ij off the diagonal, the
  Möbius singletons v({i}) − v(∅) on it; the diagonal and upper triangle sum to v(N) − v(∅).
- "FSII" (Faith-Shap of order 2, Tsai et al. 2023): the coefficients of the order-2 polynomial in
  the players' indicators closest to v in the Shapley kernel's weights, v(∅) and v(N) matched:
  pairs off the diagonal, singletons on it; the diagonal and upper triangle sum to v(N) − v(∅).
  From the Möbius transform m (their Theorem 19, checked against the weighted least squares in the
  tests): FSII_ij = m(ij) + ½ Σ_{T⊋ij} C(t−1, 2) / C(t+1, 4) m(T) and
  FSII_i = m(i) − ⅔ Σ_{T∋i, t≥3} C(t−1, 2) / C(t+1, 3) m(T), t = |T|. No closed form of the
  product-kernel games is known: they are enumerated, up to :data:`MAX_FSII_PLAYERS` players.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from sklearn_shapq.algorithms._registry import DEFAULT_MASK_BYTES
from sklearn_shapq.backends import pair_interactions_array, pair_interactions_threaded
from sklearn_shapq.games import coalition_masks
from sklearn_shapq.samplers import single_threaded_blas

INTERACTION_INDICES = ("shap", "k-SII", "SII", "STII", "FSII")
"""The ``index`` options of :func:`product_kernel_interactions`."""
EXACT_ONLY_INDICES = ("FSII",)
"""Indices computed only from all 2^p coalitions (no closed form, no unbiased estimator here)."""
MAX_FSII_PLAYERS = 16
"""The most players whose FSII a product-kernel game gives, by enumerating its 2^p coalitions."""
_CODE_CHUNK = 1 << 16


def check_interaction_index(index: Any) -> str:
    """Return ``index`` if it is one of :data:`INTERACTION_INDICES`; else raise a ValueError naming it.

    Examples
    --------
    >>> check_interaction_index("stii")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The 'index' parameter must be one of (...); got 'stii'. Did you mean 'STII'?
    """
    if not isinstance(index, str) or index not in INTERACTION_INDICES:
        spelled = [name for name in INTERACTION_INDICES if isinstance(index, str) and _folded(name) == _folded(index)]
        hint = f" Did you mean {spelled[0]!r}?" if spelled else ""
        raise ValueError(f"The 'index' parameter must be one of {INTERACTION_INDICES}; got {index!r}.{hint}")
    return index


def check_product_kernel_players(index: str, n_players: int) -> None:
    """Refuse an index of :data:`EXACT_ONLY_INDICES` of more than :data:`MAX_FSII_PLAYERS` players.

    Examples
    --------
    >>> check_product_kernel_players("FSII", 16)
    >>> check_product_kernel_players("shap", 100)
    """
    if index in EXACT_ONLY_INDICES and n_players > MAX_FSII_PLAYERS:
        raise ValueError(
            f"index={index!r} enumerates the 2^p coalitions of a product-kernel game, up to p = {MAX_FSII_PLAYERS} "
            f"players; this explainer has {n_players}. Use 'shap', 'k-SII', 'SII' or 'STII' (exact at any p), or "
            "feature_groups= to explain fewer players."
        )


def _folded(name: str) -> str:
    """``name`` without case and hyphens: how a mistyped index is matched to the one it means."""
    return name.lower().replace("-", "")


def interaction_matrix(pairs: Any, singles: Any, index: str, xp: Any = np) -> Any:
    """Assemble the (B, p, p, k) matrix of ``index`` from pairs (zero diagonal) and singletons (B, p, k).

    ``pairs`` are SII and ``singles`` the Shapley values for "shap", "k-SII" and "SII"; STII and
    v({i}) − v(∅) for "STII"; FSII's pairs and singletons for "FSII".

    Examples
    --------
    >>> sii = np.array([[0.0, 2.0], [2.0, 0.0]])[None, :, :, None]
    >>> phi = np.array([3.0, 1.0])[None, :, None]
    >>> interaction_matrix(sii, phi, "shap")[0, :, :, 0].tolist()
    [[2.0, 1.0], [1.0, 0.0]]
    """
    check_interaction_index(index)
    n_players = pairs.shape[1]
    diagonal = xp.arange(n_players)
    if index == "shap":
        out = pairs / 2.0
        out[:, diagonal, diagonal] = singles - out.sum(axis=2)
    elif index == "k-SII":
        out = pairs.copy()
        out[:, diagonal, diagonal] = singles - out.sum(axis=2) / 2.0
    else:  # "SII", "STII", "FSII": the singletons themselves
        out = pairs.copy()
        out[:, diagonal, diagonal] = singles
    return out


def interactions_from_table(table: Any, index: str, xp: Any = np) -> tuple[Any, Any]:
    """Pairs and singletons of ``index`` from the values of all 2^p coalitions (B, 2^p, k), by the Möbius transform.

    SII_ij = Σ_{T⊇ij} m(T) / (|T| − 1), STII_ij = Σ_{T⊇ij} 2 m(T) / (|T| (|T| − 1)),
    φ_i = Σ_{T∋i} m(T) / |T|, v({i}) − v(∅) = m({i}); FSII as in the module docstring.
    """
    n_rows, n_coalitions, k = table.shape
    p = n_coalitions.bit_length() - 1
    moebius = table.copy()
    for j in range(p):  # a loop over players; every coalition in array code
        split = moebius.reshape(n_rows, n_coalitions >> (j + 1), 2, 1 << j, k)
        split[:, :, 1] -= split[:, :, 0]
    masks = coalition_masks(xp.arange(n_coalitions, dtype=xp.int64), p, xp).astype(xp.float64)  # (C, p)
    sizes = masks.sum(axis=1)
    present = xp.maximum(sizes, 1.0)
    if index == "STII":
        pair_weight = xp.where(sizes >= 2, 2.0 / (present * xp.maximum(sizes - 1.0, 1.0)), 0.0)
        singles = moebius[:, xp.asarray(1 << np.arange(p))]  # m({i}) = v({i}) − v(∅)
    elif index == "FSII":
        pair_weight, single_weight = (xp.asarray(w) for w in _faith_weights(p))
        singles = xp.einsum("cp,bck->bpk", masks, moebius * single_weight[sizes.astype(xp.int64)][None, :, None])
        pair_weight = pair_weight[sizes.astype(xp.int64)]
    else:
        pair_weight = xp.where(sizes >= 2, 1.0 / xp.maximum(sizes - 1.0, 1.0), 0.0)
        singles = xp.einsum("cp,bck->bpk", masks, moebius / present[None, :, None])
    pairs = xp.einsum("cp,cq,bck->bpqk", masks, masks, moebius * pair_weight[None, :, None])
    diagonal = xp.arange(p)
    pairs[:, diagonal, diagonal] = 0.0
    return pairs, singles


def _faith_weights(p: int) -> tuple[np.ndarray, np.ndarray]:
    """FSII's weights of m(T) by |T| = 0 … p: in a pair's sum (T ⊇ ij) and in a singleton's (T ∋ i).

    Examples
    --------
    >>> pair, single = _faith_weights(4)
    >>> pair.round(4).tolist(), single.round(4).tolist()
    ([0.0, 0.0, 1.0, 0.5, 0.3], [0.0, 1.0, 0.0, -0.1667, -0.2])
    """
    pair, single = np.zeros(p + 1), np.zeros(p + 1)
    single[1:2] = 1.0  # m({i}) itself (where p ≥ 1)
    pair[2:3] = 1.0  # m({i, j}) itself (where p ≥ 2)
    for t in range(3, p + 1):  # the larger coalitions' share
        pair[t] = 0.5 * comb(t - 1, 2) / comb(t + 1, 4)
        single[t] = -2.0 / 3.0 * comb(t - 1, 2) / comb(t + 1, 3)
    return pair, single


def enumerated_interactions(
    game: Any, games: Any, index: str, max_mask_bytes: int = DEFAULT_MASK_BYTES
) -> tuple[Any, Any]:
    """Pairs and singletons of ``index`` (as :func:`interactions_from_table`) from all 2^p coalitions of any ``game``.

    ``games`` (B,) are the game's games; the oracle of the product-kernel algorithms and the exact
    path of the permutation explainer's interactions. Returns arrays (B, p, p, k) and (B, p, k).
    """
    backend = game.backend
    xp = backend.xp
    p, k = game.n_players, game.n_outputs
    games = backend.to_device(games)
    n_rows = games.shape[0]
    n_coalitions = 1 << p
    table = xp.empty((n_rows, n_coalitions, k), dtype=xp.float64)
    table[:, 0] = game.empty_value[games]
    table[:, -1] = game.full_value[games]
    step = max(1, min(_CODE_CHUNK, max_mask_bytes // max(1, 8 * n_rows * p)))
    for start in range(1, n_coalitions - 1, step):
        stop = min(start + step, n_coalitions - 1)
        masks = coalition_masks(xp.arange(start, stop, dtype=xp.int64), p, xp)
        table[:, start:stop] = game.grid(games, xp.broadcast_to(masks, (n_rows, stop - start, p)))
    return interactions_from_table(table, index, xp)


@single_threaded_blas
def _threaded(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """Run the numpy twin on the package's threads, one BLAS thread each (BLAS threads would wait on them)."""
    return pair_interactions_threaded(*args, **kwargs)


def _pair_interactions(backend: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """Run the pair kernel: array code on a GPU, the same code on threads on the CPU."""
    if backend.is_gpu:
        return pair_interactions_array(backend.xp, *args, **kwargs)
    return _threaded(*args, **kwargs)


def product_kernel_interactions(game: Any, games: Any, index: str = "shap", algorithm: str = "quadrature") -> Any:
    """Exact order-2 interaction matrices of games ``games`` of a :class:`~sklearn_shapq.games.ProductKernelGame`.

    Parameters
    ----------
    game : ProductKernelGame
    games : int array of shape (B,)
        Which explained rows of the game.
    index : {"shap", "k-SII", "SII", "STII", "FSII"}, default="shap"
        The convention (module docstring).
    algorithm : {"quadrature", "prefix_suffix", "brute_force"}, default="quadrature"
        "brute_force" enumerates the 2^p coalitions (the oracle); the others run the exact
        Gauss–Legendre form of the backends, O(n L p³) per row (n anchors, L references).
        "FSII" is always enumerated (at most :data:`MAX_FSII_PLAYERS` players).

    Returns
    -------
    array of shape (B, n_players, n_players, n_outputs)
    """
    check_interaction_index(index)
    backend = game.backend
    xp = backend.xp
    pair_index = "stii" if index == "STII" else "sii"
    check_product_kernel_players(index, game.n_players)
    if algorithm == "brute_force" or index in EXACT_ONLY_INDICES:
        pairs, singles = enumerated_interactions(game, games, index)
        return interaction_matrix(pairs, singles, index, xp)
    x = game.x[backend.to_device(games)]
    players = None if game.feature_groups is None else game.feature_groups.player_of_column
    pairs, singles = 0.0, 0.0
    for component in game.expansion.components:
        component_pairs, component_singles = _pair_interactions(
            backend,
            x,
            backend.to_device(component.anchors),
            game.references,
            component.kinds,
            component.gammas,
            backend.to_device(component.weights[None]),
            pair_index,
            players=players,
        )
        pairs, singles = pairs + component_pairs, singles + component_singles
    return interaction_matrix(pairs, singles, index, xp)
