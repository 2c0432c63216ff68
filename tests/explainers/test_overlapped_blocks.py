"""Overlapped blocks: one block's model calls beside an earlier block's estimator, all on the caller's thread."""

import threading
import time
from concurrent.futures import CancelledError, ThreadPoolExecutor

import numpy as np
import pytest

import sklearn_shapq.explainers._permutation as permutation_module
from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import LeverageAlgorithm
from sklearn_shapq.explainers._overlapped_blocks import CallerThread, overlapped

from game_helpers import polynomial_setup


def test_results_come_in_order_and_an_error_waits_for_the_block_in_flight():
    started, running = [], []

    def work(block):
        started.append(block)
        running.append(block)
        time.sleep(0.02 * (3 - block))  # later blocks finish first
        running.remove(block)
        if block == 1:
            raise RuntimeError("block 1 failed")
        return block

    assert list(overlapped(lambda block, caller: block, range(5))) == [0, 1, 2, 3, 4]
    with pytest.raises(RuntimeError, match="block 1 failed"):
        list(overlapped(lambda block, caller: work(block), range(6)))
    assert running == []  # a block in flight when block 1 failed was waited for
    assert max(started) <= 2  # and none was started after the error was seen


def test_a_caller_that_stops_early_leaves_no_block_running():
    running = []

    def work(block):
        running.append(block)
        time.sleep(0.05)
        running.remove(block)
        return block

    results = overlapped(lambda block, caller: work(block), range(10))
    assert next(results) == 0
    results.close()
    assert running == []


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few games, so that a small explanation has several to overlap."""
    monkeypatch.setattr(permutation_module, "OVERLAPPED_MIN_ROWS", 1)
    monkeypatch.setattr(permutation_module, "_MIN_GAMES_PER_BLOCK", 1)


def test_overlapped_blocks_give_the_values_of_blocks_in_turn_and_call_the_model_on_the_callers_thread(
    small_blocks, monkeypatch
):
    """With several blocks in flight the values are bit-identical to working them one after another,
    the model runs on the thread that called explain (its thread-local settings apply), and a block's
    model calls do run while an earlier block is in its regression (slowed here so that the overlap
    is certain)."""
    f, background, X = polynomial_setup(7, 8, order=3, n_background=8, n_rows=6)
    calls, threads = [], set()

    def model(Z):
        start = time.perf_counter()
        threads.add(threading.current_thread())
        time.sleep(0.02)
        calls.append((start, time.perf_counter()))
        return f(Z)

    regressing = []
    regress = LeverageAlgorithm._regress

    def slow_regress(self, design, values, total):  # the first regression is slow
        start = time.perf_counter()
        time.sleep(0.0 if regressing else 0.3)
        regressing.append((start, time.perf_counter()))
        return regress(self, design, values, total)

    def explain(overlap):
        monkeypatch.setattr(PermutationShapExplainer, "_overlaps", staticmethod(lambda game: overlap))
        explainer = PermutationShapExplainer(
            model, algorithm="leverage", max_evals=60, background_size=None, random_state=0, progress=False
        ).fit(background)
        calls.clear()
        return explainer.explain(X)

    in_turn = explain(False)
    monkeypatch.setattr(LeverageAlgorithm, "_regress", slow_regress)
    overlapping = explain(True)
    np.testing.assert_array_equal(overlapping.values, in_turn.values)
    np.testing.assert_array_equal(overlapping.diagnostics["n_evals"], in_turn.diagnostics["n_evals"])
    assert overlapping.diagnostics["n_model_calls"] == len(calls) > 2
    assert threads == {threading.current_thread()}
    first_regression = regressing[0]
    assert any(start < first_regression[1] and first_regression[0] < end for start, end in calls)


def test_a_model_error_stops_the_model_calls_of_every_block(small_blocks, monkeypatch):
    f, background, X = polynomial_setup(7, 8, order=3, n_background=8, n_rows=6)
    monkeypatch.setattr(PermutationShapExplainer, "_overlaps", staticmethod(lambda game: True))
    calls = []

    def model(Z):
        calls.append(len(Z))
        if len(calls) == 4:  # fit's call, then the first block's v(N) and one more
            raise RuntimeError("the model failed")
        return f(Z)

    explainer = PermutationShapExplainer(
        model, algorithm="leverage", max_evals=60, background_size=None, random_state=0, progress=False
    ).fit(background)
    with pytest.raises(RuntimeError, match="the model failed"):
        explainer.explain(X)
    assert len(calls) == 4


def test_an_interrupt_on_the_callers_thread_refuses_the_workers_later_calls():
    caller = CallerThread()
    answers = []

    def block():
        for signal in (KeyboardInterrupt, None):
            try:
                answers.append(caller.call(lambda signal=signal: (_ for _ in ()).throw(signal()) if signal else 1))
            except (KeyboardInterrupt, CancelledError) as error:
                answers.append(type(error).__name__)

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(block)
        with pytest.raises(KeyboardInterrupt):
            caller.serve_until(future)
        future.result()
    assert answers == ["KeyboardInterrupt", "CancelledError"]
