"""Keyed bijective permutation generation: the VariablePhilox Feistel cipher plus compaction.

A feature ordering is defined by 24 round keys of 32 bits. The keys select a bijection
``f`` of the power-of-two domain ``[0, 2**b)`` with ``b = domain_bits(d)`` (at least 8 bits:
smaller domains are degenerate, see the GPU spec, section 3.3), and the ordering is the
order-preserving filter of ``f(0), f(1), ..., f(2**b - 1)`` to the values below ``d``
(stream compaction, the thesis method). Row ``k`` of an ordering is the feature that joins at
step ``k``.

The cipher is written three times, with bit-identical results:

* :func:`variable_philox`: array code against a namespace ``xp`` (numpy or cupy);
* :func:`variable_philox_row`: numba, one row; its rounds are shared with
  :func:`keyed_orderings_rows`, the CPU kernel (all live here, in one file, because numba's on-disk
  cache does not notice changes to jitted functions defined in other files);
* :data:`CUDA_VARIABLE_PHILOX`: a CUDA C device function, used by the warp-per-ordering kernel
  :data:`CUDA_KEYED_ORDERINGS`.

Keys are derived on the device from a seed and a global ordering counter by :func:`ordering_keys`
(SplitMix64, counter based), so any block of orderings can be generated independently and
reproducibly.
"""

from __future__ import annotations

import operator
from types import ModuleType
from typing import Any

import numba
import numpy as np

ROUNDS = 24
"""Feistel rounds per ordering (the thesis and CCCL value; fewer than 20 fail the chi-square test)."""

MIN_DOMAIN_BITS = 8
"""Smallest cipher domain, in bits (CCCL's choice; 3-bit domains reach only 8 of 40,320 permutations)."""

_M0 = np.uint64(0xD2B74407B1CE6E93)  # Philox multiplier
_MASK32 = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)
_SHIFT32 = np.uint64(32)

# SplitMix64 (Steele, Lea and Flood 2014): increment and output mix
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SHIFT30 = np.uint64(30)
_SHIFT27 = np.uint64(27)
_SHIFT31 = np.uint64(31)


def domain_bits(n_features: int) -> int:
    """Bits of the cipher domain for orderings of ``n_features`` features.

    Parameters
    ----------
    n_features : int
        Number of features d, at least 1.

    Returns
    -------
    int
        ``max(MIN_DOMAIN_BITS, (d - 1).bit_length())``: the smallest power-of-two domain that holds
        ``0 .. d-1``, but never fewer than 8 bits.

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
    """Validate the arguments of a backend's ``keyed_orderings`` and return the domain bits.

    Parameters
    ----------
    keys : array of shape (P, R)
        Round keys, one row per ordering.
    n_features : int
        Number of features d; the orderings are returned as int32, so d < 2**31.

    Returns
    -------
    int
        ``domain_bits(n_features)``.

    Examples
    --------
    >>> check_ordering_args(np.zeros((3, ROUNDS), dtype=np.uint32), 300)
    9
    """
    if keys.ndim != 2:
        raise ValueError(f"keys must have shape (n_orderings, n_rounds), got shape {keys.shape}.")
    bits = domain_bits(n_features)
    if n_features > np.iinfo(np.int32).max:
        raise ValueError(f"n_features must be below 2**31, got {n_features}.")
    return bits


def _mix64(z: Any) -> Any:
    # SplitMix64 output function: a bijection of uint64 with good avalanche
    z = (z ^ (z >> _SHIFT30)) * _MIX1
    z = (z ^ (z >> _SHIFT27)) * _MIX2
    return z ^ (z >> _SHIFT31)


def ordering_keys(seed: int, counters: Any, xp: ModuleType = np) -> Any:
    """Round keys of the orderings with global indices ``counters``, derived from ``seed``.

    The keys of ordering ``c`` are outputs ``c * ROUNDS + r`` (r = 0 .. ROUNDS-1) of the SplitMix64
    generator started at state ``s = mix64(seed)``, truncated to their low 32 bits::

        key[p, r] = mix64(s + (counters[p] * ROUNDS + r + 1) * 0x9E3779B97F4A7C15) mod 2**32

    where ``mix64`` is SplitMix64's output function and all arithmetic wraps modulo 2**64. Each key
    depends only on ``(seed, counters[p], r)``, so orderings can be generated in any blocks, on any
    backend, with the same result. Mixing the seed first keeps structured seeds (0, 1, 2, ...) on
    unrelated stretches of the SplitMix64 sequence.

    Parameters
    ----------
    seed : int
        Seed in ``[0, 2**64)``.
    counters : integer array of shape (P,)
        Non-negative global ordering indices.
    xp : module, default=numpy
        Array namespace (numpy or cupy) of ``counters`` and of the result.

    Returns
    -------
    uint32 array of shape (P, ROUNDS)

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
    start = _mix64(np.array([seed], dtype=np.uint64))[0]
    draws = counters.astype(xp.uint64)[:, None] * np.uint64(ROUNDS) + xp.arange(1, ROUNDS + 1, dtype=xp.uint64)
    return (_mix64(start + draws * _GOLDEN) & _MASK32).astype(xp.uint32)


