"""Exact Shapley attribution of kernel statistics Σ_ab W_ab Π_j k_j(u_aj, u_bj) (MMD², HSIC)."""

from __future__ import annotations

from typing import Any

import numpy as np
from joblib import Parallel, delayed

from sklearn_shapq._progress import progress_bar


def statistic_shapley(
    U: np.ndarray,
    weights: Any,
    kinds: np.ndarray,
    gammas: np.ndarray,
    backend: Any,
    method: str,
    block_rows: int,
    progress: bool = False,
    players: np.ndarray | None = None,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Shapley values of the game v(S) = Σ_ab W_ab Π_{j∈S} k_j(u_aj, u_bj), one per player.

    Each pair (a, b) is a product game with weight W_ab, so φ_j = Σ_ab W_ab φ_j(a, b); W is
    symmetric and the diagonal pairs (all factors 1) contribute nothing, so only pairs b > a are
    evaluated, with doubled weights. Rows are processed in tiles of ``block_rows`` rows (the pairs
    (a, b > a) of a in the tile): memory is O(block_rows · N) per tile for the weights, and the
    backend bounds its own temporaries. Tiles run through joblib (``n_jobs``; a Dask cluster under
    ``joblib.parallel_config(backend="dask")``) and are summed in their order, so the result is
    bit-identical for any ``n_jobs`` and backend. The inputs are trusted (the public classes
    validate them).

    Parameters
    ----------
    U : array of shape (N, d)
        The pooled sample.
    weights : object with ``rows(start, stop) -> (stop − start, N)``
        Weight provider (:class:`~sklearn_shapq.games.MMDWeights` or
        :class:`~sklearn_shapq.games.HSICWeights`).
    kinds, gammas : arrays of shape (d,)
        Per-feature kernel factors.
    backend : ArrayBackend
    method : {"prefix_suffix", "quadrature"}
    block_rows : int
        Rows of U per block (at least 1).
    progress : bool, default=False
        Show a delayed progress bar over the N (N − 1) / 2 pairs.
    players : int array of shape (d,), optional
        The player of each feature (:attr:`FeatureGroups.player_of_column`): a coalition holds
        all features of its players. None: each feature is a player.
    n_jobs : int or None, default=None
        Tiles evaluated at once by joblib (None: one at a time, in this process).

    Returns
    -------
    ndarray of shape (p,)
        One value per player (p = d without ``players``).

    Examples
    --------
    >>> from sklearn_shapq.backends import CpuBackend
    >>> from sklearn_shapq.games import MMDWeights
    >>> U = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [0.5, 0.5]])
    >>> phi = statistic_shapley(U, MMDWeights(2, 2, False), np.zeros(2, np.int8), np.ones(2), CpuBackend(),
    ...                         "prefix_suffix", block_rows=2)
    >>> phi.shape
    (2,)
    """
    n_samples, d = U.shape
    samples = backend.to_device(U)
    phi = np.zeros(d if players is None else int(np.max(players)) + 1)
    tiles = [(start, min(start + block_rows, n_samples)) for start in range(0, n_samples, block_rows)]
    parts = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_tile_shapley)(samples, weights, start, stop, kinds, gammas, backend, method, players)
        for start, stop in tiles
    )
    with progress_bar(progress, n_samples * (n_samples - 1) // 2, "attributing", "pair") as bar:
        for (start, stop), part in zip(tiles, parts, strict=True):  # a fixed order: bit-identical sums
            phi += part
            bar.update((stop - start) * (2 * n_samples - start - stop - 1) // 2)
    return phi


def _tile_shapley(
    samples: Any,
    weights: Any,
    start: int,
    stop: int,
    kinds: np.ndarray,
    gammas: np.ndarray,
    backend: Any,
    method: str,
    players: np.ndarray | None,
) -> np.ndarray:
    """Σ over the pairs (a, b > a) with a in rows start:stop of 2 W_ab φ(a, b), one value per player (host)."""
    upper = 2.0 * np.triu(weights.rows(start, stop)[:, start:], k=1)  # pairs b > a
    block = backend.product_kernel_shapley(
        samples[start:stop],
        samples[start:],
        None,
        kinds,
        gammas,
        backend.to_device(upper[:, :, None]),
        method,
        players=players,
    )
    return backend.to_numpy(block.sum(axis=0))[:, 0]
