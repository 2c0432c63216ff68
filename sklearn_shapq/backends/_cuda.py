"""CUDA backend: cupy arrays and cupy kernels. cupy is imported only when this backend is built."""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.backends._array_ops import ArrayBackend
from sklearn_shapq.backends._feistel import CUDA_KEYED_ORDERINGS, CUDA_KEYED_ORDERINGS_KERNEL, check_ordering_args

_MASKED_ROWS_SOURCE = r"""
    // i indexes the output (P*N, d) row-major; decode (pair p, background row n, feature j)
    const long long j = i % d;
    const long long row = i / d;
    const long long n = row % n_background;
    const long long p = row / n_background;
    out = masks[p * d + j] ? x[p * d + j] : background[n * d + j];
"""

_ORDERINGS_PER_BLOCK = 8  # warps (one per ordering) per thread block of the keyed-orderings kernel


class CudaBackend(ArrayBackend):
    """cupy arrays on one CUDA device, with cupy kernels for masked rows and keyed orderings.

    The masked-rows kernel's twins are the numba kernel of :class:`CpuBackend` (the same
    per-element rule) and :meth:`ArrayBackend.masked_rows` (the array code CI runs with numpy); a
    ``gpu`` test compares the kernel with them on a real device. The keyed-orderings RawKernel (one
    warp per ordering) is likewise compared bit for bit with the numba kernel of :class:`CpuBackend`.

    Parameters
    ----------
    device_id : int
        CUDA device ordinal.
    """

    def __init__(self, device_id: int = 0) -> None:
        import cupy

        super().__init__(cupy, f"cuda:{device_id}")
        self.device_id = device_id
        self.device = cupy.cuda.Device(device_id)
        self._kernel = cupy.ElementwiseKernel(
            "raw T x, raw bool masks, raw T background, int64 d, int64 n_background",
            "T out",
            _MASKED_ROWS_SOURCE,
            "sklearn_shapq_masked_rows",
        )
        self._orderings_kernel = cupy.RawKernel(CUDA_KEYED_ORDERINGS, CUDA_KEYED_ORDERINGS_KERNEL)

    def __reduce__(self) -> tuple:
        return (CudaBackend, (self.device_id,))

    def activate(self) -> Any:
        """Make this backend's CUDA device current (a ``cupy.cuda.Device`` context)."""
        return self.device

    def to_device(self, a: Any, dtype: Any = None) -> Any:
        """Copy ``a`` to this backend's device."""
        with self.device:
            return self.xp.asarray(a, dtype=dtype)

    def masked_rows(self, x: Any, masks: Any, background: Any) -> Any:
        """Model input rows of the interventional game, built by a cupy kernel."""
        cp = self.xp
        with self.device:
            n_pairs, d = masks.shape
            dtype = cp.result_type(x.dtype, background.dtype)
            out = cp.empty((n_pairs * background.shape[0], d), dtype=dtype)
            self._kernel(
                cp.ascontiguousarray(x, dtype=dtype),
                cp.ascontiguousarray(masks, dtype=cp.bool_),
                cp.ascontiguousarray(background, dtype=dtype),
                d,
                background.shape[0],
                out,
            )
            return out

    def keyed_orderings(self, keys: Any, n_features: int) -> Any:
        """Feature orderings defined by round keys, by a cupy kernel (one warp per ordering).

        See :meth:`ArrayBackend.keyed_orderings`; the result is bit-identical.
        """
        cp = self.xp
        with self.device:
            keys = cp.ascontiguousarray(cp.asarray(keys, dtype=cp.uint32))
            bits = check_ordering_args(keys, n_features)
            n_rows = keys.shape[0]
            out = cp.empty((n_rows, n_features), dtype=cp.int32)
            if n_rows:
                self._orderings_kernel(
                    (-(-n_rows // _ORDERINGS_PER_BLOCK),),
                    (32 * _ORDERINGS_PER_BLOCK,),
                    (keys, np.int64(n_rows), np.int32(keys.shape[1]), np.int32(bits), np.int64(n_features), out),
                )
            return out
