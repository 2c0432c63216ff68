"""Backend written against an array namespace ``xp``: cupy on a GPU, numpy to test that code path in CI."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from types import ModuleType
from typing import Any

import numpy as np
import scipy.special

from sklearn_shapq.backends._feistel import check_ordering_args, variable_philox
from sklearn_shapq.backends._oblivious_fit import fit_oblivious_array
from sklearn_shapq.backends._paired_regression import paired_regression_array
from sklearn_shapq.backends._product_kernel import pair_shapley_array

PAIR_BLOCK_BYTES = 128 * 2**20
"""Temporaries of one block of (query, anchor) pairs in ``product_kernel_shapley``."""

# rows of the (rows, 2**bits) cipher grid evaluated at once in keyed_orderings: bounds the uint64
# temporaries to a few times 32 MiB
_GRID_ELEMENTS = 1 << 22


class ArrayBackend:
    """Array-namespace backend: every operation is plain ``xp`` (numpy or cupy) array code; ``name`` is reported."""

    def __init__(self, xp: ModuleType = np, name: str = "array") -> None:
        self.xp = xp
        self.name = name

    def __reduce__(self) -> tuple:
        # modules do not pickle; rebuild from the namespace name instead
        return (_rebuild_array_backend, (self.xp.__name__, self.name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    @property
    def is_gpu(self) -> bool:
        """Whether arrays of this backend live on a GPU."""
        return self.xp is not np

    def activate(self) -> AbstractContextManager:
        """Context in which this backend's arrays are created (the CUDA device; nothing on CPU)."""
        return nullcontext()

    def compile_ahead(self, *operations: str) -> None:
        """Announce the operations that follow the model's predictions, for a backend to compile ahead; none here.

        See :meth:`CpuBackend.compile_ahead <sklearn_shapq.backends.CpuBackend.compile_ahead>`.
        """

    def to_device(self, a: Any, dtype: Any = None) -> Any:
        """Return ``a`` as an array of this backend."""
        return self.xp.asarray(a, dtype=dtype)

    def to_numpy(self, a: Any) -> np.ndarray:
        """Return ``a`` as a host numpy array."""
        if isinstance(a, np.ndarray):
            return a
        get = getattr(a, "get", None)
        return np.asarray(get() if get is not None else a)

    def masked_rows(self, x: Any, masks: Any, background: Any, out: Any = None) -> Any:
        """Interventional model input rows: row ``p * N + n`` is ``x[p]`` on ``masks[p]``, else ``background[n]``.

        ``x`` and ``masks`` are (P, d), ``background`` (N, d); returns (P * N, d), into the reused
        buffer ``out`` when given.
        """
        xp = self.xp
        rows = xp.where(masks[:, None, :], x[:, None, :], background[None, :, :])
        rows = rows.reshape(masks.shape[0] * background.shape[0], masks.shape[1])
        if out is None:
            return rows
        out[...] = rows
        return out

    def part_masked_rows(
        self, x: Any, x_rows: Any, masks: Any, background: Any, first_rows: Any, part_size: int, out: Any = None
    ) -> Any:
        """Model input rows of games split by background parts: coalition p against its part's M rows.

        Row ``p * M + i`` (M = ``part_size``) is ``x[x_rows[p]]`` on ``masks[p]`` (P, d), else
        ``background[first_rows[p] + i]``; returns (P * M, d), into ``out`` when given.
        """
        xp = self.xp
        others = background[first_rows[:, None] + xp.arange(part_size)[None, :]]  # (P, M, d)
        rows = xp.where(masks[:, None, :], x[x_rows][:, None, :], others).reshape(-1, masks.shape[1])
        if out is None:
            return rows
        out[...] = rows
        return out

    def prefix_rows(
        self,
        x: Any,
        x_rows: Any,
        ranks: Any,
        background: Any,
        first_rows: Any,
        part_size: int,
        start: int,
        stop: int,
        out: Any = None,
    ) -> Any:
        """Model input rows of walk prefixes: :meth:`part_masked_rows` of coalitions given by orderings.

        Coalition c is prefix ``c mod (d − 1) + 1`` of ordering ``c div (d − 1)`` of ``ranks`` (m, d);
        coalitions ``start`` … ``stop − 1`` are written, ((stop − start) M, d).
        """
        xp = self.xp
        steps = ranks.shape[1] - 1
        coalitions = xp.arange(start, stop)
        orderings = coalitions // steps
        masks = ranks[orderings] < (coalitions % steps + 1)[:, None]
        if part_size == background.shape[0]:  # one part: the backend's masked_rows (a kernel on a GPU)
            return self.masked_rows(x[x_rows[orderings]], masks, background, out)
        return self.part_masked_rows(x, x_rows[orderings], masks, background, first_rows[orderings], part_size, out)

    def paired_regression(
        self,
        first_masks: Any,
        weights: Any,
        groups: np.ndarray,
        n_groups: int,
        pair_targets: Any,
        leave_outs: bool,
    ) -> tuple[Any, Any]:
        """Leverage SHAP's regression on complementary pairs, with all groups and without each group g ≥ 1.

        ``first_masks`` (B, P, d) are each pair's S, ``weights`` and host ``groups`` (P,),
        ``pair_targets`` (B, P, n_outputs) b_S − b_{N∖S}. Returns the full solutions
        (B, d, n_outputs) and, with ``leave_outs``, those without each group (B, n_groups − 1, d, n_outputs).
        """
        return paired_regression_array(first_masks, weights, groups, n_groups, pair_targets, leave_outs, self.xp)

    def background_mean(self, outputs: Any, n_background: int) -> Any:
        """Average ``outputs`` (P * N, n_outputs) over consecutive blocks of N rows → (P, n_outputs)."""
        k = outputs.shape[1]
        return outputs.reshape(-1, n_background, k).mean(axis=1)

    def keyed_orderings(self, keys: Any, n_features: int) -> Any:
        """Feature orderings: the VariablePhilox bijection keyed by ``keys[p]``, compacted to ``[0, d)``.

        ``keys`` (P, R) give int32 orderings (P, d), bit-identical on every backend.

        Examples
        --------
        >>> from sklearn_shapq.backends._feistel import ordering_keys
        >>> orderings = ArrayBackend(np).keyed_orderings(ordering_keys(0, np.arange(3)), 6)
        >>> orderings.shape, orderings.dtype
        ((3, 6), dtype('int32'))
        >>> sorted(orderings[0].tolist())
        [0, 1, 2, 3, 4, 5]
        """
        xp = self.xp
        keys = xp.asarray(keys, dtype=xp.uint32)
        bits = check_ordering_args(keys, n_features)
        domain = xp.arange(1 << bits, dtype=xp.uint64)
        out = xp.empty((keys.shape[0], n_features), dtype=xp.int32)
        rows_per_block = max(1, _GRID_ELEMENTS >> bits)
        for start in range(0, keys.shape[0], rows_per_block):
            block = keys[start : start + rows_per_block]
            images = variable_philox(xp.broadcast_to(domain, (block.shape[0], domain.size)), block, bits, xp)
            # a bijection: every row holds exactly d values below d, and boolean indexing keeps
            # them row by row in domain order, which is the compaction
            out[start : start + block.shape[0]] = images[images < np.uint64(n_features)].reshape(-1, n_features)
        return out

    def fit_oblivious_trees(
        self, masks: Any, targets: Any, weights: Any, n_trees: int, depth: int, learning_rate: float, l2: float
    ) -> tuple[Any, Any, Any]:
        """Fit boosted oblivious trees by squared loss to B × M problems on coalition masks.

        ``masks`` (B, n, d), ``targets`` and ``weights`` (B, n, M) (weight 0: held out). Returns the
        levels' players (n_trees, B, M, depth), leaves (n_trees, B, M, 2^depth) and predictions (B, n, M).
        """
        return fit_oblivious_array(masks, targets, weights, n_trees, depth, learning_rate, l2, self.xp)

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
        """Weighted exact Shapley values of the two-factor product games of (query, anchor) pairs.

        Returns Σ_i w[q, i] mean_l φ(q, i, l), (Q, n_players, n_outputs), for ``queries`` (Q, d),
        ``anchors`` (n, d), ``references`` (L, d) or None and ``weights`` (1 or Q, n, n_outputs);
        ``players`` maps columns to players. See :mod:`sklearn_shapq.backends._product_kernel`.
        """
        return pair_shapley_array(
            self.xp, queries, anchors, references, kinds, gammas, weights, algorithm, max_bytes, players
        )


def repeat_counts(values: Any, counts: Any, xp: ModuleType) -> Any:
    """``numpy.repeat`` with per-entry counts kept on the device (cupy 13 takes host counts only).

    Examples
    --------
    >>> repeat_counts(np.array([4, 7, 9]), np.array([2, 0, 3]), np).tolist()
    [4, 4, 9, 9, 9]
    """
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if counts.size else 0
    return values[xp.searchsorted(ends, xp.arange(total), side="right")]


def scipy_special(xp: ModuleType) -> ModuleType:
    """``cupyx.scipy.special`` for cupy arrays, else ``scipy.special`` (numpy ufuncs, which numpy arrays take)."""
    if xp.__name__ != "cupy":
        return scipy.special
    import cupyx.scipy.special

    return cupyx.scipy.special


def _rebuild_array_backend(module_name: str, name: str) -> ArrayBackend:
    import importlib

    return ArrayBackend(importlib.import_module(module_name), name)
