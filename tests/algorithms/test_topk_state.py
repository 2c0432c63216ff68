"""Top-k state: the budget ledger, running player and pair statistics, confidence bounds, the PAC rule."""

import numpy as np
import pytest
from scipy.stats import norm

from sklearn_shapq.algorithms._topk_state import (
    Ledger,
    PairStats,
    PlayerStats,
    bonferroni_z,
    confidence_bounds,
    pac_satisfied,
    top_k_indices,
    top_k_mask,
)
from sklearn_shapq.games import TableGame

from game_helpers import LoggingGame


def test_ledger_caches_corners_and_pays_units_in_order():
    d = 4
    game = LoggingGame(np.arange(2.0**d), n_games=2)
    ledger = Ledger(game, 5)
    np.testing.assert_array_equal(ledger.used, [2, 2])
    np.testing.assert_array_equal(ledger.empty, [0.0, 0.0])
    np.testing.assert_array_equal(ledger.full, [15.0, 15.0])
    assert len(game.calls) == 1 and len(game.calls[0][0]) == 4
    empty, full = np.zeros(d, bool), np.ones(d, bool)
    one, two, three = np.eye(d, dtype=bool)[0], np.eye(d, dtype=bool)[1], np.eye(d, dtype=bool)[:2].any(axis=0)
    masks = np.stack([empty, one, full, two, three, one, two, three, two])
    games = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1])
    units = np.array([0, 0, 1, 2, 3, 4, 4, 5, 6])
    values, paid = ledger.pay(masks, games, units)
    # game 0, 3 left: units cost 1 (∅ is free), 0 (N), 1, 1 -> all paid
    # game 1, 3 left: units cost 2, 1, 1 -> the last is not paid, nor evaluated
    np.testing.assert_array_equal(paid, [True] * 8 + [False])
    np.testing.assert_array_equal(values[:8], [0.0, 1.0, 15.0, 2.0, 3.0, 1.0, 2.0, 3.0])
    assert np.isnan(values[8])
    np.testing.assert_array_equal(ledger.used, [5, 5])
    np.testing.assert_array_equal(game.n_evals, [5, 5])
    assert len(game.calls) == 2 and len(game.calls[1][0]) == 6  # one game call, corners not re-evaluated
    values, paid = ledger.pay(np.stack([empty, full]), np.zeros(2, np.intp), np.array([0, 0]))
    assert paid.all()  # exhausted: the cached corners are still served
    np.testing.assert_array_equal(values, [0.0, 15.0])
    values, paid = ledger.pay(np.stack([one, empty]), np.zeros(2, np.intp), np.array([0, 1]))
    assert not paid.any()  # in order: nothing after a unit that does not fit
    assert ledger.used[0] == 5 and len(game.calls) == 2
    unlimited = Ledger(game, None)
    assert len(game.calls) == 2  # the corners stay cached in the game
    np.testing.assert_array_equal(unlimited.used, [2, 2])  # ... and are charged to every new ledger
    values, paid = unlimited.pay(np.stack([one, one]), np.zeros(2, np.intp), np.array([0, 1]))
    assert paid.all() and unlimited.used[0] == 4  # a repeated coalition is charged again (no memo)
    with pytest.raises(ValueError, match="at least 2"):
        Ledger(game, 1)


def test_ledger_picks_each_games_output():
    class TwoOutputs(TableGame):
        def evaluate(self, masks, games):
            base = super().evaluate(masks, games)
            return np.hstack([base, -10 * base])

    game = TwoOutputs(np.arange(8.0), n_games=2)
    ledger = Ledger(game, None, outputs=np.array([1, 0]))
    np.testing.assert_array_equal(ledger.full, [-70.0, 7.0])
    values, _ = ledger.pay(np.array([[True, False, False]] * 2), np.array([0, 1]), np.array([0, 1]))
    np.testing.assert_array_equal(values, [-10.0, 1.0])


def test_player_stats_merge_batches_like_one_pass():
    rng = np.random.default_rng(12)
    stats = PlayerStats(2, 3)
    games = rng.integers(0, 2, 40)
    samples = rng.normal(size=(40, 3)) * 5 + 100
    taken = rng.random((40, 3)) < 0.7
    for start in range(0, 40, 7):
        stats.add(games[start : start + 7], samples[start : start + 7], taken[start : start + 7])
    for g in range(2):
        for j in range(3):
            x = samples[(games == g) & taken[:, j], j]
            assert stats.count[g, j] == x.size
            assert stats.mean[g, j] == pytest.approx(x.mean(), rel=1e-12)
            assert stats.variance()[g, j] == pytest.approx(x.var(ddof=1), rel=1e-9)
            assert stats.stderr()[g, j] == pytest.approx(x.std(ddof=1) / np.sqrt(x.size), rel=1e-9)
    assert not np.isnan(PlayerStats(1, 2).stderr()).any()  # no samples: 0, not NaN


