"""Keyed orderings: the VariablePhilox Feistel bijection plus compaction, as array code, numba and CUDA C.

The three versions are bit-identical; the numba ones share this file because numba's disk cache
misses changes to jitted functions in other files.
"""

from __future__ import annotations

import operator
from types import ModuleType
from typing import Any

import numba
import numpy as np

FEISTEL_ROUNDS = 24
"""Feistel rounds per ordering (the value of CCCL's VariablePhilox; fewer rounds are not uniform)."""

MIN_DOMAIN_BITS = 8
"""Smallest cipher domain, in bits (CCCL's choice: tiny domains reach few permutations)."""

_M0 = np.uint64(0xD2B74407B1CE6E93)  # Philox multiplier
_MASK32 = np.uint64(0xFFFFFFFF)
UINT64_ONE = np.uint64(1)
_SHIFT32 = np.uint64(32)

# SplitMix64 (Steele, Lea and Flood 2014): increment and output mix
GOLDEN_RATIO_64 = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SHIFT30 = np.uint64(30)
_SHIFT27 = np.uint64(27)
_SHIFT31 = np.uint64(31)


def domain_bits(n_features: int) -> int:
    """Bits of the cipher domain for ``n_features`` features: ``max(MIN_DOMAIN_BITS, (d - 1).bit_length())``.

    Examples
    --------
    >>> domain_bits(5), domain_bits(256), domain_bits(257), domain_bits(1000)
    (8, 8, 9, 10)
    """
    n_features = operator.index(n_features)
    if n_features < 1:
        raise ValueError(f"n_features must be at least 1, got {n_features}.")
    return max(MIN_DOMAIN_BITS, (n_features - 1).bit_length())


def check_ordering_args(keys: Any, n_features: int) -> int:
    """Validate ``keys`` (P, R) and ``n_features`` (below 2**31: int32 orderings); return the domain bits.

    Examples
    --------
    >>> check_ordering_args(np.zeros((3, FEISTEL_ROUNDS), dtype=np.uint32), 300)
    9
    """
    if keys.ndim != 2:
        raise ValueError(f"keys must have shape (n_orderings, n_rounds), got shape {keys.shape}.")
    bits = domain_bits(n_features)
    if n_features > np.iinfo(np.int32).max:
        raise ValueError(f"n_features must be below 2**31, got {n_features}.")
    return bits


def mix64(z: Any) -> Any:
    """SplitMix64's output function on uint64 ``z`` (any namespace): a bijection with good avalanche."""
    z = (z ^ (z >> _SHIFT30)) * _MIX1
    z = (z ^ (z >> _SHIFT27)) * _MIX2
    return z ^ (z >> _SHIFT31)


def ordering_keys(seed: int, counters: Any, xp: ModuleType = np) -> Any:
    """Round keys of the orderings with global indices ``counters``, derived from ``seed``.

    ``key[p, r] = mix64(mix64(seed) + (counters[p] * FEISTEL_ROUNDS + r + 1) * 0x9E3779B97F4A7C15) mod 2**32``
    (SplitMix64, arithmetic modulo 2**64): a key depends on ``(seed, counters[p], r)`` only, so any
    block of orderings can be generated on any backend with the same result.

    ``seed`` in ``[0, 2**64)``, ``counters`` (P,) in namespace ``xp``; returns uint32 (P, FEISTEL_ROUNDS).

    Examples
    --------
    >>> keys = ordering_keys(0, np.arange(5))
    >>> keys.shape, keys.dtype
    ((5, 24), dtype('uint32'))
    >>> bool((ordering_keys(0, np.arange(2, 4)) == keys[2:4]).all())
    True
    """
    seed = operator.index(seed)
    if not 0 <= seed < 1 << 64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}.")
    counters = xp.asarray(counters)
    if counters.ndim != 1 or not np.issubdtype(counters.dtype, np.integer):
        raise ValueError(f"counters must be a 1-d integer array, got {counters.dtype} of shape {counters.shape}.")
    start = mix64(np.array([seed], dtype=np.uint64))[0]
    rounds = xp.arange(1, FEISTEL_ROUNDS + 1, dtype=xp.uint64)
    draws = counters.astype(xp.uint64)[:, None] * np.uint64(FEISTEL_ROUNDS) + rounds
    return (mix64(start + draws * GOLDEN_RATIO_64) & _MASK32).astype(xp.uint32)


def _check_bits(bits: int) -> None:
    if not 1 <= bits <= 64:
        raise ValueError(f"bits must be in [1, 64], got {bits}.")


