"""Keyed bijective orderings: VariablePhilox bijection, backend parity, reproducibility, uniformity."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import erfinv

from sklearn_shapq.backends import ArrayBackend, CpuBackend, _array_ops
from sklearn_shapq.backends._feistel import (
    FEISTEL_ROUNDS,
    domain_bits,
    ordering_keys,
    variable_philox,
    variable_philox_row,
)

CPU = CpuBackend()
TWIN = ArrayBackend(np, "numpy-twin")
ALPHA = 1e-3
FEATURE_COUNTS = [1, 2, 3, 5, 10, 100, 257, 1000]


def _random_keys(seed, n_rows, rounds=FEISTEL_ROUNDS):
    return np.random.default_rng(seed).integers(0, 2**32, size=(n_rows, rounds), dtype=np.uint32)


def _reference_cipher(value, keys, bits):
    """The round of the spec (section 3.2 c) in Python integers, one value at a time."""
    left_bits = bits // 2
    right_bits = bits - left_bits
    left, right = value >> right_bits, value & ((1 << right_bits) - 1)
    for key in keys:
        prod = (0xD2B74407B1CE6E93 * left) % 2**64
        f, b = (prod >> 32) ^ int(key), prod % 2**32
        left, right = (
            (f ^ right) & ((1 << left_bits) - 1),
            ((b << (right_bits - left_bits)) | (right >> left_bits)) & ((1 << right_bits) - 1),
        )
    return (left << right_bits) | right


def _reference_key(seed, counter, r):
    """The documented key formula of ``ordering_keys`` in Python integers."""

    def mix64(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    return mix64((mix64(seed) + (counter * FEISTEL_ROUNDS + r + 1) * 0x9E3779B97F4A7C15) % 2**64) % 2**32


def _orderings(seed, n, d, rounds=FEISTEL_ROUNDS):
    return CPU.keyed_orderings(ordering_keys(seed, np.arange(n))[:, :rounds], d)


# --- the cipher -------------------------------------------------------------------------------


@pytest.mark.parametrize("bits", range(1, 17))
def test_variable_philox_is_a_bijection(bits):
    keys = _random_keys(bits, 3)
    domain = np.broadcast_to(np.arange(2**bits, dtype=np.uint64), (3, 2**bits))
    images = variable_philox(domain, keys, bits)
    assert images.dtype == np.uint64
    np.testing.assert_array_equal(np.sort(images, axis=1), domain)
    for row in range(3):
        np.testing.assert_array_equal(variable_philox_row(domain[row].copy(), keys[row], bits), images[row])


@pytest.mark.parametrize("bits", [1, 2, 5, 8, 9, 13, 32, 33, 63, 64])
def test_variable_philox_matches_python_integer_reference(bits):
    rng = np.random.default_rng(bits)
    keys = _random_keys(bits, 2)
    values = rng.integers(0, 2**bits, size=(2, 16), dtype=np.uint64)
    images = variable_philox(values, keys, bits)
    for row in range(2):
        expected = [_reference_cipher(int(v), keys[row], bits) for v in values[row]]
        assert images[row].tolist() == expected
        assert variable_philox_row(values[row].copy(), keys[row], bits).tolist() == expected


@pytest.mark.parametrize("bits", [0, 65])
def test_variable_philox_rejects_bad_domain(bits):
    with pytest.raises(ValueError, match="bits"):
        variable_philox(np.zeros((1, 1), dtype=np.uint64), _random_keys(0, 1), bits)


def test_domain_bits():
    assert domain_bits(5) == 8
    assert domain_bits(1000) == 10
    assert [domain_bits(d) for d in (1, 2, 256, 257, 512, 513)] == [8, 8, 8, 9, 9, 10]
    with pytest.raises(ValueError, match="at least 1"):
        domain_bits(0)


# --- backends ---------------------------------------------------------------------------------


@pytest.mark.parametrize("d", FEATURE_COUNTS)
@pytest.mark.parametrize("rounds", [FEISTEL_ROUNDS, 3])
def test_cpu_kernel_equals_numpy_twin(d, rounds):
    keys = _random_keys(d + rounds, 48, rounds)
    cpu = CPU.keyed_orderings(keys, d)
    assert cpu.dtype == np.int32 and cpu.shape == (48, d)
    np.testing.assert_array_equal(cpu, TWIN.keyed_orderings(keys, d))
    np.testing.assert_array_equal(np.sort(cpu, axis=1), np.broadcast_to(np.arange(d), (48, d)))


def test_orderings_are_the_compaction_of_the_cipher():
    keys = _random_keys(3, 4)
    images = variable_philox(np.broadcast_to(np.arange(256, dtype=np.uint64), (4, 256)), keys, 8)
    for row, ordering in zip(images, CPU.keyed_orderings(keys, 7), strict=True):
        assert ordering.tolist() == [v for v in row.tolist() if v < 7]


def test_numpy_twin_in_blocks(monkeypatch):
    # 512-element grids: one ordering per block at d = 300 (a 9-bit domain), two at d = 100
    monkeypatch.setattr(_array_ops, "_GRID_ELEMENTS", 512)
    for d in (100, 300):
        keys = _random_keys(d, 5)
        np.testing.assert_array_equal(TWIN.keyed_orderings(keys, d), CPU.keyed_orderings(keys, d))


@pytest.mark.parametrize("backend", [CPU, TWIN], ids=["cpu", "twin"])
def test_edge_cases(backend):
    np.testing.assert_array_equal(backend.keyed_orderings(_random_keys(0, 6), 1), np.zeros((6, 1)))
    assert backend.keyed_orderings(np.empty((0, FEISTEL_ROUNDS), dtype=np.uint32), 4).shape == (0, 4)
    with pytest.raises(ValueError, match="shape"):
        backend.keyed_orderings(_random_keys(0, 1)[0], 4)
    with pytest.raises(ValueError, match="at least 1"):
        backend.keyed_orderings(_random_keys(0, 1), 0)


# --- keys and reproducibility -----------------------------------------------------------------


def test_ordering_keys_follow_the_documented_formula():
    seed, counters = 2**64 - 5, [0, 1, 7, 2**40 + 3]
    keys = ordering_keys(seed, np.array(counters))
    assert keys.dtype == np.uint32 and keys.shape == (4, FEISTEL_ROUNDS)
    expected = [[_reference_key(seed, c, r) for r in range(FEISTEL_ROUNDS)] for c in counters]
    assert keys.tolist() == expected


def test_keys_and_orderings_are_pinned():
    # the stream is part of the library's reproducibility contract: a change here changes results
    assert ordering_keys(0, np.arange(1))[0, :4].tolist() == [2065550767, 2713282036, 2148091215, 1917616620]
    assert _orderings(0, 2, 10).tolist() == [[8, 6, 7, 0, 3, 4, 5, 9, 1, 2], [3, 9, 7, 2, 0, 8, 1, 5, 4, 6]]


def test_keys_depend_only_on_seed_and_counter():
    counters = np.arange(1000, 1100)
    keys = ordering_keys(11, counters)
    np.testing.assert_array_equal(ordering_keys(11, counters), keys)
    blocks = [ordering_keys(11, block) for block in np.split(counters, [13, 50, 51])]
    np.testing.assert_array_equal(np.concatenate(blocks), keys)
    np.testing.assert_array_equal(ordering_keys(11, counters[::-1])[::-1], keys)
    np.testing.assert_array_equal(ordering_keys(11, counters.astype(np.uint64)), keys)
    assert not (ordering_keys(12, counters) == keys).all(axis=1).any()


def test_different_counters_give_different_orderings():
    orderings = _orderings(5, 500, 20)
    assert len(np.unique(orderings, axis=0)) == 500
    assert len(np.unique(ordering_keys(5, np.arange(500)), axis=0)) == 500


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_ordering_keys_reject_bad_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        ordering_keys(seed, np.arange(2))


def test_ordering_keys_reject_bad_counters():
    with pytest.raises(ValueError, match="counters"):
        ordering_keys(0, np.arange(2.0))
    with pytest.raises(ValueError, match="counters"):
        ordering_keys(0, np.zeros((2, 2), dtype=np.int64))


# --- uniformity (spec section 4); 2 rounds is the witness that each test can fail ----------


def _permutation_counts(orderings, d):
    radix = d ** np.arange(d)
    codes = np.sort(np.array(list(itertools.permutations(range(d)))) @ radix)
    index = np.searchsorted(codes, orderings.astype(np.int64) @ radix)
    return np.bincount(index, minlength=math.factorial(d))


@pytest.mark.parametrize("d", [4, 5])
@pytest.mark.parametrize("rounds, uniform", [(FEISTEL_ROUNDS, True), (2, False)])
def test_chi_square_over_all_orderings(d, rounds, uniform):
    counts = _permutation_counts(_orderings(d, 60 * math.factorial(d), d, rounds), d)
    assert (stats.chisquare(counts).pvalue > ALPHA) == uniform


@pytest.mark.parametrize("rounds, uniform", [(FEISTEL_ROUNDS, True), (2, False)])
def test_each_position_is_uniform(rounds, uniform):
    d = 10
    orderings = _orderings(21, 6000, d, rounds)
    # table[k, j]: how often feature j joins at step k; Bonferroni over the d positions
    table = (orderings[:, :, None] == np.arange(d)).sum(axis=0)
    pvalues = stats.chisquare(table, axis=1).pvalue
    assert (pvalues.min() > ALPHA / d) == uniform


def _mallows_expectation(d, lam):
    """E_{sigma' ~ U} exp(-lam * n_dis(sigma, sigma') / C(d, 2)), the same for every sigma."""
    c = d * (d - 1) / 2
    return math.prod((1 - math.exp(-lam * j / c)) / (j * (1 - math.exp(-lam / c))) for j in range(1, d + 1))


def _discordant_pairs(a, b, block=2000):
    """n_dis(a[i], b[i]) for every row i, in O(d^2) vectorised numpy, ``block`` rows at a time."""
    i, j = np.triu_indices(a.shape[1], 1)
    return np.concatenate(
        [
            ((a[s : s + block, i] < a[s : s + block, j]) != (b[s : s + block, i] < b[s : s + block, j])).sum(axis=1)
            for s in range(0, len(a), block)
        ]
    )


def _mallows_mmd_test(orderings, lam=5.0, alpha=ALPHA):
    """|MMD^2| against uniform over disjoint consecutive pairs, and its CLT acceptance threshold."""
    m, d = orderings.shape
    c = d * (d - 1) / 2
    kernel = np.exp(-lam * _discordant_pairs(orderings[0::2], orderings[1::2]) / c)
    e1, e2 = _mallows_expectation(d, lam), _mallows_expectation(d, 2 * lam)
    var_stat = 2 * (e2 - e1**2) / m
    return abs(kernel.mean() - e1), math.sqrt(2 * var_stat) * erfinv(1 - alpha)


def test_mallows_expectation_by_brute_force():
    perms = np.array(list(itertools.permutations(range(4))))
    n_dis = _discordant_pairs(np.repeat(perms, len(perms), axis=0), np.tile(perms, (len(perms), 1)))
    assert math.isclose(np.exp(-5.0 * n_dis / 6).mean(), _mallows_expectation(4, 5.0), rel_tol=1e-12)


@pytest.mark.parametrize("d, n", [(5, 20000), (100, 10000)])
@pytest.mark.parametrize("rounds, uniform", [(FEISTEL_ROUNDS, True), (2, False)])
def test_mallows_mmd(d, n, rounds, uniform):
    stat, threshold = _mallows_mmd_test(_orderings(100 + d, n, d, rounds))
    assert (stat < threshold) == uniform


# --- GPU --------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_cuda_orderings_equal_cpu():
    import cupy

    from sklearn_shapq.backends import resolve_backend

    gpu = resolve_backend("cuda")
    for d in FEATURE_COUNTS + [5000]:
        counters = np.arange(3 * d, 3 * d + 301)
        keys = ordering_keys(d, cupy.asarray(counters), cupy)
        np.testing.assert_array_equal(cupy.asnumpy(keys), ordering_keys(d, counters))
        expected = CPU.keyed_orderings(cupy.asnumpy(keys), d)
        np.testing.assert_array_equal(cupy.asnumpy(gpu.keyed_orderings(keys, d)), expected)
        np.testing.assert_array_equal(cupy.asnumpy(ArrayBackend(cupy).keyed_orderings(keys, d)), expected)
    keys = _random_keys(9, 5, 3)  # 3 rounds
    expected = CPU.keyed_orderings(keys, 40)
    np.testing.assert_array_equal(cupy.asnumpy(gpu.keyed_orderings(cupy.asarray(keys), 40)), expected)
    assert gpu.keyed_orderings(cupy.empty((0, FEISTEL_ROUNDS), dtype=cupy.uint32), 7).shape == (0, 7)
    for bits in (1, 9, 33, 64):
        values = np.random.default_rng(bits).integers(0, 2**bits, size=(5, 64), dtype=np.uint64)
        keys = _random_keys(bits, 5)
        images = variable_philox(cupy.asarray(values), cupy.asarray(keys), bits, cupy)
        np.testing.assert_array_equal(cupy.asnumpy(images), variable_philox(values, keys, bits))