def test_pair_statistics_count_every_warm_up_round():
    pairs = PairStats(2, 3, "signed")
    samples = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [0.0, 1.0, 5.0], [1.0, 1.0, 1.0]])
    pairs.add(np.array([0, 0, 0, 1]), samples, np.ones((4, 3), bool))
    np.testing.assert_array_equal(pairs.joint[0], np.full((3, 3), 3.0))
    np.testing.assert_array_equal(pairs.joint[1], np.full((3, 3), 1.0))
    diff = samples[:3, :, None] - samples[:3, None, :]
    np.testing.assert_allclose(pairs.diff_sum[0], diff.sum(axis=0))
    np.testing.assert_allclose(pairs.diff_sq[0], (diff**2).sum(axis=0))
    taken = np.array([[True, False, True]])
    pairs.add(np.array([1]), samples[:1], taken)
    np.testing.assert_array_equal(pairs.joint[1], [[2, 1, 2], [1, 1, 1], [2, 1, 2]])


def test_misorder_probability():
    rng = np.random.default_rng(0)
    pairs = PairStats(1, 3, "signed")
    samples = rng.normal(size=(50, 3)) + [2.0, 1.0, 0.0]
    pairs.add(np.zeros(50, np.intp), samples, np.ones((50, 3), bool))
    probability, joint = pairs.misorder_probability(np.array([0]), np.array([[0]]), np.array([[1, 2]]), np.ones((1, 3)))
    assert probability.shape == joint.shape == (1, 1, 2)
    np.testing.assert_array_equal(joint, 50)
    for j, p in zip((1, 2), probability[0, 0], strict=True):
        diff = samples[:, 0] - samples[:, j]
        assert p == pytest.approx(norm.cdf(-diff.sum() / np.sqrt(diff.var(ddof=1) * 50)), rel=1e-9)


def test_bounds_and_the_pac_rule():
    assert bonferroni_z(0.05, 10) == pytest.approx(norm.ppf(1 - 0.05 / 20))
    stats = PlayerStats(1, 4)
    samples = np.array([[4.0, 1.0, -3.0, 0.5], [6.0, 1.2, -3.4, -0.5], [5.0, 0.8, -2.6, 0.0]])
    stats.add(np.zeros(3, np.intp), samples, np.ones((3, 4), bool))
    z = 2.0
    lower, upper = confidence_bounds(stats, z, "signed")
    np.testing.assert_allclose(lower, stats.mean - z * stats.stderr())
    np.testing.assert_allclose(upper, stats.mean + z * stats.stderr())
    lower_abs, upper_abs = confidence_bounds(stats, z, "absolute")
    np.testing.assert_allclose(lower_abs[0, [0, 2]], np.abs(stats.mean[0, [0, 2]]) - z * stats.stderr()[0, [0, 2]])
    assert lower_abs[0, 3] == 0.0  # an interval around 0: |φ| may be 0
    np.testing.assert_allclose(upper_abs, np.maximum(-lower, upper))
    in_top = top_k_mask(stats.mean, 1)
    np.testing.assert_array_equal(in_top, [[True, False, False, False]])
    gap = upper[0, 1:].max() - lower[0, 0]
    assert pac_satisfied(stats, in_top, z, gap + 1e-9, 3, "signed")[0]
    assert not pac_satisfied(stats, in_top, z, gap - 1e-9, 3, "signed")[0]
    assert not pac_satisfied(stats, in_top, z, gap + 1e-9, 4, "signed")[0]  # fewer than t_min samples
    assert pac_satisfied(stats, np.ones((1, 4), bool), z, 0.0, 3, "signed")[0]  # k = d: always


def test_top_k_indices_break_ties_by_index():
    key = np.array([[1.0, 3.0, 3.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(top_k_indices(key, 2), [[1, 2], [0, 1]])
    np.testing.assert_array_equal(top_k_mask(key, 3), [[False, True, True, True], [True, True, True, False]])
