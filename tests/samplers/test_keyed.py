"""Keyed randomness: row keys from row content, keyed uniforms, sub-streams and per-game streams."""

import math

import numpy as np
import pytest
from scipy.stats import chisquare, kstest

from sklearn_shapq.backends import ArrayBackend
from sklearn_shapq.samplers import KeyedStream, keyed_orderings, keyed_uniforms, row_keys, substream_keys
from sklearn_shapq.samplers._keyed import counter_normals, uniform_ranks

from game_helpers import is_permutation_rows, permutation_pvalue

ALPHA = 1e-3


# ---------------------------------------------------------------- row keys


def test_row_keys_depend_on_the_row_values_alone():
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(50, 4))
    keys = row_keys(7, rows)
    assert keys.dtype == np.uint64 and keys.shape == (50,)
    assert len(set(keys.tolist())) == 50
    order = rng.permutation(50)
    np.testing.assert_array_equal(row_keys(7, rows[order]), keys[order])  # any position, any batch
    np.testing.assert_array_equal(row_keys(7, rows[10:11]), keys[10:11])
    np.testing.assert_array_equal(row_keys(7, np.vstack([rows[3], rows[3]])), [keys[3], keys[3]])
    assert not np.array_equal(row_keys(8, rows), keys)  # another seed, other keys
    np.testing.assert_array_equal(row_keys(7, rows.tolist()), keys)  # lists are rows too


def test_row_keys_see_every_value_and_its_position():
    base = np.array([[1.0, 2.0, 3.0]])
    keys = {int(row_keys(0, base)[0])}
    for changed in ([[2.0, 1.0, 3.0]], [[1.0, 2.0, 3.0 + 1e-15]], [[1.0, 2.0, -3.0]], [[1.0, 2.0, np.inf]]):
        keys.add(int(row_keys(0, np.array(changed))[0]))
    assert len(keys) == 5
    assert row_keys(0, np.zeros((1, 3)))[0] != row_keys(0, np.zeros((1, 4)))[0]


def test_signed_zeros_and_every_nan_are_one_value():
    zeros = np.array([[0.0, -0.0], [-0.0, 0.0], [-0.0, -0.0], [0.0, 0.0]])
    assert len(set(row_keys(3, zeros).tolist())) == 1
    payload = np.array([0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001], dtype=np.uint64).view(np.float64)
    assert np.isnan(payload).all()
    nans = np.column_stack([np.r_[np.nan, payload], np.ones(4)])
    with np.errstate(invalid="ignore"):  # the signalling NaN warns in arithmetic
        assert len(set(row_keys(3, nans).tolist())) == 1
    assert row_keys(3, [[np.nan, 1.0]])[0] != row_keys(3, [[np.inf, 1.0]])[0]


def test_integer_rows_are_keyed_as_their_float_values():
    np.testing.assert_array_equal(row_keys(1, np.array([[1, 2], [3, 4]])), row_keys(1, [[1.0, 2.0], [3.0, 4.0]]))


# ---------------------------------------------------------------- keyed uniforms and streams


def test_keyed_uniforms_are_addressed_by_key_and_counter():
    keys = row_keys(0, np.arange(6.0)[:, None])
    counters = np.broadcast_to(np.arange(10), (6, 10))
    u = keyed_uniforms(keys, counters)
    assert u.shape == (6, 10) and u.dtype == np.float64
    assert ((u > 0) & (u < 1)).all()
    np.testing.assert_array_equal(
        keyed_uniforms(keys[[4, 1]], np.array([[7, 2], [0, 9]])), [u[4, [7, 2]], u[1, [0, 9]]]
    )
    np.testing.assert_array_equal(keyed_uniforms(keys, counters, ArrayBackend(np).xp), u)


def test_keyed_uniforms_are_uniform_and_uncorrelated():
    keys = row_keys(1, np.arange(400.0)[:, None])
    u = keyed_uniforms(keys, np.broadcast_to(np.arange(250), (400, 250)))
    assert kstest(u.ravel(), "uniform").pvalue > ALPHA
    # neighbouring counters and neighbouring keys are not correlated
    assert abs(np.corrcoef(u[:, :-1].ravel(), u[:, 1:].ravel())[0, 1]) < 0.01
    assert abs(np.corrcoef(u[:-1].ravel(), u[1:].ravel())[0, 1]) < 0.01
    sequential = keyed_uniforms(np.arange(400, dtype=np.uint64), np.zeros((400, 1), dtype=np.int64))  # raw small keys
    assert kstest(sequential.ravel(), "uniform").pvalue > ALPHA


def test_substream_keys():
    keys = row_keys(2, np.arange(100.0)[:, None])
    streams = [substream_keys(keys, purpose) for purpose in range(4)]
    np.testing.assert_array_equal(substream_keys(keys, 1), streams[1])
    every = np.concatenate([keys, *streams])
    assert len(set(every.tolist())) == every.size  # all distinct
    np.testing.assert_array_equal(substream_keys(keys[[5, 2]], 3), streams[3][[5, 2]])


