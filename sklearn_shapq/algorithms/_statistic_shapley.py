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
    algorithm: str,
    block_rows: int,
    progress: bool = False,
    players: np.ndarray | None = None,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Shapley values of the game v(S) = Σ_ab W_ab Π_{j∈S} k_j(u_aj, u_bj), one per player.

    Only pairs b > a are evaluated, with doubled weights (W is symmetric, the diagonal adds
    nothing), in tiles of ``block_rows`` rows summed in a fixed order: bit-identical for any
    ``n_jobs`` and joblib backend. Inputs are trusted.

    ``U`` (N, d) is the pooled sample, ``weights`` an :class:`~sklearn_shapq.games.MMDWeights` or
    :class:`~sklearn_shapq.games.HSICWeights`, ``kinds`` and ``gammas`` (d,) the kernel factors,
    ``players`` (d,) each feature's player (None: its own). Returns (n_players,).

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
        delayed(_tile_shapley)(samples, weights, start, stop, kinds, gammas, backend, algorithm, players)
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
    algorithm: str,
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
        algorithm,
        players=players,
    )
    return backend.to_numpy(block.sum(axis=0))[:, 0]
