"""Exact Shapley values of product-kernel games (PKeX-Shapley and its two-factor generalisation)."""

from __future__ import annotations

from typing import Any

from sklearn_shapq.algorithms._exact import exact_shapley
from sklearn_shapq.backends import PREFIX_SUFFIX_MAX_FEATURES, PRODUCT_KERNEL_BACKEND_ALGORITHMS

PRODUCT_KERNEL_ALGORITHMS = ("auto", *PRODUCT_KERNEL_BACKEND_ALGORITHMS, "brute_force")
BRUTE_FORCE_MAX_FEATURES = 16
AUTO_PREFIX_SUFFIX_FEATURES = 512
"""Above this d "auto" uses the quadrature: the prefix polynomials overflow near d ≈ 1000."""


def resolve_product_kernel_algorithm(algorithm: str, n_features: int, on_gpu: bool) -> str:
    """Return the algorithm behind ``algorithm``: "auto" is "prefix_suffix" on the CPU for d <= 512, else "quadrature".

    Raises
    ------
    ValueError
        For "brute_force" above 16 features or "prefix_suffix" above 1000: limits that depend on d.

    Examples
    --------
    >>> [resolve_product_kernel_algorithm("auto", 10, on_gpu=gpu) for gpu in (False, True)]
    ['prefix_suffix', 'quadrature']
    """
    if algorithm == "brute_force" and n_features > BRUTE_FORCE_MAX_FEATURES:
        raise ValueError(
            f"algorithm='brute_force' enumerates 2^d coalitions and is limited to d <= {BRUTE_FORCE_MAX_FEATURES}; "
            f"got d = {n_features}. Use 'auto'."
        )
    if algorithm == "prefix_suffix" and n_features > PREFIX_SUFFIX_MAX_FEATURES:
        raise ValueError(
            f"algorithm='prefix_suffix' overflows beyond d = {PREFIX_SUFFIX_MAX_FEATURES} features (got "
            f"{n_features}); use 'quadrature' or 'auto'."
        )
    if algorithm != "auto":
        return algorithm
    return "prefix_suffix" if not on_gpu and n_features <= AUTO_PREFIX_SUFFIX_FEATURES else "quadrature"


def product_kernel_shapley(game: Any, games: Any, algorithm: str) -> Any:
    """Exact Shapley values of games ``games`` of a :class:`~sklearn_shapq.games.ProductKernelGame`.

    Parameters
    ----------
    game : ProductKernelGame
    games : int array of shape (B,)
        Which explained rows of the game.
    algorithm : {"prefix_suffix", "quadrature", "brute_force"}
        An O(n d²) algorithm per row, or enumeration of all coalitions (the oracle).

    Returns
    -------
    array of shape (B, n_players, n_outputs)
    """
    if algorithm == "brute_force":
        return exact_shapley(game, games)
    x = game.x[game.backend.to_device(games)]
    backend = game.backend
    players = None if game.feature_groups is None else game.feature_groups.player_of_column
    total = 0.0
    for component in game.expansion.components:
        total = total + backend.product_kernel_shapley(
            x,
            backend.to_device(component.anchors),
            game.references,
            component.kinds,
            component.gammas,
            backend.to_device(component.weights[None]),
            algorithm,
            players=players,
        )
    return total
