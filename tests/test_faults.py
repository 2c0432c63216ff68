"""Faults never give a wrong or different answer.

A model that raises on any call (in ``fit``, on v(N), mid-explain, in a model-call thread) makes
``explain`` raise that error, and leaves the explainer and ``InterventionalGame`` usable: the next
call gives the values of a run that never saw the fault, bit for bit. A plain callable that keeps
the rows it was given finds them as they were. A dask worker lost mid-compute is replaced, and
the retried blocks give the eager values bit for bit.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin

from sklearn_shapq import PermutationShapExplainer, TopKShapley
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.dask import lazy_estimates
from sklearn_shapq.games import InterventionalGame, make_model_function

D = 5


def target(Z):
    """A model with interactions, whose output for a row does not depend on the other rows."""
    Z = np.asarray(Z, dtype=np.float64)
    return np.sin(Z[:, 0]) * Z[:, 1] + Z[:, 2] ** 2 - Z[:, 3] * Z[:, 4] + 0.5 * Z[:, 0]


class Fault:
    """Counts model calls; the ``fail_at``-th call after :meth:`arm` raises RuntimeError.

    ``running`` is the number of calls inside the model now; ``delay`` seconds of sleep per call
    keep calls of several threads in flight together.
    """

    def __init__(self, delay: float = 0.0) -> None:
        self.lock = threading.Lock()
        self.delay = delay
        self.calls = self.running = 0
        self.fail_at: int | None = None

    def arm(self, k: int | None) -> None:
        with self.lock:
            self.calls, self.fail_at = 0, k

    def enter(self) -> None:
        with self.lock:
            self.calls += 1
            self.running += 1
            number, fail = self.calls, self.calls == self.fail_at
        try:
            if self.delay:
                time.sleep(self.delay)
            if fail:
                raise RuntimeError(f"injected fault on model call {number}")
        except BaseException:
            self.leave()
            raise

    def leave(self) -> None:
        with self.lock:
            self.running -= 1

    def run(self, X):
        """Return :func:`target` of ``X``, as one model call that may be the faulty one."""
        self.enter()
        try:
            return target(X)
        finally:
            self.leave()


class FaultyCallable:
    def __init__(self, delay: float = 0.0) -> None:
        self.fault = Fault(delay)

    def __call__(self, Z):
        return self.fault.run(Z)


class FaultyRegressor(RegressorMixin, BaseEstimator):
    """A fitted scikit-learn regressor computing :func:`target`, with a :class:`Fault`."""

    def fit(self, X, y=None):
        self.n_features_in_ = np.asarray(X).shape[1]
        self.fault = Fault()
        return self

    def predict(self, X):
        return self.fault.run(X)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, D)), rng.normal(size=(12, D))


def explain_calls(make, background, rows):
    """A clean explainer's values, standard errors and diagnostics, and the model calls of its explain."""
    explainer, fault = make()
    explainer.fit(background)
    fault.arm(None)
    explanation = explainer.explain(rows)
    return explanation, fault.calls


def assert_same_explanation(got, expected):
    np.testing.assert_array_equal(got.values, expected.values)
    np.testing.assert_array_equal(got.base_values, expected.base_values)
    if expected.error_std is not None:
        np.testing.assert_array_equal(got.error_std, expected.error_std)
    for name in ("n_evals", "n_model_rows", "n_model_calls", "top_k", "targets"):
        if name in expected.diagnostics:
            np.testing.assert_array_equal(got.diagnostics[name], expected.diagnostics[name])


