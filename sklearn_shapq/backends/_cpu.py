"""CPU backend: numpy arrays plus numba kernels for the loops numpy would need temporaries for."""

from __future__ import annotations

import numba
import numpy as np

from sklearn_shapq.backends._array_ops import ArrayBackend
from sklearn_shapq.backends._feistel import check_ordering_args, keyed_orderings_kernel
from sklearn_shapq.backends._product_kernel import pair_shapley_numba


@numba.njit(parallel=True, cache=True)
def _masked_rows_kernel(x: np.ndarray, masks: np.ndarray, background: np.ndarray, out: np.ndarray) -> None:
    n_pairs, d = masks.shape
    n_background = background.shape[0]
    for p in numba.prange(n_pairs):
        base = p * n_background
        for n in range(n_background):
            for j in range(d):
                out[base + n, j] = x[p, j] if masks[p, j] else background[n, j]


class CpuBackend(ArrayBackend):
    """numpy arrays; numba for building masked model inputs without temporaries and for orderings."""

    def __init__(self) -> None:
        super().__init__(np, "cpu")

    def __reduce__(self) -> tuple:
        return (CpuBackend, ())

    def masked_rows(self, x: np.ndarray, masks: np.ndarray, background: np.ndarray) -> np.ndarray:
        """Model input rows of the interventional game (see :meth:`ArrayBackend.masked_rows`)."""
        dtype = np.result_type(x.dtype, background.dtype)
        out = np.empty((masks.shape[0] * background.shape[0], masks.shape[1]), dtype=dtype)
        _masked_rows_kernel(
            np.ascontiguousarray(x, dtype=dtype),
            np.ascontiguousarray(masks, dtype=np.bool_),
            np.ascontiguousarray(background, dtype=dtype),
            out,
        )
        return out

    def keyed_orderings(self, keys: np.ndarray, n_features: int) -> np.ndarray:
        """Feature orderings defined by round keys, by a parallel numba kernel.

        See :meth:`ArrayBackend.keyed_orderings`; the result is bit-identical.

        Examples
        --------
        >>> from sklearn_shapq.backends._feistel import ordering_keys
        >>> orderings = CpuBackend().keyed_orderings(ordering_keys(0, np.arange(3)), 6)
        >>> bool((orderings == ArrayBackend(np).keyed_orderings(ordering_keys(0, np.arange(3)), 6)).all())
        True
        """
        keys = np.ascontiguousarray(keys, dtype=np.uint32)
        bits = check_ordering_args(keys, n_features)
        out = np.empty((keys.shape[0], n_features), dtype=np.int32)
        keyed_orderings_kernel(keys, bits, out)
        return out

    def product_kernel_shapley(
        self,
        queries: np.ndarray,
        anchors: np.ndarray,
        references: np.ndarray | None,
        kinds: np.ndarray,
        gammas: np.ndarray,
        weights: np.ndarray,
        method: str = "quadrature",
        max_bytes: int = 0,
    ) -> np.ndarray:
        """Run :meth:`ArrayBackend.product_kernel_shapley` as a parallel numba kernel.

        Each thread works in O(d) (quadrature) or O(d²) (prefix_suffix) memory, so ``max_bytes``
        is not needed.
        """
        return pair_shapley_numba(queries, anchors, references, kinds, gammas, weights, method)
