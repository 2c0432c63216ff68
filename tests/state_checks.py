"""Shared assertion: an object's attributes are what they were (arrays by value, objects by type)."""

import numpy as np


def _assert_same(before, after, name):
    if isinstance(before, np.ndarray):
        np.testing.assert_array_equal(after, before, err_msg=name)
    elif isinstance(before, (tuple, list)):
        assert type(after) is type(before) and len(after) == len(before), name
        for index, (a, b) in enumerate(zip(before, after, strict=True)):
            _assert_same(a, b, f"{name}[{index}]")
    elif isinstance(before, dict):
        assert_same_state(before, after)
    elif isinstance(before, (int, float, str, bool, type(None))):
        assert after == before, name
    else:  # models and other objects: deep copies compare by type
        assert type(after) is type(before), name


def assert_same_state(before: dict, after: dict) -> None:
    """Assert that ``after`` (``vars(obj)``) holds the same attributes with the same values as ``before``."""
    assert before.keys() == after.keys(), f"attributes changed: {set(before) ^ set(after)}"
    for name, value in before.items():
        _assert_same(value, after[name], name)