def variable_philox(values: Any, keys: Any, bits: int, xp: ModuleType = np) -> Any:
    """Apply the keyed VariablePhilox bijection of ``[0, 2**bits)`` to every entry of ``values``.

    Round ``r`` on halves L (``bits // 2`` bits) and R: ``prod = M0 * L mod 2**64``,
    ``L' = ((prod >> 32) ^ key_r ^ R) mod 2**|L|``, ``R' = ((prod mod 2**32) << (|R| - |L|) | R >> |L|) mod 2**|R|``.

    Row ``p`` of ``values`` (P, M) is enciphered with ``keys[p]`` (P, R); ``bits`` is 1 to 64.

    Examples
    --------
    >>> keys = ordering_keys(7, np.arange(2))
    >>> domain = np.tile(np.arange(256, dtype=np.uint64), (2, 1))
    >>> images = variable_philox(domain, keys, 8)
    >>> bool((np.sort(images, axis=1) == domain).all())  # a bijection of [0, 256) per row
    True
    """
    _check_bits(bits)
    left_bits = bits // 2
    right_bits = bits - left_bits
    left_mask = np.uint64((1 << left_bits) - 1)
    right_mask = np.uint64((1 << right_bits) - 1)
    left_shift, right_shift, odd = np.uint64(left_bits), np.uint64(right_bits), np.uint64(right_bits - left_bits)
    values = xp.asarray(values, dtype=xp.uint64)
    keys = xp.asarray(keys).astype(xp.uint64)
    left, right = values >> right_shift, values & right_mask
    for r in range(keys.shape[1]):
        prod = _M0 * left
        new_left = ((prod >> _SHIFT32) ^ keys[:, r, None] ^ right) & left_mask
        right = (((prod & _MASK32) << odd) | (right >> left_shift)) & right_mask
        left = new_left
    return (left << right_shift) | right


# The numba kernels are serial, nogil and written with scalar loops only: numba compiles array
# expressions (``values >> bits``) and ``parallel=True`` loops far more slowly, and the first
# call on an empty cache pays for it (CpuBackend.keyed_orderings runs the kernel on threads).


