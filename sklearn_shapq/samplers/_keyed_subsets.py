"""Keyed draws without replacement by numba kernels, O(n) per key: distinct list items, coalitions of one size.

The draws are :func:`~sklearn_shapq.samplers.keyed_uniforms`' own, so a key's draws depend on it alone.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from sklearn_shapq.samplers._keyed import keyed_uniforms

_NUMPY_MAX_DRAWS = 1 << 11
"""Items drawn in all (keys × n) up to which :func:`keyed_distinct_items` runs by numpy, bit-identical to the
kernel: compiling the kernel (a first call on an empty numba cache) costs more than numpy's slower draws of a
few rows' classes save (Leverage SHAP's default budget, unsplit); larger calls take the kernel."""

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
    keys: np.ndarray, sizes: np.ndarray, offsets: np.ndarray, with_first: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - numba
    d = out.shape[2]
    players = np.empty(d, dtype=np.int64)
    for row in range(keys.shape[0]):
        for cls in range(sizes.shape[0]):
            key, counter = keys[row, cls], 0
            first = 1 if with_first[cls] else 0
            for c in range(offsets[cls], offsets[cls + 1]):
                for j in range(d):
                    players[j] = j
                if with_first[cls]:
                    out[row, c, 0] = True
                for i in range(first, sizes[cls]):  # a partial Fisher-Yates shuffle of the players
                    j = i + min(int(_keyed_uniform(key, counter) * (d - i)), d - i - 1)
                    counter += 1
                    players[i], players[j] = players[j], players[i]
                    out[row, c, players[i]] = True


def keyed_distinct_items(keys: np.ndarray, n_items: int, n: int) -> np.ndarray:
    """``n`` distinct items of ``range(n_items)`` for each key, in the order drawn: (B, n) int64.

    Rejection on a bitmap when ``n`` is at most half the list, else a partial Fisher-Yates shuffle.

    Examples
    --------
    >>> keys = np.array([7, 8], dtype=np.uint64)
    >>> items = keyed_distinct_items(keys, 10, 4)
    >>> items.shape, len(set(items[0].tolist())), bool((items == keyed_distinct_items(keys, 10, 4)).all())
    ((2, 4), 4, True)
    """
    if not 0 <= n <= n_items:
        raise ValueError(f"cannot draw {n} distinct items of {n_items}.")
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    if keys.shape[0] * n <= _NUMPY_MAX_DRAWS:  # numpy for few items: no kernel to compile
        return _distinct_items_numpy(keys, int(n_items), int(n))
    out = np.empty((keys.shape[0], n), dtype=np.int64)
    _distinct_items_kernel(keys, int(n_items), out)
    return out


def _distinct_items_numpy(keys: np.ndarray, n_items: int, n: int) -> np.ndarray:
    """:func:`_distinct_items_kernel`'s draws by numpy, vectorised over the keys (the same uniforms and arithmetic).

    Examples
    --------
    >>> keys = np.arange(1, 40, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    >>> for n_items, n in [(120, 25), (120, 60), (120, 61), (45, 45), (7, 1)]:  # rejection, then shuffles
    ...     out = np.empty((keys.size, n), dtype=np.int64)
    ...     _distinct_items_kernel(keys, n_items, out)
    ...     assert np.array_equal(_distinct_items_numpy(keys, n_items, n), out)
    """
    rows = keys.shape[0]
    if rows == 0 or n == 0:
        return np.empty((rows, n), dtype=np.int64)
    if 2 * n <= n_items:  # rejection: the first n distinct items of the draws 0, 1, 2, ...
        n_draws = n + n // 2 + 8  # enough for nearly every key (n distinct of 2n take 1.39 n draws on average)
        while True:
            draws = keyed_uniforms(keys, np.arange(n_draws)[None, :])
            items = np.minimum((draws * n_items).astype(np.int64), n_items - 1)
            coded = np.sort(items * n_draws + np.arange(n_draws), axis=1)  # by item, then by draw
            first = np.ones(items.shape, dtype=bool)
            np.not_equal(coded[:, 1:] // n_draws, coded[:, :-1] // n_draws, out=first[:, 1:])
            new = np.zeros(items.shape, dtype=bool)  # the first draw of each item, in draw order
            at, position = np.nonzero(first)
            new[at, coded[at, position] % n_draws] = True
            if (np.count_nonzero(new, axis=1) >= n).all():
                return items[new & (np.cumsum(new, axis=1) <= n)].reshape(rows, n)
            n_draws *= 2
    # a partial Fisher-Yates shuffle of the whole list: draw i swaps position i with i + ⌊u_i (n_items − i)⌋
    steps = np.arange(n)
    spans = n_items - steps
    swaps = steps + np.minimum((keyed_uniforms(keys, steps[None, :]) * spans).astype(np.int64), spans - 1)
    shuffled = np.tile(np.arange(n_items, dtype=np.int64), rows)  # the keys' lists end to end
    starts = np.arange(rows) * n_items
    here, there = (starts[:, None] + steps).T.copy(), (starts[:, None] + swaps).T.copy()
    for i in range(n):
        drawn = shuffled[there[i]]
        shuffled[there[i]] = shuffled[here[i]]
        shuffled[here[i]] = drawn
    return shuffled.reshape(rows, n_items)[:, :n]


def keyed_sized_coalitions(keys: np.ndarray, d: int, size: Any, n: Any, with_first: Any = False) -> np.ndarray:
    """``n`` independent coalitions of ``size`` players of d for each key: (B, n, d) bool.

    Uniform among those of that size (holding player 0 when ``with_first``). With ``keys`` (B, C)
    and ``size``, ``n``, ``with_first`` of shape (C,), the C classes are concatenated.

    Examples
    --------
    >>> masks = keyed_sized_coalitions(np.array([3], dtype=np.uint64), 6, 3, 5, with_first=True)
    >>> masks.shape, bool((masks.sum(-1) == 3).all() and masks[..., 0].all())
    ((1, 5, 6), True)
    >>> keys = np.array([[4, 3]], dtype=np.uint64)  # the second class: the draws of key 3 above
    >>> both = keyed_sized_coalitions(keys, 6, np.array([2, 3]), np.array([1, 5]), np.array([False, True]))
    >>> both.shape, bool((both[:, 1:] == masks).all())
    ((1, 6, 6), True)
    """
    keys = np.asarray(keys, dtype=np.uint64)
    sizes = np.asarray(size, dtype=np.int64).reshape(-1)
    counts = np.asarray(n, dtype=np.int64).reshape(-1)
    keys = keys[:, None] if keys.ndim == 1 else keys
    if keys.shape[1] != sizes.shape[0] or counts.shape != sizes.shape:
        raise ValueError(f"keys (B, C), size and n (C,) must agree: got {keys.shape}, {sizes.shape}, {counts.shape}.")
    if sizes.size and not ((1 <= sizes) & (sizes <= d)).all():
        raise ValueError(f"coalitions of {sizes.tolist()} players of {d} are not defined.")
    offsets = np.concatenate([[0], np.cumsum(counts)])
    firsts = np.broadcast_to(np.asarray(with_first, dtype=np.bool_), sizes.shape)
    out = np.zeros((keys.shape[0], int(offsets[-1]), d), dtype=np.bool_)
    _sized_coalitions_kernel(np.ascontiguousarray(keys), sizes, offsets, np.ascontiguousarray(firsts), out)
    return out