def fault_positions(n_calls):
    """The first, second, a middle and the last model call of an explain."""
    return sorted({1, 2, n_calls // 2, n_calls - 1, n_calls})


def permutation_explainer(algorithm, n_jobs, model_kind):
    def make():
        if model_kind == "callable":
            model = FaultyCallable()
            fault = model.fault
        else:
            model = FaultyRegressor().fit(np.zeros((1, D)))
            fault = model.fault
        # small model calls: several blocks of rows, many calls per block; "auto" below 2^d: no exact values
        explainer = PermutationShapExplainer(
            model,
            algorithm=algorithm,
            max_evals=40 if algorithm == "exact" else 30,
            background_size=10,
            batch_size=40,
            random_state=0,
            progress=False,
            n_jobs=n_jobs,
        )
        return explainer, fault

    return make


def assert_faults_leave_it_whole(make, background, rows, expected, n_calls):
    """A fault at each position raises its error, leaves no model call running, and the next explain is clean."""
    explainer, fault = make()
    explainer.fit(background)
    for k in fault_positions(n_calls):
        fault.arm(k)
        with pytest.raises(RuntimeError, match=f"injected fault on model call {k}"):
            explainer.explain(rows)
        assert fault.running == 0  # no model call of the failed explain runs on after it raised
        fault.arm(None)
        assert_same_explanation(explainer.explain(rows), expected)
        assert fault.calls == n_calls


@pytest.mark.parametrize("model_kind", ["callable", "estimator"])
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("algorithm", ["auto", "leverage", "orthogonal", "exact"])
def test_a_fault_mid_explain_raises_and_the_next_explain_is_bit_identical(data, algorithm, n_jobs, model_kind):
    background, rows = data
    make = permutation_explainer(algorithm, n_jobs, model_kind)
    expected, n_calls = explain_calls(make, background, rows)
    assert n_calls > 20  # several blocks of rows, several calls each
    assert_faults_leave_it_whole(make, background, rows, expected, n_calls)


@pytest.mark.parametrize("model_kind", ["callable", "estimator"])
def test_a_fault_in_fit_raises_and_a_refit_explains_as_a_clean_explainer(data, model_kind):
    background, rows = data
    make = permutation_explainer("auto", 2, model_kind)
    expected, _ = explain_calls(make, background, rows)
    explainer, fault = make()
    fault.arm(1)  # fit evaluates the background once
    with pytest.raises(RuntimeError, match="injected fault"):
        explainer.fit(background)
    fault.arm(None)
    assert_same_explanation(explainer.fit(background).explain(rows), expected)
    # a refit that fails leaves nothing that changes the next fit's answer either
    fault.arm(1)
    with pytest.raises(RuntimeError, match="injected fault"):
        explainer.fit(background)
    fault.arm(None)
    assert_same_explanation(explainer.fit(background).explain(rows), expected)


def test_a_refit_that_fails_leaves_the_previous_fit_whole():
    """fit set the plan before its model call: a failed refit left it beside the previous fit's background."""
    rng = np.random.default_rng(1)
    first, second, rows = rng.normal(size=(10, 12)), rng.normal(size=(5, 12)), rng.normal(size=(4, 12))
    model = FaultyCallable()
    explainer = PermutationShapExplainer(model, max_evals=100, random_state=0, progress=False).fit(first)
    expected = explainer.explain(rows)
    model.fault.arm(1)
    with pytest.raises(RuntimeError, match="injected fault"):
        explainer.fit(second)  # another background: another plan (background_parts_ 5 → 1)
    model.fault.arm(None)
    assert_same_explanation(explainer.explain(rows), expected)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_fault_in_topk_prefit_explain_raises_and_the_next_explain_is_bit_identical(data, n_jobs):
    background, rows = data

    def make():
        model = FaultyRegressor().fit(np.zeros((1, D)))
        explainer = TopKShapley(
            model, prefit=True, n_features_to_select=2, batch_size=40, random_state=0, progress=False, n_jobs=n_jobs
        )
        return explainer, model.fault

    expected, n_calls = explain_calls(make, background, rows)
    assert n_calls > 5
    assert_faults_leave_it_whole(make, background, rows, expected, n_calls)


# ---------------------------------------------------------------- InterventionalGame after a fault


def interventional(model, background, rows, n_jobs, batch_size):
    return InterventionalGame(
        make_model_function(model, "auto", CpuBackend()), background, rows, batch_size, n_jobs=n_jobs
    )


def coalitions(n_rows, n_coalitions, seed):
    rng = np.random.default_rng(seed)
    return rng.random((n_coalitions, D)) < 0.5, rng.integers(n_rows, size=n_coalitions)


def assert_buffers_sound(game):
    """Free buffers are distinct memory (a buffer listed twice would be written by two calls at once)."""
    buffers = game._free_buffers
    assert len(buffers) <= game.n_jobs + 1
    for i, first in enumerate(buffers):
        for second in buffers[i + 1 :]:
            assert not np.shares_memory(first, second)


@pytest.mark.parametrize("model_kind", ["callable", "estimator"])  # an estimator's buffers are reused
@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_the_game_raises_a_model_fault_and_then_gives_the_clean_values(data, n_jobs, model_kind):
    background, rows = data
    background = background[:8]
    masks, games = coalitions(len(rows), 60, 1)
    with interventional(target, background, rows, n_jobs, 3 * len(background)) as clean:
        expected = clean(masks, games)
    model = FaultyCallable() if model_kind == "callable" else FaultyRegressor().fit(np.zeros((1, D)))
    model.fault.delay = 0.002  # calls overlap in the threads
    with interventional(model, background, rows, n_jobs, 3 * len(background)) as game:
        for k in (1, 2, 7, 19, 20):  # 20 calls a round
            model.fault.arm(k)
            with pytest.raises(RuntimeError, match=f"injected fault on model call {k}"):
                game(masks, games)
            assert model.fault.running == 0  # evaluate returns only once its model calls are over
            assert_buffers_sound(game)
            model.fault.arm(None)
            np.testing.assert_array_equal(game(masks, games), expected)
            assert_buffers_sound(game)
            assert bool(game._free_buffers) == (model_kind == "estimator")
            # prefix walks write the buffers through another path
            ranks = np.argsort(np.random.default_rng(k).random((9, D)), axis=1)
            model.fault.arm(3)
            with pytest.raises(RuntimeError):
                game.prefix_grid(np.arange(9) % len(rows), ranks[:, None, :])
            model.fault.arm(None)
            with interventional(target, background, rows, n_jobs, 3 * len(background)) as twin:
                np.testing.assert_array_equal(
                    game.prefix_grid(np.arange(9) % len(rows), ranks[:, None, :]),
                    twin.prefix_grid(np.arange(9) % len(rows), ranks[:, None, :]),
                )


def test_the_model_threads_end_when_a_with_block_exits_on_a_fault(data):
    background, rows = data
    model = FaultyCallable(delay=0.002)
    masks, games = coalitions(len(rows), 60, 2)
    model.fault.arm(5)
    with pytest.raises(RuntimeError, match="injected fault"):
        with interventional(model, background[:8], rows, 3, 16) as game:
            pool = game._pool
            game(masks, games)
    assert game._pool is None and pool._shutdown
    assert not any(thread.is_alive() for thread in pool._threads)
    assert model.fault.running == 0


# ---------------------------------------------------------------- a callable that keeps its input


class KeepingModel:
    """A callable that keeps every input array it gets (not a copy), and a copy to compare with."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.kept: list = []

    def __call__(self, Z):
        with self.lock:
            self.kept.append((Z, np.array(Z, copy=True)))
        return target(Z)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("algorithm", ["leverage", "orthogonal", "exact"])
def test_a_callable_that_keeps_its_input_rows_finds_them_unchanged(data, algorithm, n_jobs):
    background, rows = data
    model = KeepingModel()
    explainer = PermutationShapExplainer(
        model, algorithm=algorithm, max_evals=40, background_size=10, batch_size=40, random_state=0, progress=False
    ).set_params(n_jobs=n_jobs)
    values = explainer.fit(background).explain(rows).values
    assert len(model.kept) > 20
    for kept, copy in model.kept:
        np.testing.assert_array_equal(kept, copy)
    clean = PermutationShapExplainer(
        target, algorithm=algorithm, max_evals=40, background_size=10, batch_size=40, random_state=0, progress=False
    )
    np.testing.assert_array_equal(values, clean.fit(background).explain(rows).values)


# ---------------------------------------------------------------- a dask worker lost mid-compute


class DiesOnce:
    """A model that kills the process it runs in, once, the first time it is called outside the test's process.

    The flag file is created (exclusively) before dying, so the worker that replaces the dead one,
    and the other worker, compute normally.
    """

    def __init__(self, flag: str) -> None:
        self.flag, self.home = flag, os.getpid()

    def __call__(self, Z):
        if os.getpid() != self.home:
            try:
                with open(self.flag, "x"):
                    pass
            except FileExistsError:
                pass
            else:
                os._exit(1)
        return target(Z)


@pytest.fixture(scope="module")
def process_cluster():
    """A client of a local cluster of 2 single-threaded worker processes (each under a nanny that replaces it).

    Shared by the worker-loss tests (starting one costs seconds); closed when they are done, failed or not.
    """
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0", silence_logs=50
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
    assert client.status == "closed" and cluster.status.name == "closed"


@pytest.mark.parametrize("scatter", [False, True])
def test_a_dask_worker_lost_mid_compute_gives_the_eager_values(data, tmp_path, monkeypatch, process_cluster, scatter):
    da = pytest.importorskip("dask.array")
    import sklearn_shapq.dask

    if scatter:  # the explainer reaches the workers scattered (as a large one does), not in the graph
        monkeypatch.setattr(sklearn_shapq.dask, "SCATTER_BYTES", 0)
    background, rows = data
    flag = tmp_path / "died"
    explainer = PermutationShapExplainer(
        DiesOnce(str(flag)), algorithm="leverage", max_evals=24, background_size=10, random_state=0, progress=False
    ).fit(background)
    eager = explainer.explain(rows)
    # the worker lost in an earlier test is replaced first: a scattered explainer reaches both
    # workers, so that the one left holds it (scattered data has no lineage to recompute it from)
    process_cluster.wait_for_workers(2, timeout=60)
    estimates = lazy_estimates(explainer, da.from_array(rows, chunks=3))
    futures = process_cluster.compute([estimates["values"], estimates["error_std"]])
    values, stderr = (future.result(timeout=120) for future in futures)  # the lost task is run again
    assert flag.exists()  # a worker did die running a block
    np.testing.assert_array_equal(values, eager.values)
    np.testing.assert_array_equal(stderr, eager.error_std)
