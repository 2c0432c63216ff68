"""CPU backend: numpy arrays plus numba kernels for the loops numpy would need temporaries for."""

from __future__ import annotations

import multiprocessing.spawn
import os
import subprocess
import sys
import threading
from pathlib import Path, PureWindowsPath
from typing import Any

import numba
import numpy as np

from sklearn_shapq.backends._array_ops import ArrayBackend
from sklearn_shapq.backends._feistel import MIN_DOMAIN_BITS, check_ordering_args, keyed_orderings_rows
from sklearn_shapq.backends._oblivious_fit import _fit_kernel, compile_fit_kernel, fit_oblivious_numba
from sklearn_shapq.backends._paired_regression import (
    _regression_kernel,
    compile_regression_kernel,
    paired_regression_numba,
)
from sklearn_shapq.backends._product_kernel import pair_shapley_numba
from sklearn_shapq.backends._threads import run_ranges

# Serial nogil kernels run on threads by run_ranges: numba's parallel=True compiles several
# times more slowly, which the first call on an empty cache pays (see _threads.py).


@numba.njit(nogil=True, cache=True)
def _masked_rows_kernel(
    x: np.ndarray, masks: np.ndarray, background: np.ndarray, out: np.ndarray, start: int, stop: int
) -> None:  # pragma: no cover - numba
    d = masks.shape[1]
    n_background = background.shape[0]
    for p in range(start, stop):
        base = p * n_background
        for n in range(n_background):
            for j in range(d):
                out[base + n, j] = x[p, j] if masks[p, j] else background[n, j]


@numba.njit(nogil=True, cache=True)
def _part_masked_rows_kernel(
    x: np.ndarray,
    x_rows: np.ndarray,
    masks: np.ndarray,
    background: np.ndarray,
    first_rows: np.ndarray,
    part_size: int,
    out: np.ndarray,
    start: int,
    stop: int,
) -> None:  # pragma: no cover - numba
    d = masks.shape[1]
    for p in range(start, stop):
        row, first = x_rows[p], first_rows[p]
        for i in range(part_size):
            for j in range(d):
                out[p * part_size + i, j] = x[row, j] if masks[p, j] else background[first + i, j]


@numba.njit(nogil=True, cache=True)
def _prefix_rows_kernel(
    x: np.ndarray,
    x_rows: np.ndarray,
    ranks: np.ndarray,
    background: np.ndarray,
    first_rows: np.ndarray,
    part_size: int,
    first_coalition: int,
    out: np.ndarray,
    first_written: int,
    last_written: int,
) -> None:  # pragma: no cover - numba
    """Write coalition ``first_coalition + c`` into block c of ``out``, c in [first_written, last_written)."""
    d = ranks.shape[1]
    for c in range(first_written, last_written):
        ordering, step = divmod(first_coalition + c, d - 1)
        row, first = x_rows[ordering], first_rows[ordering]
        for i in range(part_size):
            for j in range(d):
                out[c * part_size + i, j] = x[row, j] if ranks[ordering, j] <= step else background[first + i, j]


# Work below which another thread is not worth its start-up (tens of microseconds): about
# 100-150 us of serial work, at ~1 ns per masked-row element and ~2 us per 256 domain values.
_MIN_THREAD_ELEMENTS = 1 << 17
"""Masked-row output elements per thread."""
_MIN_THREAD_DOMAIN = 1 << 14
"""Cipher domain values scanned per thread by ``keyed_orderings`` (256 or more per ordering)."""

_KERNEL_COMPILERS = {"paired_regression": compile_regression_kernel, "fit_oblivious_trees": compile_fit_kernel}
"""Operations whose numba kernel :meth:`CpuBackend.compile_ahead` can compile, and how."""
_KERNELS: dict[str, Any] = {"paired_regression": _regression_kernel, "fit_oblivious_trees": _fit_kernel}
"""The numba dispatcher of each operation in :data:`_KERNEL_COMPILERS` (its disk cache tells whether to compile)."""
_compiled_ahead: set[str] = set()
"""Operations whose kernel a background thread or a child process of this process compiled or is compiling."""
_compiling_elsewhere: dict[str, subprocess.Popen] = {}
"""Child processes compiling an operation's kernel into numba's disk cache, until one has waited for its exit."""
_compile_ahead_lock = threading.Lock()
"""Guards :data:`_compiled_ahead` and :data:`_compiling_elsewhere` (explains may run on several threads)."""
_PACKAGE_PARENT = Path(__file__).resolve().parents[2]
"""The folder that holds the ``sklearn_shapq`` package a child process imports."""
_CHILD_COMPILE_TIMEOUT = 60.0
"""Seconds an operation waits for its child's compile before it compiles the kernel itself."""


