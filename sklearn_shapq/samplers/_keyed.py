"""Keyed randomness: orderings, normals and uniforms addressed by (seed or row key, counter), equal on every backend."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtri

from sklearn_shapq.backends import FEISTEL_ROUNDS, GOLDEN_RATIO_64, UINT64_ONE, mix64, ordering_keys, resolve_backend


def keyed_orderings(seed: int, counters: Any, n_features: int, backend: Any = None) -> Any:
    """Uniform orderings number ``counters`` of ``seed``.

    ``seed`` in [0, 2^64), ``counters`` (P,) on ``backend`` (None: the cpu backend); returns int32 (P, n_features).

    Examples
    --------
    >>> import numpy as np
    >>> a = keyed_orderings(7, np.arange(3), 5)
    >>> b = keyed_orderings(7, np.arange(2, 3), 5)
    >>> bool((a[2] == b[0]).all()), sorted(a[0].tolist())
    (True, [0, 1, 2, 3, 4])
    """
    backend = resolve_backend("cpu") if backend is None else backend
    counters = backend.xp.asarray(counters, dtype=backend.xp.uint64).reshape(-1)
    return backend.keyed_orderings(ordering_keys(seed, counters, backend.xp), n_features)


def draw_seed(rng: np.random.Generator) -> int:
    """Draw a 64-bit generator seed from ``rng``."""
    return int(rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True))


def counter_normals(seed: int, counters: np.ndarray, size: int) -> np.ndarray:
    """``size`` standard normal numbers for each counter, from (seed, counter) alone (host numpy).

    Pairs of SplitMix64 words make 53-bit uniforms, mapped through the normal inverse CDF; shape (len(counters), size).
    """
    keys_per_counter = -(-2 * size // FEISTEL_ROUNDS)
    per_counter = np.uint64(keys_per_counter)  # uint64 arithmetic wraps: counters may be row keys plus offsets
    expanded = (
        np.asarray(counters).astype(np.uint64)[:, None] * per_counter + np.arange(per_counter, dtype=np.uint64)
    ).ravel()
    words = ordering_keys(seed, expanded).reshape(len(counters), -1)[:, : 2 * size].astype(np.uint64)
    mantissa = (words[:, 0::2] << np.uint64(21)) ^ (words[:, 1::2] >> np.uint64(11))  # 53 random bits
    return ndtri((mantissa.astype(np.float64) + 0.5) / 2.0**53)


def row_keys(seed: int, rows: np.ndarray) -> np.ndarray:
    """64-bit key of every row from ``seed`` and the row's values alone.

    Equal rows get equal keys wherever they stand; -0.0 and 0.0 are one value, and so are all NaNs.
    ``rows`` (B, d) give uint64 keys (B,).

    Examples
    --------
    >>> rows = np.array([[1.0, 2.0], [0.5, 0.0], [1.0, 2.0]])
    >>> keys = row_keys(3, rows)
    >>> bool(keys[0] == keys[2]), bool(keys[0] == keys[1]), bool(keys[1] == row_keys(3, [[0.5, -0.0]])[0])
    (True, False, True)
    """
    values = np.asarray(rows, dtype=np.float64) + 0.0  # -0.0 + 0.0 is 0.0
    values = np.ascontiguousarray(np.where(np.isnan(values), np.nan, values))
    bits = values.view(np.uint64)
    key = np.full(values.shape[0], mix64(np.array([seed], dtype=np.uint64))[0], dtype=np.uint64)
    for column in bits.T:  # a loop over features: each step mixes one column of every row
        key = mix64((key ^ column) + GOLDEN_RATIO_64)
    return key


def keyed_uniforms(keys: Any, counters: Any, xp: Any = np) -> Any:
    """Uniform numbers in (0, 1] addressed by (key, counter): draw c of key k is the same anywhere.

    SplitMix64's output at state k + (c + 1) · γ, top 53 bits; ``keys`` (r,), ``counters`` (r, c) → (r, c).

    Examples
    --------
    >>> keys = np.array([5, 9], dtype=np.uint64)
    >>> u = keyed_uniforms(keys, np.arange(4)[None, :].repeat(2, 0))
    >>> bool((keyed_uniforms(keys[1:], np.array([[2, 3]])) == u[1, 2:]).all()), bool(((0 < u) & (u < 1)).all())
    (True, True)
    """
    state = (
        xp.asarray(keys, dtype=xp.uint64)[:, None]
        + (xp.asarray(counters).astype(xp.uint64) + UINT64_ONE) * GOLDEN_RATIO_64
    )
    return ((mix64(state) >> np.uint64(11)).astype(xp.float64) + 0.5) * 2.0**-53


def substream_keys(keys: np.ndarray, purpose: int | np.ndarray) -> np.ndarray:
    """Keys of an independent stream for ``purpose`` (a small int naming what is drawn).

    An array of purposes (shape (C,)) gives the keys of each: shape (r, C) for keys of shape (r,).

    Examples
    --------
    >>> keys = np.array([1, 2], dtype=np.uint64)
    >>> bool((substream_keys(keys, 0) != substream_keys(keys, 1)).all())
    True
    >>> bool((substream_keys(keys, np.array([0, 1]))[:, 1] == substream_keys(keys, 1)).all())
    True
    """
    purposes = np.asarray(purpose, dtype=np.uint64)
    keys = np.asarray(keys, dtype=np.uint64)
    keys = keys.reshape(keys.shape + (1,) * purposes.ndim)
    mixed = mix64(purposes.reshape(-1) + np.uint64(1)).reshape(purposes.shape)  # 1-d: no scalar overflow warnings
    return mix64(keys ^ mixed)


SPLIT_PURPOSES = 2**32
"""Substream purposes from here on key the parts of split games (:func:`split_keys`)."""


def split_keys(keys: np.ndarray, n_parts: int) -> np.ndarray:
    """Keys of ``n_parts`` games into which each keyed game is split, flat and key-major.

    Part j of key k is ``substream_keys(k, SPLIT_PURPOSES + j)``.

    Examples
    --------
    >>> keys = np.array([1, 2], dtype=np.uint64)
    >>> parts = split_keys(keys, 3)
    >>> parts.shape, bool(parts[4] == split_keys(keys[1:], 3)[1] == substream_keys(keys[1:], SPLIT_PURPOSES + 1)[0])
    ((6,), True)
    """
    purposes = np.uint64(SPLIT_PURPOSES + 1) + np.arange(n_parts, dtype=np.uint64)
    return mix64(np.asarray(keys, dtype=np.uint64)[:, None] ^ mix64(purposes)[None, :]).reshape(-1)


class KeyedStream:
    """Sequences of uniform draws, one per game, each addressed by its game's key alone.

    A call takes ``size`` draws for each entry of ``games`` from that game's sequence, so a game's
    draws never depend on the other games of the call; bit-identical in every namespace ``xp``.

    Parameters
    ----------
    keys : uint64 array of shape (n_games,)
    xp : module, default=numpy

    Examples
    --------
    >>> stream = KeyedStream(np.array([7, 7, 8], dtype=np.uint64))
    >>> a = stream.uniform(np.array([0, 1]), 3)
    >>> bool((a[0] == a[1]).all())  # equal keys, equal draws
    True
    >>> alone = KeyedStream(np.array([7], dtype=np.uint64))
    >>> _ = alone.uniform(np.array([0]), 3)
    >>> bool((stream.uniform(np.array([2, 0, 0]), 2)[1:] == alone.uniform(np.array([0, 0]), 2)).all())
    True
    """

    def __init__(self, keys: Any, xp: Any = np) -> None:
        self.xp = xp
        self.keys = xp.asarray(keys, dtype=xp.uint64)
        self.position = xp.zeros(self.keys.shape[0], dtype=xp.uint64)

    def uniform(self, games: Any, size: int) -> Any:
        """Return (len(games), size) uniforms in (0, 1), ``size`` consecutive draws per entry."""
        xp = self.xp
        games = xp.asarray(games, dtype=xp.intp)
        order = xp.argsort(games, kind="stable")
        sorted_games = games[order]
        group_start = xp.searchsorted(sorted_games, sorted_games, side="left")
        occurrence = xp.empty(games.size, dtype=xp.uint64)
        occurrence[order] = (xp.arange(games.size) - group_start).astype(xp.uint64)
        start = self.position[games] + occurrence * np.uint64(size)
        draws = keyed_uniforms(self.keys[games], start[:, None] + xp.arange(size, dtype=xp.uint64), xp)
        self.position += xp.bincount(games, minlength=self.keys.shape[0]).astype(xp.uint64) * np.uint64(size)
        return draws

    def integers(self, games: Any, low: int, high: Any) -> Any:
        """One integer per entry, uniform on [low, high) (``high`` may differ per entry)."""
        return (low + self.xp.floor(self.uniform(games, 1)[:, 0] * (high - low))).astype(self.xp.int64)

    def choice(self, games: Any, values: np.ndarray, p: np.ndarray) -> Any:
        """One of ``values`` per entry, drawn with probabilities ``p`` (both small host arrays)."""
        xp = self.xp
        cumulative = np.cumsum(p)
        u = self.uniform(games, 1)[:, 0] * cumulative[-1]
        index = xp.searchsorted(xp.asarray(cumulative), u, side="right")
        return xp.asarray(values)[xp.minimum(index, len(values) - 1)]

    def ranks(self, games: Any, d: int) -> Any:
        """Return a uniform random rank vector (a permutation of 0 … d − 1) per entry, (len(games), d)."""
        return uniform_ranks(self.uniform(games, d), self.xp)


def uniform_ranks(uniforms: Any, xp: Any = np) -> Any:
    """Rank of every entry within its row: a uniform permutation for i.i.d. uniform rows.

    Examples
    --------
    >>> uniform_ranks(np.array([[0.3, 0.1, 0.7]]))
    array([[1, 0, 2]])
    """
    d = uniforms.shape[-1]
    order = xp.argsort(uniforms, axis=-1).reshape(-1, d)
    ranks = xp.empty_like(order)
    ranks[xp.arange(order.shape[0])[:, None], order] = xp.arange(d)  # the inverse permutation of each row
    return ranks.reshape(uniforms.shape)
