"""Checks that a method leaves an object's state as ``fit`` left it, and gives the same from threads."""

import copy
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def assert_same_state(before, after, path="obj"):
    """Compare two object graphs: ndarrays with array_equal, containers and objects recursively."""
    assert type(before) is type(after), f"{path}: {type(before).__name__} became {type(after).__name__}"
    if isinstance(before, np.ndarray):
        equal_nan = before.dtype.kind in "fc"
        assert before.dtype == after.dtype and np.array_equal(before, after, equal_nan=equal_nan), path
    elif isinstance(before, dict):
        assert before.keys() == after.keys(), f"{path}: keys {set(before) ^ set(after)} added or removed"
        for key in before:
            assert_same_state(before[key], after[key], f"{path}[{key!r}]")
    elif isinstance(before, list | tuple):
        assert len(before) == len(after), path
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            assert_same_state(b, a, f"{path}[{i}]")
    elif hasattr(before, "__dict__") and not isinstance(before, type):
        assert_same_state(vars(before), vars(after), path)
    elif not isinstance(before, type) and isinstance(getattr(before, "__getstate__", lambda: None)(), dict):
        assert_same_state(before.__getstate__(), after.__getstate__(), path)  # e.g. a fitted tree's arrays
    else:  # scalars, strings, None; objects without __dict__ (e.g. a RandomState) by their pickled state
        try:
            equal = bool(before == after)
        except Exception:
            equal = False
        assert equal or pickle.dumps(before) == pickle.dumps(after), f"{path}: {before!r} became {after!r}"


def assert_call_changes_nothing(obj, call):
    """Deep-copy ``vars(obj)``, run ``call(obj)``, and check that nothing was set or changed."""
    before = copy.deepcopy(vars(obj))
    result = call(obj)
    assert_same_state(before, vars(obj))
    return result


def threaded_results(call, n_threads=4, n_calls=8):
    """Run ``call()`` ``n_calls`` times on ``n_threads`` threads at once; return the results."""
    with ThreadPoolExecutor(n_threads) as pool:
        futures = [pool.submit(call) for _ in range(n_calls)]
        return [future.result() for future in futures]
