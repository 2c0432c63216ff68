"""Overlapped blocks: one block's model calls beside an earlier block's estimator, one block calling the model."""

import threading
import time

import numpy as np
import pytest

import sklearn_shapq.explainers._permutation as permutation_module
from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import LeverageAlgorithm
from sklearn_shapq.explainers._overlapped_blocks import overlapped

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

    assert list(overlapped(lambda block: block, range(5))) == [0, 1, 2, 3, 4]
    with pytest.raises(RuntimeError, match="block 1 failed"):
        list(overlapped(work, range(6)))
    assert running == []  # a block in flight when block 1 failed was waited for
    assert max(started) <= 2  # and none was started after the error was seen


def test_a_caller_that_stops_early_leaves_no_block_running():
    running = []

    def work(block):
        running.append(block)
        time.sleep(0.05)
        running.remove(block)
        return block

    results = overlapped(work, range(10))
    assert next(results) == 0
    results.close()
    assert running == []


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few games, so that a small explanation has several to overlap."""
    monkeypatch.setattr(permutation_module, "OVERLAPPED_MIN_ROWS", 1)
    monkeypatch.setattr(permutation_module, "_MIN_GAMES_PER_BLOCK", 1)


def test_overlapped_blocks_give_the_values_of_blocks_in_turn_and_never_call_the_model_at_once(
    small_blocks, monkeypatch
):
    """With several blocks in flight the values are bit-identical to working them one after another,
    the model is never called by two blocks at once, and a block's model calls do run while an
    earlier block is in its regression (slowed here so that the overlap is certain)."""
    f, background, X = polynomial_setup(7, 8, order=3, n_background=8, n_rows=6)
    active, most_active, calls = [0], [0], []
    lock = threading.Lock()

    def model(Z):
        with lock:
            active[0] += 1
            most_active[0] = max(most_active[0], active[0])
        calls.append(time.perf_counter())
        time.sleep(0.005)
        with lock:
            active[0] -= 1
        return f(Z)

    regressing = []
    regress = LeverageAlgorithm._regress

    def slow_regress(self, design, values, total):
        start = time.perf_counter()
        time.sleep(0.1)
        result = regress(self, design, values, total)
        regressing.append((start, time.perf_counter()))
        return result

    def explain(overlap):
        monkeypatch.setattr(PermutationShapExplainer, "_overlaps", staticmethod(lambda backend: overlap))
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
    assert most_active[0] == 1
    assert any(start < call < end for start, end in regressing for call in calls)