def test_stream_draws_of_a_game_do_not_depend_on_the_other_games():
    keys = row_keys(4, np.arange(5.0)[:, None])
    stream = KeyedStream(keys)
    mixed = [
        stream.uniform(np.array([3, 0, 3, 1]), 4),
        stream.uniform(np.array([4, 3]), 2),
        stream.uniform(np.array([3]), 6),
    ]
    alone = KeyedStream(keys[3:4])
    expected = alone.uniform(np.zeros(5, dtype=np.intp), 4).ravel()[: 4 + 4 + 2 + 6]
    alone = KeyedStream(keys[3:4])
    sequence = alone.uniform(np.array([0]), 16)[0]
    np.testing.assert_array_equal(expected, sequence)  # blocks of a game are consecutive draws
    np.testing.assert_array_equal(np.concatenate([mixed[0][0], mixed[0][2], mixed[1][1], mixed[2][0]]), sequence)
    np.testing.assert_array_equal(stream.position, [4, 4, 0, 16, 2])


def test_stream_draws_do_not_depend_on_how_calls_are_split():
    keys = np.array([11, 11, 12], dtype=np.uint64)
    one = KeyedStream(keys).uniform(np.array([0, 1, 2]), 12)
    np.testing.assert_array_equal(one[0], one[1])  # equal keys, equal draws
    split = KeyedStream(keys)
    pieces = [
        split.uniform(np.array([2, 0]), 5),
        split.uniform(np.array([0, 2, 2]), 3),
        split.uniform(np.array([0]), 4),
    ]
    np.testing.assert_array_equal(np.concatenate([pieces[0][1], pieces[1][0], pieces[2][0]]), one[0])
    np.testing.assert_array_equal(np.concatenate([pieces[0][0], pieces[1][1], pieces[1][2]]), one[2, :11])
    assert KeyedStream(keys).uniform(np.array([], dtype=np.intp), 3).shape == (0, 3)


def test_stream_integers_choice_and_ranks():
    keys = row_keys(5, np.arange(3.0)[:, None])
    stream = KeyedStream(keys)
    games = np.repeat(np.arange(3), 20_000)
    high = np.repeat([3, 5, 7], 20_000)
    integers = stream.integers(games, 1, high)
    for g, h in enumerate([3, 5, 7]):
        drawn = integers[games == g]
        assert drawn.min() == 1 and drawn.max() == h - 1
        assert chisquare(np.bincount(drawn - 1)).pvalue > ALPHA
    p = np.array([0.5, 0.25, 0.125, 0.125])
    choice = stream.choice(games, np.array([10, 20, 30, 40]), p * 3)  # unnormalised weights are fine
    counts = np.bincount(choice // 10 - 1, minlength=4)
    assert chisquare(counts, p * games.size).pvalue > ALPHA
    ranks = stream.ranks(np.zeros(24 * 500, dtype=np.intp), 4)
    assert is_permutation_rows(ranks)
    assert permutation_pvalue(ranks) > ALPHA


def test_uniform_ranks():
    np.testing.assert_array_equal(uniform_ranks(np.array([[0.3, 0.1, 0.7], [0.9, 0.5, 0.1]])), [[1, 0, 2], [2, 1, 0]])


# ---------------------------------------------------------------- keyed orderings and normals


def test_keyed_orderings_any_block_and_uniform():
    d = 4
    every = keyed_orderings(9, np.arange(60 * math.factorial(d)), d)
    assert is_permutation_rows(every)
    assert permutation_pvalue(np.asarray(every)) > ALPHA
    np.testing.assert_array_equal(keyed_orderings(9, np.array([17, 3]), d), every[[17, 3]])
    np.testing.assert_array_equal(keyed_orderings(9, np.arange(5), d, ArrayBackend(np)), every[:5])


def test_counter_normals():
    counters = np.arange(2000, dtype=np.uint64)
    z = counter_normals(3, counters, 7)
    assert z.shape == (2000, 7)
    assert kstest(z.ravel(), "norm").pvalue > ALPHA
    np.testing.assert_array_equal(counter_normals(3, counters[[9, 4]], 7), z[[9, 4]])
    np.testing.assert_array_equal(counter_normals(3, counters[:3], 2), counter_normals(3, counters[:3], 2))
    assert not np.array_equal(counter_normals(4, counters[:3], 7), z[:3])


@pytest.mark.parametrize("seed", [0, 2**64 - 1])
def test_extreme_seeds_and_keys(seed):
    rows = np.array([[np.finfo(float).max, -np.finfo(float).tiny]])
    key = row_keys(seed, rows)
    u = keyed_uniforms(np.array([2**64 - 1], dtype=np.uint64), np.array([[0, 2**40]]))
    assert key.dtype == np.uint64 and ((u > 0) & (u < 1)).all()
