"""Keyed draws without replacement, by numba kernels: distinct items of a list, coalitions of one size.

Every draw of key k is :func:`~sklearn_shapq.samplers.keyed_uniforms`' uniform of k at the next
counter (the kernels and the numpy function give the same numbers), so a key's draws depend on the
key alone, never on the other keys of the call. The kernels cost O(n) per key for n items (a
coalition: O(d)), where sorting keyed uniforms over the whole list costs O(list) per key: Leverage
SHAP draws a design for every game, and split by background row that is N designs per explained
row.
"""

from __future__ import annotations

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@numba.njit(nogil=True, cache=True, inline="always")
def _keyed_uniform(key: np.uint64, counter: int) -> float:  # pragma: no cover - numba
    """keyed_uniforms' draw ``counter`` of ``key``: SplitMix64 at key + (counter + 1) · γ, top 53 bits."""
    z = key + np.uint64(counter + 1) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return (float(z >> np.uint64(11)) + 0.5) * 2.0**-53


@numba.njit(nogil=True, cache=True)
def _distinct_items_kernel(keys: np.ndarray, n_items: int, out: np.ndarray) -> None:  # pragma: no cover - numba
    n = out.shape[1]
    taken = np.zeros(n_items, dtype=np.bool_)
    shuffled = np.arange(n_items)
    for row in range(keys.shape[0]):
        key, counter = keys[row], 0
        if 2 * n <= n_items:  # rejection: at most two draws per item on average
            drawn = 0
            while drawn < n:
                item = min(int(_keyed_uniform(key, counter) * n_items), n_items - 1)
                counter += 1
                if not taken[item]:
                    taken[item] = True
                    out[row, drawn] = item
                    drawn += 1
            for i in range(n):
                taken[out[row, i]] = False
        else:  # a partial Fisher-Yates shuffle of the whole list
            for i in range(n_items):
                shuffled[i] = i
            for i in range(n):
                j = i + min(int(_keyed_uniform(key, i) * (n_items - i)), n_items - i - 1)
                shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
                out[row, i] = shuffled[i]


@numba.njit(nogil=True, cache=True)
def _sized_coalitions_kernel(
    keys: np.ndarray, size: int, with_first: bool, out: np.ndarray
) -> None:  # pragma: no cover - numba
    n, d = out.shape[1], out.shape[2]
    players = np.empty(d, dtype=np.int64)
    first = 1 if with_first else 0
    for row in range(keys.shape[0]):
        key, counter = keys[row], 0
        for c in range(n):
            for j in range(d):
                players[j] = j
            if with_first:
                out[row, c, 0] = True
            for i in range(first, size):  # a partial Fisher-Yates shuffle of the players
                j = i + min(int(_keyed_uniform(key, counter) * (d - i)), d - i - 1)
                counter += 1
                players[i], players[j] = players[j], players[i]
                out[row, c, players[i]] = True


def keyed_distinct_items(keys: np.ndarray, n_items: int, n: int) -> np.ndarray:
    """``n`` distinct items of ``range(n_items)`` for each key, in the order drawn: (B, n) int64.

    Uniform among the ordered samples without replacement: rejection on a bitmap when ``n`` is at
    most half the list, else a partial Fisher-Yates shuffle.

    Examples
    --------
    >>> keys = np.array([7, 8], dtype=np.uint64)
    >>> items = keyed_distinct_items(keys, 10, 4)
    >>> items.shape, len(set(items[0].tolist())), bool((items == keyed_distinct_items(keys, 10, 4)).all())
    ((2, 4), 4, True)
    """
    if not 0 <= n <= n_items:
        raise ValueError(f"cannot draw {n} distinct items of {n_items}.")
    out = np.empty((keys.shape[0], n), dtype=np.int64)
    _distinct_items_kernel(np.ascontiguousarray(keys, dtype=np.uint64), int(n_items), out)
    return out


def keyed_sized_coalitions(keys: np.ndarray, d: int, size: int, n: int, with_first: bool = False) -> np.ndarray:
    """``n`` independent coalitions of ``size`` players of d for each key: (B, n, d) bool.

    Each is uniform among the coalitions of that size (those that contain player 0 when
    ``with_first``).

    Examples
    --------
    >>> masks = keyed_sized_coalitions(np.array([3], dtype=np.uint64), 6, 3, 5, with_first=True)
    >>> masks.shape, bool((masks.sum(-1) == 3).all() and masks[..., 0].all())
    ((1, 5, 6), True)
    """
    if not 1 <= size <= d:
        raise ValueError(f"coalitions of {size} players of {d} are not defined.")
    out = np.zeros((keys.shape[0], n, d), dtype=np.bool_)
    _sized_coalitions_kernel(np.ascontiguousarray(keys, dtype=np.uint64), int(size), bool(with_first), out)
    return out