def _compile_kernels(operations: tuple[str, ...]) -> None:
    for operation in operations:
        _KERNEL_COMPILERS[operation]()


def _on_disk(operation: str) -> bool:
    """Whether numba's disk cache has an index for the operation's kernel (a later call loads it, quickly).

    Reads numba's cache locator (not public API): if it is not there, or cannot be read, the kernel
    counts as on disk and is compiled, as before, where it is first needed.
    """
    try:
        return Path(_KERNELS[operation]._cache._cache_file._index_path).exists()
    except (AttributeError, OSError):  # another numba, the JIT disabled, a cache folder we may not read
        return True


def _python_executable() -> str | None:
    """Return the interpreter a child process can run (the one multiprocessing would start), or None.

    None where there is none to run safely: no executable (an embedded interpreter), a frozen
    application, or a host program that is not Python (uWSGI, mod_wsgi), which ``-c`` would start anew.
    """
    executable = multiprocessing.spawn.get_executable()
    if not executable or getattr(sys, "frozen", False):
        return None
    executable = os.fsdecode(executable)
    name = PureWindowsPath(executable).name.lower()  # either separator, whatever the platform
    return executable if name.startswith(("python", "pypy")) else None


def _compile_in_child(operation: str) -> None:
    """Start a child process that compiles the operation's kernel into numba's disk cache (one core more).

    Call with :data:`_compile_ahead_lock` held. Nothing starts where no Python can be run, or a start
    fails: the kernel then compiles in this process when first needed.
    """
    executable = _python_executable()
    if executable is None:
        return
    compiler = _KERNEL_COMPILERS[operation]
    # the child imports these very sources (numba's cache is keyed by the source file), whatever its working directory
    code = (
        f"import sys; sys.path.insert(0, {str(_PACKAGE_PARENT)!r}); "
        f"from {compiler.__module__} import {compiler.__name__}; {compiler.__name__}()"
    )
    try:
        _compiling_elsewhere[operation] = subprocess.Popen(
            [executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    except Exception:  # any failure to start (a sandbox, a bad executable) costs only time
        pass


def _reap_finished_children() -> None:
    """Forget the children that have exited (reaping them), whether or not their operation ran; lock held."""
    for operation, child in list(_compiling_elsewhere.items()):
        if child.poll() is not None:
            del _compiling_elsewhere[operation]


def _await_compiled_elsewhere(operation: str) -> None:
    """Wait for the child compiling the operation's kernel, if any, so that its call loads the kernel from disk.

    The child stays listed until it has exited, so that every thread calling the operation meanwhile waits.
    """
    child = _compiling_elsewhere.get(operation)
    if child is None:
        return
    try:
        child.wait(_CHILD_COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:  # compiled here instead (the same code, so the same values)
        child.kill()
        child.wait()
    with _compile_ahead_lock:
        if _compiling_elsewhere.get(operation) is child:
            del _compiling_elsewhere[operation]


class CpuBackend(ArrayBackend):
    """numpy arrays; numba for building masked model inputs without temporaries and for orderings."""

    def __init__(self) -> None:
        super().__init__(np, "cpu")
        self._compile_after_rows = threading.local()  # each thread's announced operations (overlapped blocks)

    def __reduce__(self) -> tuple:
        return (CpuBackend, ())

    def compile_ahead(self, *operations: str) -> None:
        """Compile the numba kernels of ``operations`` ahead of their calls, each once per process.

        A first call in a process with an empty numba cache compiles each kernel for about a second.
        The first operation's kernel compiles in a daemon thread started when :meth:`masked_rows`,
        :meth:`part_masked_rows` or :meth:`prefix_rows` next returns: that compilation overlaps the
        model's predictions of the rows (sklearn's release the GIL) instead of following them, and does
        not start now because numba compiles one function at a time in a process, and the row kernel
        must not wait behind it. Each further kernel not in numba's disk cache compiles from now in a
        child process, on another core, into that cache; its operation waits for the child and loads
        the kernel from disk. Whichever thread or process compiles a kernel, its code, and so every
        value, is the same. Operations: "paired_regression", "fit_oblivious_trees".
        """
        unknown = set(operations) - _KERNEL_COMPILERS.keys()
        if unknown:
            raise ValueError(f"no kernel to compile ahead for {sorted(unknown)}; known: {sorted(_KERNEL_COMPILERS)}.")
        with _compile_ahead_lock:
            _reap_finished_children()
            operations = tuple(operation for operation in operations if operation not in _compiled_ahead)
            _compiled_ahead.update(operations)
            for operation in operations[1:]:
                if not _on_disk(operation):
                    _compile_in_child(operation)
            here = tuple(operation for operation in operations if operation not in _compiling_elsewhere)
        self._compile_after_rows.operations = here

    def _rows_written(self) -> None:
        """Start the daemon thread that compiles the kernels :meth:`compile_ahead` left to this process."""
        operations = getattr(self._compile_after_rows, "operations", ())
        self._compile_after_rows.operations = ()
        if operations:
            thread = threading.Thread(target=_compile_kernels, args=(operations,), name="sklearn_shapq-compile")
            thread.daemon = True  # an exit does not wait for a compilation nobody needs any more
            thread.start()

    def masked_rows(
        self, x: np.ndarray, masks: np.ndarray, background: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Model input rows of the interventional game (see :meth:`ArrayBackend.masked_rows`)."""
        dtype = np.result_type(x.dtype, background.dtype)
        n_pairs, d = masks.shape
        if out is None:
            out = np.empty((n_pairs * background.shape[0], d), dtype=dtype)
        arrays = (
            np.ascontiguousarray(x, dtype=dtype),
            np.ascontiguousarray(masks, dtype=np.bool_),
            np.ascontiguousarray(background, dtype=dtype),
            out,
        )
        min_pairs = _MIN_THREAD_ELEMENTS // max(1, background.shape[0] * d)
        run_ranges(lambda start, stop: _masked_rows_kernel(*arrays, start, stop), n_pairs, min_pairs)
        self._rows_written()
        return out

    def part_masked_rows(
        self,
        x: np.ndarray,
        x_rows: np.ndarray,
        masks: np.ndarray,
        background: np.ndarray,
        first_rows: np.ndarray,
        part_size: int,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Model input rows of games split by parts of the background (see :meth:`ArrayBackend.part_masked_rows`)."""
        dtype = np.result_type(x.dtype, background.dtype)
        n_pairs, d = masks.shape
        if out is None:
            out = np.empty((n_pairs * part_size, d), dtype=dtype)
        if out.shape != (n_pairs * part_size, d):
            raise ValueError(f"out must have shape {(n_pairs * part_size, d)}, got {out.shape}.")
        arrays = (
            np.ascontiguousarray(x, dtype=dtype),
            np.ascontiguousarray(x_rows, dtype=np.intp),
            np.ascontiguousarray(masks, dtype=np.bool_),
            np.ascontiguousarray(background, dtype=dtype),
            np.ascontiguousarray(first_rows, dtype=np.intp),
            int(part_size),
            out,
        )
        min_pairs = _MIN_THREAD_ELEMENTS // max(1, part_size * d)
        run_ranges(lambda start, stop: _part_masked_rows_kernel(*arrays, start, stop), n_pairs, min_pairs)
        self._rows_written()
        return out

    def prefix_rows(
        self,
        x: np.ndarray,
        x_rows: np.ndarray,
        ranks: np.ndarray,
        background: np.ndarray,
        first_rows: np.ndarray,
        part_size: int,
        start: int,
        stop: int,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Model input rows of walk prefixes (:meth:`ArrayBackend.prefix_rows`), read from the ranks without masks.

        Examples
        --------
        >>> x, background = np.array([[1.0, 2.0, 3.0]]), np.zeros((2, 3))
        >>> CpuBackend().prefix_rows(x, np.array([0]), np.array([[2, 0, 1]]), background, np.array([0]), 1, 0, 2)
        array([[0., 2., 0.],
               [0., 2., 3.]])
        """
        dtype = np.result_type(x.dtype, background.dtype)
        d, n_coalitions = ranks.shape[1], stop - start
        if not 0 <= start <= stop <= ranks.shape[0] * (d - 1):
            raise ValueError(f"start and stop must satisfy 0 <= start <= stop <= {ranks.shape[0] * (d - 1)}.")
        if out is None:
            out = np.empty((n_coalitions * part_size, d), dtype=dtype)
        if out.shape != (n_coalitions * part_size, d):
            raise ValueError(f"out must have shape {(n_coalitions * part_size, d)}, got {out.shape}.")
        arrays = (
            np.ascontiguousarray(x, dtype=dtype),
            np.ascontiguousarray(x_rows, dtype=np.intp),
            np.ascontiguousarray(ranks),
            np.ascontiguousarray(background, dtype=dtype),
            np.ascontiguousarray(first_rows, dtype=np.intp),
            int(part_size),
            int(start),
            out,
        )
        min_coalitions = _MIN_THREAD_ELEMENTS // max(1, part_size * d)
        run_ranges(lambda first, last: _prefix_rows_kernel(*arrays, first, last), n_coalitions, min_coalitions)
        self._rows_written()
        return out

    def paired_regression(
        self,
        first_masks: np.ndarray,
        weights: np.ndarray,
        groups: np.ndarray,
        n_groups: int,
        pair_targets: np.ndarray,
        leave_outs: bool,
    ) -> tuple[np.ndarray, Any]:
        """Solve the paired regression's systems by one numba kernel (:meth:`ArrayBackend.paired_regression`).

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> masks, weights, groups = rng.random((2, 30, 5)) < 0.4, rng.random(30), np.arange(30) % 4
        >>> targets = rng.normal(size=(2, 30, 1))
        >>> full, leave_out = CpuBackend().paired_regression(masks, weights, groups, 4, targets, leave_outs=True)
        >>> full.shape, leave_out.shape
        ((2, 5, 1), (2, 3, 5, 1))
        >>> twin = ArrayBackend(np).paired_regression(masks, weights, groups, 4, targets, leave_outs=True)
        >>> bool(np.allclose(full, twin[0]) and np.allclose(leave_out, twin[1]))
        True
        """
        _await_compiled_elsewhere("paired_regression")
        return paired_regression_numba(first_masks, weights, groups, n_groups, pair_targets, leave_outs)

    def keyed_orderings(self, keys: np.ndarray, n_features: int) -> np.ndarray:
        """Feature orderings from round keys by a numba kernel, bit-identical to :meth:`ArrayBackend.keyed_orderings`.

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
        # an ordering scans at least 256 domain values, more for sparse domains (d just above 2**k)
        min_rows = _MIN_THREAD_DOMAIN // max(1 << MIN_DOMAIN_BITS, n_features)

        def rows(start: int, stop: int) -> None:
            lanes = np.empty((2, 1 << MIN_DOMAIN_BITS), dtype=np.uint64)  # scratch of one thread
            keyed_orderings_rows(keys, bits, out, start, stop, lanes)

        run_ranges(rows, keys.shape[0], min_rows)
        return out

    def fit_oblivious_trees(
        self,
        masks: np.ndarray,
        targets: np.ndarray,
        weights: np.ndarray,
        n_trees: int,
        depth: int,
        learning_rate: float,
        l2: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fit boosted oblivious trees by a numba kernel (:meth:`ArrayBackend.fit_oblivious_trees`).

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> masks, targets = rng.random((2, 30, 6)) < 0.5, rng.normal(size=(2, 30, 3))
        >>> weights = (rng.random((2, 30, 3)) < 0.8).astype(float)
        >>> fit = CpuBackend().fit_oblivious_trees(masks, targets, weights, 4, 3, 0.5, 1.0)
        >>> twin = ArrayBackend(np).fit_oblivious_trees(masks, targets, weights, 4, 3, 0.5, 1.0)
        >>> bool((fit[0] == twin[0]).all()) and bool(np.allclose(fit[2], twin[2]))
        True
        """
        _await_compiled_elsewhere("fit_oblivious_trees")
        return fit_oblivious_numba(masks, targets, weights, n_trees, depth, learning_rate, l2)

    def product_kernel_shapley(
        self,
        queries: np.ndarray,
        anchors: np.ndarray,
        references: np.ndarray | None,
        kinds: np.ndarray,
        gammas: np.ndarray,
        weights: np.ndarray,
        algorithm: str = "quadrature",
        max_bytes: int = 0,
        players: np.ndarray | None = None,
    ) -> np.ndarray:
        """Run :meth:`ArrayBackend.product_kernel_shapley` as a numba kernel (O(p²) memory a thread)."""
        return pair_shapley_numba(queries, anchors, references, kinds, gammas, weights, algorithm, players)
