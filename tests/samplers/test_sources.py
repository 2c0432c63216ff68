"""Ordering sources: orderings addressed by row key and unit, unit structure, enumeration, limits."""

import math

import numpy as np
import pytest

from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.samplers import ORDERING_SOURCES, OrderingSource, make_source, row_keys
from sklearn_shapq.samplers._sources import (
    DESIGN_MAX_BYTES,
    SBQ_MAX_PERMUTATIONS,
    DesignSource,
    enumerated_orderings,
    is_enumerated,
)

from game_helpers import is_permutation_rows, permutation_pvalue

ALPHA = 1e-3
SAMPLERS = list(ORDERING_SOURCES)
PER_ROW = ("mc", "antithetic", "orthogonal")
CPU = CpuBackend()


def keys_of(n, seed=0):
    return row_keys(seed, np.arange(n, dtype=float)[:, None])


def test_registry():
    assert SAMPLERS == ["mc", "antithetic", "orthogonal", "sobol", "herding", "sbq"]
    for name, cls in ORDERING_SOURCES.items():
        assert issubclass(cls, OrderingSource) and cls.name == name
        assert isinstance(make_source(name, 8, 5, 0), cls)
        assert issubclass(cls, DesignSource) == (name not in PER_ROW)
    assert {name for name, cls in ORDERING_SOURCES.items() if cls.orderings_per_step == 2} == {
        "antithetic",
        "orthogonal",
    }


def test_a_source_registered_after_import_is_sampled_by_name():
    from sklearn_shapq import register
    from sklearn_shapq.samplers import sample_permutations
    from sklearn_shapq.samplers._sources import SobolSource

    with pytest.raises(ValueError, match="'source' parameter"):
        sample_permutations("test_sobol", 5, 4, random_state=0)

    @register
    class TestSobol(SobolSource):
        name = "test_sobol"

    try:
        assert ORDERING_SOURCES["test_sobol"] is TestSobol and isinstance(make_source("test_sobol", 8, 5, 0), TestSobol)
        orderings, weights = sample_permutations("test_sobol", 5, 4, random_state=0)
        builtin = sample_permutations("sobol", 5, 4, random_state=0)
        np.testing.assert_array_equal(orderings, builtin[0])
        np.testing.assert_array_equal(weights, builtin[1])
    finally:
        ORDERING_SOURCES.unregister("test_sobol")
    with pytest.raises(KeyError, match="No ordering source is registered as 'test_sobol'"):
        make_source("test_sobol", 8, 5, 0)


@pytest.mark.parametrize("method", SAMPLERS)
def test_orderings_are_addressed_by_row_key_and_unit(method):
    d, n = 6, 24
    source = make_source(method, n, d, 123)
    keys = keys_of(5)
    everything = source.orderings(keys, 0, source.n_units, CPU)
    assert everything.shape == (5, n, d)
    assert is_permutation_rows(everything.reshape(-1, d))
    last = min(3, source.n_units)
    bounds = source.bounds(0, source.n_units)
    lo, hi = bounds[1], bounds[last]
    middle = source.orderings(keys[[3, 1]], 1, last, CPU)  # other rows, other units, other order
    np.testing.assert_array_equal(middle, everything[[3, 1], lo:hi])
    for u in range(source.n_units):  # unit by unit
        piece = source.orderings(keys[2:3], u, u + 1, CPU)
        np.testing.assert_array_equal(piece[0], everything[2, bounds[u] : bounds[u + 1]])
    again = make_source(method, n, d, 123).orderings(keys, 0, source.n_units, CPU)
    np.testing.assert_array_equal(again, everything)  # (seed, key) alone fix the orderings
    other_seed = make_source(method, n, d, 124).orderings(keys, 0, source.n_units, CPU)
    assert not np.array_equal(other_seed, everything)
    twin = source.orderings(keys, 0, source.n_units, ArrayBackend(np, "twin"))
    np.testing.assert_array_equal(twin, everything)
    if method in PER_ROW:
        assert not (everything[0] == everything[1]).all()  # rows get independent orderings
    else:
        np.testing.assert_array_equal(everything[0], everything[1])  # one shared design