@numba.njit(cache=True)
def _philox_rounds(left, right, keys, bits):  # pragma: no cover - numba
    # the rounds of variable_philox on split values, in place; the values in the inner loop vectorise
    left_bits = np.uint64(bits // 2)
    right_bits = np.uint64(bits) - left_bits
    left_mask = (UINT64_ONE << left_bits) - UINT64_ONE
    right_mask = (UINT64_ONE << right_bits) - UINT64_ONE
    odd = right_bits - left_bits
    for r in range(keys.shape[0]):
        key = np.uint64(keys[r])
        for i in range(left.shape[0]):
            prod = _M0 * left[i]
            new_left = ((prod >> _SHIFT32) ^ key ^ right[i]) & left_mask
            right[i] = (((prod & _MASK32) << odd) | (right[i] >> left_bits)) & right_mask
            left[i] = new_left


@numba.njit(cache=True)
def variable_philox_row(values: np.ndarray, keys: np.ndarray, bits: int) -> np.ndarray:
    """Numba twin of :func:`variable_philox` for one row: ``values`` (M,), ``keys`` (R,); ``bits`` unchecked.

    Examples
    --------
    >>> keys = ordering_keys(7, np.arange(1))
    >>> values = np.arange(256, dtype=np.uint64)
    >>> bool((variable_philox_row(values, keys[0], 8) == variable_philox(values[None], keys, 8)[0]).all())
    True
    """
    right_bits = np.uint64(bits) - np.uint64(bits // 2)
    right_mask = (UINT64_ONE << right_bits) - UINT64_ONE
    n = values.shape[0]
    left = np.empty(n, dtype=np.uint64)
    right = np.empty(n, dtype=np.uint64)
    for i in range(n):
        left[i] = values[i] >> right_bits
        right[i] = values[i] & right_mask
    _philox_rounds(left, right, keys, bits)
    for i in range(n):
        left[i] = (left[i] << right_bits) | right[i]
    return left


@numba.njit(nogil=True, cache=True)
def keyed_orderings_rows(
    keys: np.ndarray, bits: int, out: np.ndarray, start: int, stop: int, lanes: np.ndarray
) -> None:
    """Fill ``out[p]`` for ``p`` in ``start .. stop - 1`` with the compaction of ``f_p(0 .. 2**bits - 1)``.

    Keeps the images below ``d = out.shape[1]`` in domain order, scanning ``2**MIN_DOMAIN_BITS``
    values at a time. Serial and ``nogil``: the CPU backend runs disjoint row ranges on threads.

    ``lanes`` (2, 2**MIN_DOMAIN_BITS) is scratch space, one per thread.

    Examples
    --------
    >>> out = np.empty((2, 5), dtype=np.int32)
    >>> lanes = np.empty((2, 1 << MIN_DOMAIN_BITS), dtype=np.uint64)
    >>> keyed_orderings_rows(ordering_keys(0, np.arange(2)), domain_bits(5), out, 0, 2, lanes)
    >>> sorted(out[1].tolist())
    [0, 1, 2, 3, 4]
    """
    n_features = out.shape[1]
    bound = np.uint64(n_features)
    n_lanes = lanes.shape[1]
    right_bits = np.uint64(bits) - np.uint64(bits // 2)
    right_mask = (UINT64_ONE << right_bits) - UINT64_ONE
    left = lanes[0]
    right = lanes[1]
    for p in range(start, stop):
        filled = 0
        first = 0
        while filled < n_features:
            for i in range(n_lanes):
                value = np.uint64(first + i)
                left[i] = value >> right_bits
                right[i] = value & right_mask
            _philox_rounds(left, right, keys[p], bits)
            for i in range(n_lanes):
                image = (left[i] << right_bits) | right[i]
                if image < bound:
                    out[p, filled] = np.int32(image)
                    filled += 1
            first += n_lanes


CUDA_VARIABLE_PHILOX = r"""
// VariablePhilox bijection of [0, 2^bits), 1 <= bits <= 64; twin of variable_philox (_feistel.py).
// The F half is bits 32..63 of the truncated 64-bit product M0 * left (not __umul64hi).
__device__ __forceinline__ unsigned long long sklearn_shapq_variable_philox(
    const unsigned long long value, const unsigned int* keys, const int n_rounds, const int bits)
{
    const unsigned int left_bits = (unsigned int)bits / 2u;
    const unsigned int right_bits = (unsigned int)bits - left_bits;
    const unsigned long long left_mask = (1ULL << left_bits) - 1ULL;
    const unsigned long long right_mask = (1ULL << right_bits) - 1ULL;
    unsigned long long left = value >> right_bits;
    unsigned long long right = value & right_mask;
    for (int r = 0; r < n_rounds; ++r) {
        const unsigned long long prod = 0xD2B74407B1CE6E93ULL * left;
        const unsigned long long new_left = ((prod >> 32) ^ (unsigned long long)keys[r] ^ right) & left_mask;
        right = (((prod & 0xFFFFFFFFULL) << (right_bits - left_bits)) | (right >> left_bits)) & right_mask;
        left = new_left;
    }
    return (left << right_bits) | right;
}
"""
"""CUDA C device function ``sklearn_shapq_variable_philox(value, keys, n_rounds, bits)``, for fused kernels."""

CUDA_KEYED_ORDERINGS_KERNEL = "sklearn_shapq_keyed_orderings"
"""Name of the ``__global__`` function in :data:`CUDA_KEYED_ORDERINGS`."""

CUDA_KEYED_ORDERINGS = (
    CUDA_VARIABLE_PHILOX
    + r"""
// One warp per ordering; launch with blockDim.x a multiple of 32 and at least n_rows warps.
// The warp scans the domain 32 values at a time; a ballot compacts the values < n_features in
// domain order (the same order as the CPU kernel), and the scan stops once all are found.
extern "C" __global__ void sklearn_shapq_keyed_orderings(
    const unsigned int* keys, const long long n_rows, const int n_rounds, const int bits,
    const long long n_features, int* out)
{
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (row >= n_rows) return;  // whole warps return together
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int lanes_below = (1u << lane) - 1u;
    const unsigned int* row_keys = keys + row * n_rounds;
    int* row_out = out + row * n_features;
    const unsigned long long domain = 1ULL << bits;  // a multiple of 32: bits >= 8
    long long filled = 0;
    for (unsigned long long start = 0; start < domain && filled < n_features; start += 32) {
        const unsigned long long image = sklearn_shapq_variable_philox(start + lane, row_keys, n_rounds, bits);
        const bool valid = image < (unsigned long long)n_features;
        const unsigned int ballot = __ballot_sync(0xFFFFFFFFu, valid);
        if (valid) row_out[filled + __popc(ballot & lanes_below)] = (int)image;
        filled += __popc(ballot);
    }
}
"""
)
"""CUDA C source of :data:`CUDA_KEYED_ORDERINGS_KERNEL`, one warp per ordering.

Arguments: ``keys`` (uint32, (n_rows, n_rounds)), ``n_rows`` (int64), ``n_rounds`` (int32),
``bits`` (int32, at least 8), ``n_features`` (int64) and ``out`` (int32, (n_rows, n_features)).
"""
