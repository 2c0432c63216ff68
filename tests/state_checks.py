"""Shared assertion: an object's attributes are what they were (numpy arrays compared by value)."""

import numpy as np


def assert_same_state(before: dict, after: dict) -> None:
    """Assert that ``after`` (``vars(obj)``) holds the same attributes with the same values as ``before``."""
    assert before.keys() == after.keys(), f"attributes changed: {set(before) ^ set(after)}"
    for name, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(after[name], value, err_msg=name)
        elif isinstance(value, (int, float, str, bool, tuple, list, type(None))):
            assert after[name] == value, name
        else:
            assert type(after[name]) is type(value), name
