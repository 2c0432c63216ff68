"""Backend written against an array namespace ``xp``.

The CUDA backend subclasses :class:`ArrayBackend` with ``xp = cupy`` and swaps in custom kernels;
with ``xp = numpy`` the very same code runs in CI, which is how the GPU code path is tested on
machines without a GPU (DESIGN.md, "Backends").
"""

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
    """Array-namespace backend: every operation is plain ``xp`` array code.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``.
    name : str
        Name reported in explanations and errors.
    """

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
        """Model input rows of the interventional game.

        Row ``p * N + n`` holds ``x[p, j]`` where ``masks[p, j]`` is true and ``background[n, j]``
        elsewhere: one block of N rows per (explained row, coalition) pair ``p``.

        Parameters
        ----------
        x : array of shape (P, d)
            The explained row of each pair.
        masks : bool array of shape (P, d)
            The coalition of each pair.
        background : array of shape (N, d)
            Background rows.
        out : array of shape (P * N, d), optional
            Where to write the rows (a buffer reused across calls, so that the memory of each
            call is not faulted in anew); its dtype must be that of ``x`` and ``background``
            combined.

        Returns
        -------
        array of shape (P * N, d)
            ``out`` when given.
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
        """Model input rows of games split by parts of the background: one block per coalition.

        Row ``p * M + i`` (M = ``part_size``) holds ``x[x_rows[p], j]`` where ``masks[p, j]`` is
        true and ``background[first_rows[p] + i, j]`` elsewhere: coalition p against the M
        background rows of its part. ``masked_rows`` is the case of one part (M = N).

        Parameters
        ----------
        x : array of shape (n, d)
            Explained rows.
        x_rows : int array of shape (P,)
            The explained row of each coalition.
        masks : bool array of shape (P, d)
        background : array of shape (N, d)
        first_rows : int array of shape (P,)
            The first background row of each coalition's part.
        part_size : int
        out : array of shape (P * M, d), optional
            Where to write the rows (see :meth:`masked_rows`).

        Returns
        -------
        array of shape (P * M, d)
            ``out`` when given.
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

        Coalition c (0 ≤ c < m (d − 1)) is prefix t = c mod (d − 1) + 1 of ordering
        o = c div (d − 1), the players j with ``ranks[o, j]`` < t. Coalitions ``start`` … ``stop − 1``
        are written: row (c − start) M + i (M = ``part_size``) holds ``x[x_rows[o], j]`` on the
        prefix and ``background[first_rows[o] + i, j]`` elsewhere. This array code builds the
        prefixes' masks; the CPU's kernel reads the ranks instead.

        Parameters
        ----------
        x : array of shape (n, d)
            Explained rows.
        x_rows, first_rows : int arrays of shape (m,)
            The explained row and the first background row of each ordering's game.
        ranks : int array of shape (m, d)
            The rank vector of each ordering (the position of each player).
        background : array of shape (N, d)
        part_size : int
        start, stop : int
            The coalitions to write.
        out : array of shape ((stop − start) M, d), optional
            Where to write the rows (see :meth:`masked_rows`).

        Returns
        -------
        array of shape ((stop − start) M, d)
            ``out`` when given.
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
        """Solve the regression on complementary pairs: with every group of pairs, and without each group g ≥ 1.

        The regression of Leverage SHAP (:mod:`sklearn_shapq.backends._paired_regression`): pair p
        holds S_p and N ∖ S_p, both of weight w_p, whose centred masks c = z_S − s / d (s: the size
        of S) and −c add the same term 2 w c cᵀ to the normal matrix and w c (b_S − b_{N∖S}) to the
        right side. The system of a set of groups is the sum of their normal matrices + 11ᵀ / d + λ I
        (λ: ``RIDGE`` times the mean diagonal of that sum) with the sum of their right sides. Group 0
        (pairs not sampled) stays in every system.

        Parameters
        ----------
        first_masks : bool array of shape (B, P, d)
            S_p of each pair of each of B games.
        weights : float array of shape (P,)
            w_p, shared by the games.
        groups : int array of shape (P,)
            The group (0 … n_groups − 1) of each pair, on the host.
        n_groups : int
        pair_targets : float array of shape (B, P, k)
            b_S − b_{N∖S} of each pair: the difference of the regression's targets.
        leave_outs : bool
            Whether to solve the leave-one-group-out systems too.

        Returns
        -------
        full : float array of shape (B, d, k)
        leave_out : float array of shape (B, n_groups − 1, d, k), or None without ``leave_outs``
        """
        return paired_regression_array(first_masks, weights, groups, n_groups, pair_targets, leave_outs, self.xp)

    def background_mean(self, outputs: Any, n_background: int) -> Any:
        """Average ``outputs`` of shape (P * N, k) over consecutive blocks of N rows → (P, k)."""
        k = outputs.shape[1]
        return outputs.reshape(-1, n_background, k).mean(axis=1)

    def keyed_orderings(self, keys: Any, n_features: int) -> Any:
        """Feature orderings defined by round keys (keyed VariablePhilox bijection plus compaction).

        Row ``p`` is the order-preserving filter of ``f_p(0), ..., f_p(2**b - 1)`` to the values
        below ``n_features``, where ``f_p`` is the VariablePhilox bijection of ``[0, 2**b)`` keyed by
        ``keys[p]`` and ``b = domain_bits(n_features)``; entry ``k`` is the feature that joins at
        step ``k``. All backends return bit-identical orderings for the same keys.

        Parameters
        ----------
        keys : uint32 array of shape (P, R)
            Round keys, one row per ordering, e.g. from
            :func:`~sklearn_shapq.backends._feistel.ordering_keys` (R = 24).
        n_features : int
            Number of features d, at least 1.

        Returns
        -------
        int32 array of shape (P, d)
            Each row a permutation of ``0 .. d-1``, on this backend's device.

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
        """Fit boosted oblivious trees by squared loss to the targets of B × M problems on coalition masks.

        The surrogate of :mod:`sklearn_shapq.algorithms._oblivious_boosting`; the fit is described in
        :mod:`sklearn_shapq.backends._oblivious_fit`. Here as array code on ``xp``.

        Parameters
        ----------
        masks : bool array of shape (B, n, d)
            The coalitions of each row, shared by the row's M problems.
        targets : float array of shape (B, n, M)
        weights : float array of shape (B, n, M)
            Training weight of each coalition in each problem (0: held out; it is still predicted).
        n_trees, depth : int
            Boosting rounds and levels per tree (``depth`` at most d).
        learning_rate, l2 : float
            Shrinkage of the leaf values and λ, their ridge.

        Returns
        -------
        players : int array of shape (n_trees, B, M, depth)
            The player each level of each tree splits on.
        leaves : float array of shape (n_trees, B, M, 2^depth)
            Leaf values; leaf index ``Σ_l bit_l 2^(depth − 1 − l)``, bit_l = 1 when level l's player is in S.
        predictions : float array of shape (B, n, M)
            The ensemble at each row's coalitions.
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
        method: str = "quadrature",
        max_bytes: int = PAIR_BLOCK_BYTES,
        players: Any = None,
    ) -> Any:
        """Weighted exact Shapley values of the two-factor product games of (query, anchor) pairs.

        For query q, anchor i and reference l the game is v(S) = Π_{p∈S} a_p Π_{p∉S} b_p over
        players p, with a_p = Π_{j∈p} k_j(q_j, X_ij) and b_p = Π_{j∈p} k_j(r_lj, X_ij) (b = 1
        without references); see :mod:`sklearn_shapq.backends._product_kernel`. Returns
        Σ_i w[q, i] mean_l φ(q, i, l).

        Parameters
        ----------
        queries : array of shape (Q, d)
        anchors : array of shape (n, d)
        references : array of shape (L, d) or None
        kinds : int array of shape (d,)
            Factor kinds (codes of ``FACTOR_KINDS``).
        gammas : array of shape (d,)
        weights : array of shape (1, n, k) or (Q, n, k)
            Shared by all queries (a model's dual coefficients) or one row per query (HSIC/MMD).
        method : {"prefix_suffix", "quadrature"}
        max_bytes : int
            Bound on the temporaries of one block of pairs.
        players : int array of shape (d,) or None
            The player of each column (0 … p − 1, each with a column): a player's factor is the
            product of its columns' factors. None: each column is a player (p = d).

        Returns
        -------
        array of shape (Q, p, k)
        """
        return pair_shapley_array(
            self.xp, queries, anchors, references, kinds, gammas, weights, method, max_bytes, players
        )


def repeat_counts(values: Any, counts: Any, xp: ModuleType) -> Any:
    """Entry i of ``values`` repeated ``counts[i]`` times: ``numpy.repeat`` with per-entry counts on a device.

    cupy 13 takes only host counts; here the counts stay on the device and only the length of the
    result comes to the host.

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
