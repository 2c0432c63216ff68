"""The interventional (marginal) game v_x(S) = mean_z f(x_S, z_{N minus S}) over a background set."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import numpy as np

from sklearn_shapq.games._game import Game
from sklearn_shapq.games._models import ModelFunction

DEFAULT_MEMORY_BYTES = 31 * 2**20
"""Memory of one model call's input rows for ``batch_size="auto"`` on the CPU: below glibc's 32 MiB mmap
threshold, so buffers stay in the heap (``benchmarks/bench_permutation.py --d 100``)."""
GPU_MEMORY_BYTES = 128 * 2**20
"""The same budget on a GPU (cupy's memory pool keeps freed buffers; larger calls fill the device)."""


BACKGROUND_RTOL = 1e-6
"""How far a model's outputs on the background may move (threads may sum in another order) before the
model counts as changed: relative to max(1, the largest |output|). A Gaussian process with large dual
coefficients moves by 3e-9 with the rows predicted beside (``make_friedman1(300, 12)``, ARD RBF at its
length-scale bounds, ``normalize_y``): 1e-9 refused it as changed."""


def check_same_outputs(now: np.ndarray, before: np.ndarray) -> None:
    """Refuse a changed model: background outputs (N, n_outputs) unlike ``before`` (to :data:`BACKGROUND_RTOL`)."""
    if now.shape != before.shape:
        raise ValueError(
            f"The model now gives {now.shape[1]} outputs, but {before.shape[1]} when the explainer was fitted: it "
            "was refitted; call fit again."
        )
    scale = max(1.0, float(np.abs(before).max()))
    if not np.allclose(now, before, rtol=BACKGROUND_RTOL, atol=BACKGROUND_RTOL * scale):
        raise ValueError(
            "The model's outputs on the background differ from those at fit (largest difference "
            f"{float(np.abs(now - before).max()):.3g}): it was refitted or changed in place since fit, so the base "
            "value would be another model's. Call fit again (a model whose output is random cannot be explained)."
        )


class InterventionalGame(Game):
    """Interventional Shapley games of a model over a background set, one per explained row or part.

    Game r is v_r(S) = mean over background rows z of f(x_r on S, z elsewhere). With ``parts`` > 1
    game r · parts + j is the mean over the j-th of ``parts`` equal consecutive parts of the
    background: the mean of a row's games is its game, and a coalition costs N / parts model rows.

    Parameters
    ----------
    model_fn : ModelFunction
        A plain callable gets a new input array every call; other models get reused buffers.
        A model error is raised once the calls in flight have returned.
    background : array of shape (N, d)
    x : array of shape (n, d)
        Explained rows.
    batch_size : int or "auto"
        Most model rows per call (at least one coalition's); "auto" fills
        :data:`DEFAULT_MEMORY_BYTES` (:data:`GPU_MEMORY_BYTES` on a GPU).
    background_outputs : array of shape (N, n_outputs), optional
        The model's outputs on the background; computed when omitted.
    check_background : bool, default=False
        Whether v(N)'s model call also predicts the background and refuses a model whose outputs
        moved beyond :data:`BACKGROUND_RTOL` (N more rows in a call made anyway).
    n_jobs : int
        Model calls run at once in threads; :meth:`close` or a ``with`` block ends them.
    parts : int
        Games per explained row; it must divide N.
    model_caller : callable, optional
        ``model_caller(model_fn, rows)`` makes the game's model calls (without ``n_jobs`` threads): the
        explainer's overlapped blocks run them on the thread that called ``explain``.

    Attributes
    ----------
    background_outputs : array of shape (N, n_outputs)
    base_value : array of shape (n_outputs,)
        v(∅), the mean model output over the background.
    n_model_rows, n_model_calls : int
        Rows and calls the model has received through this game.

    Examples
    --------
    >>> from sklearn_shapq.backends import CpuBackend
    >>> from sklearn_shapq.games import make_model_function
    >>> model = make_model_function(lambda Z: Z @ [1.0, 2.0], "predict", CpuBackend())
    >>> game = InterventionalGame(model, np.zeros((3, 2)), np.array([[1.0, 1.0], [2.0, 0.0]]))
    >>> game(np.array([[True, False], [True, False]]), np.array([0, 1]))[:, 0]
    array([1., 2.])
    >>> game.full_value[:, 0], game.n_evals
    (array([3., 2.]), array([3, 3]))
    >>> split = InterventionalGame(model, np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[2.0, 2.0]]), parts=2)
    >>> split.n_games, split(np.array([[True, False], [True, False]]), np.array([0, 1]))[:, 0]
    (2, array([2., 4.]))
    >>> split.empty_value[:, 0], split.full_value[:, 0]
    (array([0., 3.]), array([6., 6.]))
    """

    def __init__(
        self,
        model_fn: ModelFunction,
        background: Any,
        x: Any,
        batch_size: int | str = "auto",
        *,
        background_outputs: Any = None,
        check_background: bool = False,
        n_jobs: int = 1,
        parts: int = 1,
        model_caller: Callable[..., Any] | None = None,
    ) -> None:
        self.model_fn = model_fn
        self._model_caller = model_caller
        self.check_background = bool(check_background and background_outputs is not None)
        self.background = background
        self.x = x
        n_background, d = background.shape
        if parts < 1 or n_background % parts:
            raise ValueError(f"parts={parts} must divide the {n_background} background rows.")
        self.parts = int(parts)
        self.n_jobs = max(1, int(n_jobs))
        if batch_size == "auto":  # up to n_jobs + 1 batches are alive at once with threads
            memory = GPU_MEMORY_BYTES if model_fn.backend.is_gpu else DEFAULT_MEMORY_BYTES
            budget = memory // (self.n_jobs + 1 if self.n_jobs > 1 else 1)
            batch_size = max(self.rows_per_coalition, budget // (8 * d))
        self.pairs_per_call = max(1, int(batch_size) // self.rows_per_coalition)
        self.n_model_rows = 0
        self.n_model_calls = 0
        self._free_buffers: list = []  # model-input buffers reused by every call (see _take_buffer)
        # a plain callable may keep the array it gets: it gets a buffer of its own on every call
        self._reuse_buffers = model_fn.output != "callable"
        self._pool = ThreadPoolExecutor(self.n_jobs) if self.n_jobs > 1 else None
        if background_outputs is None:
            background_outputs = self._model(background)
            self.n_model_rows = self.n_model_calls = 0  # the counters are for the explained rows
        self.background_outputs = model_fn.backend.to_device(background_outputs)
        self.base_value = self.background_outputs.mean(axis=0)
        super().__init__(d, x.shape[0] * self.parts, int(self.base_value.shape[0]), model_fn.backend)

    @property
    def rows_per_coalition(self) -> int:
        """Model rows one evaluation of v costs: the rows of a part, N / ``parts``."""
        return int(self.background.shape[0]) // self.parts

    @property
    def batch_rows(self) -> int:
        """Model rows per full model call."""
        return self.pairs_per_call * self.rows_per_coalition

    def _model(self, rows: Any) -> Any:
        self.n_model_rows += int(rows.shape[0])
        self.n_model_calls += 1
        if self._model_caller is None:
            return self.model_fn(rows)
        return self._model_caller(self.model_fn, rows)

    def corner_values(self) -> tuple[Any, Any]:
        """v(∅) from the background outputs (each part's mean) and v(N) = f(x) in one model call."""
        xp = self.backend.xp
        if self.parts == 1:
            return xp.broadcast_to(self.base_value, (self.n_games, self.n_outputs)), self._full_outputs()
        part_means = self.backend.background_mean(self.background_outputs, self.rows_per_coalition)
        return xp.tile(part_means, (self.x.shape[0], 1)), xp.repeat(self._full_outputs(), self.parts, axis=0)

    def _full_outputs(self) -> Any:
        """Return f(x); with ``check_background``, the background's outputs are checked in the same model call."""
        if not self.check_background:
            return self._model(self.x)
        xp = self.backend.xp
        outputs = self._model(xp.concatenate([self.x, self.background]))
        n_rows = self.x.shape[0]
        check_same_outputs(self.backend.to_numpy(outputs[n_rows:]), self.backend.to_numpy(self.background_outputs))
        return outputs[:n_rows]

    def evaluate(self, masks: Any, games: Any) -> Any:
        """Return v_r(S) (m, n_outputs) for coalitions ``masks`` (m, d) of rows ``games`` (m,)."""

        def write_rows(start: int, stop: int, out: Any) -> Any:
            return self._masked_rows(masks[start:stop], games[start:stop], out)

        return self._model_values(masks.shape[0], write_rows)

    def evaluate_prefixes(self, ranks: Any, games: Any) -> Any:
        """Return v of the walk prefixes (m (d − 1), n_outputs) of ``ranks`` (m, d), built from the ranks, not masks."""
        size = self.rows_per_coalition
        x_rows, first_rows = games // self.parts, (games % self.parts) * size

        def write_rows(start: int, stop: int, out: Any) -> Any:
            return self.backend.prefix_rows(self.x, x_rows, ranks, self.background, first_rows, size, start, stop, out)

        return self._model_values(ranks.shape[0] * (self.n_players - 1), write_rows)

    def _model_values(self, n_coalitions: int, write_rows: Any) -> Any:
        """Values (m, n_outputs) of coalitions whose model rows ``write_rows(start, stop, out)`` writes, batched."""
        xp = self.backend.xp
        values = xp.empty((n_coalitions, self.n_outputs), dtype=np.float64)
        # with several threads, split the work so that each gets at least one model call
        step = min(self.pairs_per_call, -(-n_coalitions // self.n_jobs))
        pending: deque = deque()
        try:
            for start in range(0, n_coalitions, step):
                stop = min(start + step, n_coalitions)
                buffer = self._take_buffer(step * self.rows_per_coalition)
                rows = write_rows(start, stop, buffer[: (stop - start) * self.rows_per_coalition])
                if self._pool is None:
                    values[start:stop] = self.backend.background_mean(self._model(rows), self.rows_per_coalition)
                    self._release_buffer(buffer)
                    continue
                self.n_model_rows += int(rows.shape[0])
                self.n_model_calls += 1
                pending.append((start, stop, buffer, self._pool.submit(self._threaded_model, rows)))
                while len(pending) > self.n_jobs:  # bounds the masked rows held in memory
                    self._collect(pending.popleft(), values)
            while pending:
                self._collect(pending.popleft(), values)
        except BaseException:
            # a model call failed (or the caller was interrupted): the calls not started are cancelled
            # and those running are waited for, so that no model call of this evaluation outlives
            # its error; their buffers are dropped (a buffer is reused only after its call returned)
            futures = [job[3] for job in pending]
            for future in futures:
                future.cancel()
            wait(futures)
            raise
        return values

    def _masked_rows(self, masks: Any, games: Any, out: Any) -> Any:
        """Write the model rows of coalitions ``masks`` of games ``games`` into ``out``."""
        if self.parts == 1:
            return self.backend.masked_rows(self.x[games], masks, self.background, out)
        size = self.rows_per_coalition
        return self.backend.part_masked_rows(
            self.x, games // self.parts, masks, self.background, (games % self.parts) * size, size, out
        )

    def _take_buffer(self, n_rows: int) -> Any:
        """Return a free model-input buffer of at least ``n_rows`` rows (reuse spares page faults)."""
        if self._free_buffers and self._free_buffers[-1].shape[0] >= n_rows:
            return self._free_buffers.pop()
        self._free_buffers.clear()  # too small for this call's batches: replace them
        dtype = np.result_type(self.x.dtype, self.background.dtype)
        return self.backend.xp.empty((n_rows, self.n_players), dtype=dtype)

    def _threaded_model(self, rows: Any) -> Any:
        with self.backend.activate():
            return self.model_fn(rows)

    def _collect(self, job: tuple, values: Any) -> None:
        start, stop, buffer, future = job
        values[start:stop] = self.backend.background_mean(future.result(), self.rows_per_coalition)
        self._release_buffer(buffer)

    def _release_buffer(self, buffer: Any) -> None:
        """Make ``buffer`` free for the next call, or drop it for a plain callable (which may keep it)."""
        if self._reuse_buffers:
            self._free_buffers.append(buffer)

    def close(self) -> None:
        """Shut down the model-call threads (if any)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> InterventionalGame:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