@pytest.mark.parametrize("method", SAMPLERS)
def test_unit_weights(method):
    d, n = 5, 24
    source = make_source(method, n, d, 0)
    bounds = source.bounds(0, source.n_units)
    np.testing.assert_array_equal(source.bounds(1, 3), bounds[1:4])
    assert bounds[0] == 0 and bounds[-1] == n and (np.diff(bounds) > 0).all()
    for m in (1, source.n_units // 2, source.n_units):
        weights = source.unit_weights(m)
        assert weights.shape == (m,) and weights.sum() == pytest.approx(1.0, abs=1e-12)
    ordering_weights = source.ordering_weights(n)
    np.testing.assert_allclose(source.unit_weights(source.n_units), np.add.reduceat(ordering_weights, bounds[:-1]))
    if source.uniform_weights:
        np.testing.assert_allclose(ordering_weights, 1 / n)


def unit_sizes(method, n, d):
    source = make_source(method, n, d, 0)
    return np.diff(source.bounds(0, source.n_units)).tolist()


def test_unit_structure_of_paired_samplers():
    d = 5
    assert unit_sizes("orthogonal", 16, d) == [8, 8]  # blocks of 2 (d − 1)
    assert unit_sizes("orthogonal", 20, d) == [8, 8, 4]
    assert unit_sizes("orthogonal", 12, d) == [2] * 6  # fewer than two blocks
    assert unit_sizes("antithetic", 7, d) == [2, 2, 2, 1]
    assert unit_sizes("mc", 3, d) == [1, 1, 1]
    assert unit_sizes("sobol", 3, d) == [1, 1, 1]


@pytest.mark.parametrize("method", ["antithetic", "orthogonal"])
def test_pairs_are_reverses(method):
    source = make_source(method, 20, 5, 1)
    orderings = source.orderings(keys_of(3), 0, source.n_units, CPU)
    np.testing.assert_array_equal(orderings[:, 1::2], orderings[:, 0::2, ::-1])


@pytest.mark.parametrize("method", PER_ROW)
def test_per_row_orderings_are_uniform_over_keys_at_every_slot(method):
    d = 4
    n_rows = 40 * math.factorial(d)
    source = make_source(method, 8, d, 5)
    orderings = source.orderings(keys_of(n_rows, seed=1), 0, source.n_units, CPU)
    for slot in range(8):
        assert permutation_pvalue(orderings[:, slot]) > ALPHA, slot


def test_enumeration():
    assert is_enumerated(24, 4) and not is_enumerated(23, 4)
    assert not is_enumerated(10**9, 9)  # beyond d = 8 designs never enumerate
    orderings, weights = enumerated_orderings(30, 4, np.random.default_rng(0))
    codes = orderings.astype(np.int64) @ (4 ** np.arange(4))
    totals = np.bincount(np.unique(codes, return_inverse=True)[1], weights=weights)
    assert totals.size == 24
    np.testing.assert_allclose(totals, 1 / 24)
    prefix, _ = enumerated_orderings(10, 4, np.random.default_rng(0))
    assert len({tuple(p) for p in prefix.tolist()}) == 10  # a prefix is drawn without replacement
    np.testing.assert_array_equal(enumerated_orderings(30, 4)[1], weights)  # weights depend on (n, d) only


@pytest.mark.parametrize("method", ["herding", "sbq"])
def test_kernel_designs_enumerate_and_are_exact_when_complete(method):
    d = 4
    cls = ORDERING_SOURCES[method]
    assert cls.useful_orderings(100, d) == 24 and cls.useful_orderings(20, d) == 20
    assert cls.useful_orderings(10**6, 9) == 10**6
    source = make_source(method, 24, d, 3)
    assert source.is_exact(source.n_units) and not source.is_exact(source.n_units - 1)
    assert source.uniform_weights
    greedy = make_source(method, 20, d, 3)
    assert not greedy.is_exact(greedy.n_units)
    for name in ("mc", "antithetic", "orthogonal", "sobol"):
        assert ORDERING_SOURCES[name].useful_orderings(100, d) == 100
        assert not make_source(name, 24, d, 3).is_exact(24 if name in ("mc", "sobol") else 12)


def test_sbq_prefix_weights_are_recomputed():
    source = make_source("sbq", 20, 6, 0)
    assert not source.uniform_weights
    np.testing.assert_allclose(source.ordering_weights(20), source.design_weights)
    prefix = source.ordering_weights(8)
    assert prefix.shape == (8,) and prefix.sum() == pytest.approx(1.0)
    assert not np.allclose(prefix, source.design_weights[:8] / source.design_weights[:8].sum())


def test_sizes_a_sampler_refuses():
    sbq = ORDERING_SOURCES["sbq"]
    assert sbq.too_many(SBQ_MAX_PERMUTATIONS, 10) is None
    assert "herding" in sbq.too_many(SBQ_MAX_PERMUTATIONS + 1, 10)
    assert sbq.too_many(5000, 4) is None  # an enumeration has no greedy steps
    n = DESIGN_MAX_BYTES // (4 * 1000) + 1
    for name in ("sobol", "herding"):
        assert ORDERING_SOURCES[name].too_many(n - 1, 1000) is None
        assert "MiB" in ORDERING_SOURCES[name].too_many(n, 1000)
    for name in PER_ROW:
        assert ORDERING_SOURCES[name].too_many(10 * n, 1000) is None
