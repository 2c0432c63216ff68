"""The permutation baselines of the top-k paper: ApproShapley walks and SamplingSHAP@K pair marginals."""

import numpy as np
import pytest

from sklearn_shapq.algorithms import top_k_shapley
from sklearn_shapq.algorithms._topk_permutation import pair_marginals, permutation_rounds
from sklearn_shapq.algorithms._topk_state import Ledger
from sklearn_shapq.games import TableGame, planted_unanimity_game
from sklearn_shapq.samplers import KeyedStream, row_keys

from game_helpers import LoggingGame, all_masks, codes_of


def stream_of(n_games, seed=0):
    return KeyedStream(row_keys(seed, np.arange(n_games, dtype=float)[:, None]))


def test_permutation_rounds_walk_the_prefixes():
    d = 6
    table = np.random.default_rng(11).normal(size=2**d)
    game = LoggingGame(table)
    ledger = Ledger(game, None)
    gains, taken = permutation_rounds(ledger, np.zeros(50, np.intp), stream_of(1))
    assert taken.all()
    np.testing.assert_allclose(gains.sum(axis=1), table[-1] - table[0], atol=1e-12)  # efficiency per walk
    masks = game.calls[-1][0]
    assert len(masks) == 50 * (d - 1) and ledger.used[0] == 2 + 50 * (d - 1)
    walks = masks.reshape(50, d - 1, d)
    np.testing.assert_array_equal(walks.sum(axis=2), np.tile(np.arange(1, d), (50, 1)))
    assert (walks[:, :-1] <= walks[:, 1:]).all()  # nested prefixes
    for walk, gain in zip(walks, gains, strict=True):  # each gain is v(pre ∪ {i}) − v(pre) along the walk
        nested = np.vstack([np.zeros(d, bool), walk, np.ones(d, bool)])
        for before, after in zip(nested[:-1], nested[1:], strict=True):
            player = int(np.flatnonzero(after & ~before)[0])
            expected = table[codes_of(after[None])[0]] - table[codes_of(before[None])[0]]
            assert gain[player] == pytest.approx(expected, abs=1e-13)
    cut = Ledger(LoggingGame(table), 2 + 2 * (d - 1) + 3)
    gains, taken = permutation_rounds(cut, np.zeros(4, np.intp), stream_of(1))
    assert taken.all(axis=1).tolist() == [True, True, False, False]  # walks are paid whole
    assert cut.used[0] == 2 + 2 * (d - 1)


def test_permutation_rounds_are_uniform_permutations():
    d = 4
    game = TableGame(np.arange(2.0**d))
    masks_seen = []

    class Spy(Ledger):
        def pay(self, masks, games, units):
            masks_seen.append(masks.copy())
            return super().pay(masks, games, units)

    permutation_rounds(Spy(game, None), np.zeros(24 * 400, np.intp), stream_of(1, seed=3))
    walks = masks_seen[0].reshape(-1, d - 1, d)
    first = walks[:, 0].argmax(axis=1)  # the first player of each walk
    counts = np.bincount(first, minlength=d)
    assert (np.abs(counts - counts.mean()) < 5 * np.sqrt(counts.mean())).all()


def test_pair_marginals():
    d = 5
    table = np.random.default_rng(2).normal(size=2**d)
    game = LoggingGame(table, n_games=2)
    ledger = Ledger(game, None)
    selected = np.zeros((3, d), bool)
    selected[0, [1, 3]] = True
    selected[1, 4] = True
    selected[2, [0, 2]] = True
    games = np.array([0, 1, 1])
    samples, taken = pair_marginals(ledger, games, selected, stream_of(2))
    np.testing.assert_array_equal(taken, selected)
    assert np.isnan(samples[~selected]).all()
    masks, logged_games = game.calls[-1]
    pairs = masks.reshape(-1, 2, d)
    added = pairs[:, 1] & ~pairs[:, 0]
    np.testing.assert_array_equal(added.sum(axis=1), 1)  # a prefix without i, and with i
    np.testing.assert_array_equal(pairs[:, 0] | pairs[:, 1], pairs[:, 1])
    rows, players = np.nonzero(selected)
    np.testing.assert_array_equal(added.argmax(axis=1), players)
    np.testing.assert_array_equal(logged_games[0::2], games[rows])
    np.testing.assert_allclose(samples[rows, players], table[codes_of(pairs[:, 1])] - table[codes_of(pairs[:, 0])])


def test_sampling_shap_at_k_rounds_after_the_warm_up():
    """Warm-up: t_min permutations in one call; then the border pair, two coalitions each, per call."""
    d, t_min = 6, 5
    base = planted_unanimity_game(d, 2, np.random.default_rng(2))
    game = LoggingGame(base.evaluate(all_masks(d), np.zeros(2**d, np.intp))[:, 0])
    result = top_k_shapley(game, 2, "sampling_shap_at_k", max_evals=600, t_min=t_min, random_state=0)
    sizes = [len(m) for m, _ in game.calls]
    assert sizes[0] == 2
    assert sizes[1] == t_min * (d - 1)
    assert max(sizes[2:]) <= 4
    assert sum(sizes) == result.n_evals[0] >= 599
    assert (result.counts >= t_min).all()


@pytest.mark.parametrize("method", ["permutation", "sampling_shap_at_k"])
def test_walks_are_efficient_and_unbiased(method):
    """ApproShapley: every walk sums to v(N) − v(∅); the mean over lockstep runs is unbiased."""
    d, runs = 5, 3000
    table = np.random.default_rng(6).normal(size=2**d)
    game = TableGame(table, n_games=runs)
    phi = game.shapley_values()[0, :, 0]
    result = top_k_shapley(game, 2, method, max_evals=2 + 4 * (d - 1), t_min=4, random_state=1)
    if method == "permutation":
        np.testing.assert_allclose(result.values.sum(axis=1), table[-1] - table[0], atol=1e-12)
    z = (result.values.mean(axis=0) - phi) / (result.values.std(axis=0, ddof=1) / np.sqrt(runs))
    assert np.abs(z).max() < 4.0, z
