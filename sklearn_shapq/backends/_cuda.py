"""CUDA backend: cupy arrays and cupy kernels. cupy is imported only when this backend is built."""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.backends._array_ops import PAIR_BLOCK_BYTES, ArrayBackend
from sklearn_shapq.backends._feistel import CUDA_KEYED_ORDERINGS, CUDA_KEYED_ORDERINGS_KERNEL, check_ordering_args
from sklearn_shapq.backends._product_kernel import (
    CUDA_PAIR_QUADRATURE,
    CUDA_PAIR_QUADRATURE_KERNEL,
    pair_shapley_array,
    player_columns,
    unit_gauss_legendre,
)

_MASKED_ROWS_SOURCE = r"""
    // i indexes the output (P*N, d) row-major; decode (pair p, background row n, feature j)
    const long long j = i % d;
    const long long row = i / d;
    const long long n = row % n_background;
    const long long p = row / n_background;
    out = masks[p * d + j] ? x[p * d + j] : background[n * d + j];
"""

_PAIR_THREADS = 128  # threads per block of the product-kernel quadrature kernel
_ORDERINGS_PER_BLOCK = 8  # warps (one per ordering) per thread block of the keyed-orderings kernel


class CudaBackend(ArrayBackend):
    """cupy arrays on one CUDA device, with cupy kernels for masked rows and keyed orderings.

    The kernels' twins are :class:`CpuBackend`'s numba kernels and the array code; ``gpu`` tests compare them.

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
        self._pair_kernels: dict[int, Any] = {}

    def __reduce__(self) -> tuple:
        return (CudaBackend, (self.device_id,))

    def activate(self) -> Any:
        """Make this backend's CUDA device current (a ``cupy.cuda.Device`` context)."""
        return self.device

    def to_device(self, a: Any, dtype: Any = None) -> Any:
        """Copy ``a`` to this backend's device."""
        with self.device:
            return self.xp.asarray(a, dtype=dtype)

    def masked_rows(self, x: Any, masks: Any, background: Any, out: Any = None) -> Any:
        """Model input rows of the interventional game, built by a cupy kernel."""
        cp = self.xp
        with self.device:
            n_pairs, d = masks.shape
            dtype = cp.result_type(x.dtype, background.dtype)
            if out is None:
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
        """Feature orderings by a cupy kernel, bit-identical to :meth:`ArrayBackend.keyed_orderings`."""
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

    def _pair_kernel(self, n_nodes: int) -> Any:
        """Return the quadrature RawKernel compiled for at most the next power of two of nodes."""
        capacity = max(8, 1 << (n_nodes - 1).bit_length())
        if capacity not in self._pair_kernels:
            source = f"#define MAX_NODES {capacity}\n" + CUDA_PAIR_QUADRATURE
            self._pair_kernels[capacity] = self.xp.RawKernel(source, CUDA_PAIR_QUADRATURE_KERNEL)
        return self._pair_kernels[capacity]

    def product_kernel_shapley(
        self,
        queries: Any,
        anchors: Any,
        references: Any,
        kinds: np.ndarray,
        gammas: np.ndarray,
        weights: Any,
        algorithm: str = "quadrature",
        max_bytes: int = PAIR_BLOCK_BYTES,
        players: Any = None,
    ) -> Any:
        """:meth:`ArrayBackend.product_kernel_shapley` on the GPU: "quadrature" as a RawKernel, a thread per pair."""
        cp = self.xp
        with self.device:
            queries, anchors, weights = (cp.asarray(a, dtype=cp.float64) for a in (queries, anchors, weights))
            if references is not None:
                references = cp.asarray(references, dtype=cp.float64)
            if algorithm != "quadrature":
                return super().product_kernel_shapley(
                    queries, anchors, references, kinds, gammas, weights, algorithm, max_bytes, players
                )
            d = queries.shape[1]
            order, starts = player_columns(players, d)
            n_players = starts.size - 1
            tau, omega = (cp.asarray(a) for a in unit_gauss_legendre(n_players))
            kernel = self._pair_kernel(int(tau.size))
            kinds_dev = cp.asarray(kinds, dtype=cp.int8)
            gammas_dev = cp.asarray(gammas, dtype=cp.float64)
            order_dev, starts_dev = cp.asarray(order), cp.asarray(starts)
            refs = cp.empty((0, d)) if references is None else cp.ascontiguousarray(references)

            def contributions(q: Any, x: Any, _: Any) -> Any:
                q, x = cp.ascontiguousarray(q), cp.ascontiguousarray(x)
                out = cp.empty((q.shape[0], x.shape[0], n_players))
                n_pairs = q.shape[0] * x.shape[0]
                kernel(
                    (-(-n_pairs // _PAIR_THREADS),),
                    (_PAIR_THREADS,),
                    (
                        q,
                        x,
                        refs,
                        kinds_dev,
                        gammas_dev,
                        order_dev,
                        starts_dev,
                        tau,
                        omega,
                        np.int32(tau.size),
                        np.int64(q.shape[0]),
                        np.int64(x.shape[0]),
                        np.int64(refs.shape[0]),
                        np.int64(d),
                        np.int64(n_players),
                        out,
                    ),
                )
                return out

            return pair_shapley_array(
                cp,
                queries,
                anchors,
                references,
                kinds,
                gammas,
                weights,
                algorithm,
                max_bytes,
                players,
                contributions=contributions,
                bytes_per_pair=8 * max(d, n_players),
            )
