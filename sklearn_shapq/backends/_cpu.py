"""CPU backend: numpy arrays plus numba kernels for the loops numpy would need temporaries for."""

from __future__ import annotations

import numba
import numpy as np

from sklearn_shapq.backends._array_ops import ArrayBackend


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
    """numpy arrays; numba for building masked model inputs without temporaries."""

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