def _check_bits(bits: int) -> None:
    if not 1 <= bits <= 64:
        raise ValueError(f"bits must be in [1, 64], got {bits}.")


def variable_philox(values: Any, keys: Any, bits: int, xp: ModuleType = np) -> Any:
    """Apply the keyed VariablePhilox bijection of ``[0, 2**bits)`` to every entry of ``values``.

    A value is split into a left half ``L`` (``bits // 2`` bits) and a right half ``R`` (the rest,
    one bit more for odd ``bits``). With ``M0 = 0xD2B74407B1CE6E93``, round ``r`` computes
    ``prod = M0 * L mod 2**64``, ``F = (prod >> 32) ^ key_r`` and ``B = prod mod 2**32``, then
    ``L' = (F ^ R) mod 2**|L|`` and ``R' = ((B << (|R| - |L|)) | (R >> |L|)) mod 2**|R|``, which
    carries the odd bit of ``R`` into ``R'``. The result is ``(L << |R|) | R``.

    Parameters
    ----------
    values : uint64 array of shape (P, M)
        Values in ``[0, 2**bits)``; row ``p`` is enciphered with ``keys[p]``.
    keys : uint32 array of shape (P, R)
        One 32-bit key per round; ``R = ROUNDS`` for orderings.
    bits : int
        Domain size in bits, 1 to 64.
    xp : module, default=numpy
        Array namespace (numpy or cupy) of ``values``, ``keys`` and the result.

    Returns
    -------
    uint64 array of shape (P, M)

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
    left_mask = (_ONE << left_bits) - _ONE
    right_mask = (_ONE << right_bits) - _ONE
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
    """Numba twin of :func:`variable_philox` for one row of values and one key row.

    The rounds run in the outer loop and the values in the inner one, so that the compiler can
    vectorise across values.

    Parameters
    ----------
    values : uint64 array of shape (M,)
        Values in ``[0, 2**bits)``.
    keys : uint32 array of shape (R,)
        One 32-bit key per round.
    bits : int
        Domain size in bits, 1 to 64 (not checked here).

    Returns
    -------
    uint64 array of shape (M,)

    Examples
    --------
    >>> keys = ordering_keys(7, np.arange(1))
    >>> values = np.arange(256, dtype=np.uint64)
    >>> bool((variable_philox_row(values, keys[0], 8) == variable_philox(values[None], keys, 8)[0]).all())
    True
    """
    right_bits = np.uint64(bits) - np.uint64(bits // 2)
    right_mask = (_ONE << right_bits) - _ONE
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

    ``f_p`` is the VariablePhilox bijection keyed by ``keys[p]`` (:func:`variable_philox_row`),
    and the compaction keeps its values below ``d = out.shape[1]`` in domain order. Each ordering
    scans its domain ``2**MIN_DOMAIN_BITS`` values at a time and stops once it has found its
    ``d`` values (the cipher is a bijection, so exactly ``d`` images are below ``d``). Serial and
    ``nogil``: the CPU backend calls it on disjoint row ranges from several threads.

    Parameters
    ----------
    keys : uint32 array of shape (P, R)
        Round keys, one row per ordering.
    bits : int
        Domain bits, at least ``MIN_DOMAIN_BITS`` and with ``2**bits >= d`` (``domain_bits(d)``).
    out : int32 array of shape (P, d)
        Output orderings.
    start, stop : int
        Rows of ``out`` to fill.
    lanes : uint64 array of shape (2, 2**MIN_DOMAIN_BITS)
        Scratch space (allocated by the caller, one per thread: numba compiles allocations slowly).

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
    right_mask = (_ONE << right_bits) - _ONE
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
"""CUDA C source of the warp-per-ordering kernel :data:`CUDA_KEYED_ORDERINGS_KERNEL`.

Arguments: ``keys`` (uint32, (n_rows, n_rounds), C order), ``n_rows`` (int64), ``n_rounds`` (int32),
``bits`` (int32, at least 8), ``n_features`` (int64) and ``out`` (int32, (n_rows, n_features)).
"""
