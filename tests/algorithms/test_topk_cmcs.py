"""The CMCS family (spec topk_cmcs.md): the CMCS law by enumeration and chi-square, rounds, Greedy CMCS, CMCS@K."""

from math import comb, factorial

import numpy as np
import pytest
from scipy.stats import chisquare

from sklearn_shapq.algorithms import top_k_shapley
from sklearn_shapq.algorithms._topk_cmcs import (
    cmcs_coalition_probability,
    cmcs_coalitions,
    cmcs_rounds,
    extended_marginals,
    warm_up_cmcs,
)
from sklearn_shapq.algorithms._topk_state import Ledger, PairStats, PlayerStats
from sklearn_shapq.games import TableGame, planted_unanimity_game
from sklearn_shapq.samplers import KeyedStream, row_keys

from brute_force import brute_force_shapley
from game_helpers import LoggingGame, all_masks, codes_of

ALPHA = 1e-3


def stream_of(n_games, seed=0):
    return KeyedStream(row_keys(seed, np.arange(n_games, dtype=float)[:, None]))


def additive_game(w, n_games=1):
    w = np.asarray(w, dtype=float)
    return TableGame(all_masks(w.size) @ w, n_games=n_games)


# ---------------------------------------------------------------- A. the CMCS law, exactly


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8])
def test_cmcs_law_is_unbiased_by_enumeration(d):
    """Prop. 5.2: Σ_S P_CMCS(S) Δ_i(S) = φ_i for every player, and Σ_S P_CMCS(S) = 1."""
    rng = np.random.default_rng(d)
    table = rng.normal(size=2**d) * 3 + 1
    masks = all_masks(d)
    probability = cmcs_coalition_probability(d)[masks.sum(axis=1)]
    np.testing.assert_allclose(probability.sum(), 1.0, rtol=1e-13)
    neighbours = table[codes_of(masks[:, None, :] ^ np.eye(d, dtype=bool))]
    delta = extended_marginals(table, neighbours, masks)
    phi = TableGame(table).shapley_values()[0, :, 0]
    np.testing.assert_allclose(probability @ delta, phi, atol=1e-12)
    if d <= 5:
        bits = 1 << np.arange(d)
        np.testing.assert_allclose(phi, brute_force_shapley(lambda s: table[int(bits[list(s)].sum())], d), atol=1e-12)


def test_cmcs_coalition_probability_values():
    for d in (1, 4, 9):
        probability = cmcs_coalition_probability(d)
        np.testing.assert_allclose(probability, [1 / ((d + 1) * comb(d, s)) for s in range(d + 1)])
        np.testing.assert_allclose(probability @ [comb(d, s) for s in range(d + 1)], 1.0)


@pytest.mark.parametrize("d", [2, 4, 6])
def test_each_players_cmcs_sample_follows_the_shapley_law(d):
    """The pair (S ∖ {i}, S ∪ {i}) under P_CMCS has the Shapley weights of Eq. 9."""
    masks = all_masks(d)
    probability = cmcs_coalition_probability(d)[masks.sum(axis=1)]
    sizes = masks.sum(axis=1)
    shapley = np.array([factorial(s) * factorial(d - s - 1) / factorial(d) for s in range(d)])
    for i in range(d):
        without = masks & ~np.eye(d, dtype=bool)[i]
        law = np.bincount(codes_of(without), weights=probability, minlength=2**d)
        expected = np.where(masks[:, i], 0.0, shapley[np.minimum(sizes, d - 1)])
        np.testing.assert_allclose(law, expected, atol=1e-15)


def test_extended_marginals_match_the_definition():
    rng = np.random.default_rng(4)
    d = 5
    table = rng.normal(size=2**d)
    coalitions = rng.random((20, d)) < 0.5
    value = table[codes_of(coalitions)]
    neighbours = table[codes_of(coalitions[:, None, :] ^ np.eye(d, dtype=bool))]
    delta = extended_marginals(value, neighbours, coalitions)
    for r, S in enumerate(coalitions):
        for i in range(d):
            plus, minus = S.copy(), S.copy()
            plus[i], minus[i] = True, False
            v_plus, v_minus = table[codes_of(plus[None])[0]], table[codes_of(minus[None])[0]]
            assert delta[r, i] == pytest.approx(v_plus - v_minus, abs=1e-14)  # never the trivial 0


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_cmcs_covariance_of_square_game(n):
    """Prop. 5.3 on v(S) = |S|^2: φ_i = n, Δ_i(S) = 2|S| + 1 − 2·1[i∈S], Cov(Δ_i, Δ_j) = (n² − 3)/3."""
    masks = all_masks(n)
    table = masks.sum(axis=1) ** 2.0
    probability = cmcs_coalition_probability(n)[masks.sum(axis=1)]
    neighbours = table[codes_of(masks[:, None, :] ^ np.eye(n, dtype=bool))]
    delta = extended_marginals(table, neighbours, masks)
    np.testing.assert_allclose(delta, 2 * masks.sum(axis=1, keepdims=True) + 1 - 2 * masks)
    np.testing.assert_allclose(probability @ delta, np.full(n, float(n)))
    covariance = (probability[:, None, None] * delta[:, :, None] * delta[:, None, :]).sum(axis=0) - n * n
    off_diagonal = covariance[~np.eye(n, dtype=bool)]
    np.testing.assert_allclose(off_diagonal, (n * n - 3) / 3, rtol=1e-12)


# ---------------------------------------------------------------- the CMCS law, sampled


def test_cmcs_coalitions_from_draws():
    u = np.array([[0.2, 0.9, 0.5], [0.2, 0.9, 0.5], [0.2, 0.9, 0.5]])
    out = cmcs_coalitions(np.array([0.99, 0.0, 0.3]), u)  # sizes ⌊(d + 1) u⌋ = 3, 0, 1
    np.testing.assert_array_equal(out.astype(int), [[1, 1, 1], [0, 0, 0], [1, 0, 0]])


def test_cmcs_sizes_are_uniform_chi_square():
    rng = np.random.default_rng(2024)
    d, n = 5, 100_000
    coalitions = cmcs_coalitions(rng.random(n), rng.random((n, d)))
    assert coalitions.shape == (n, d) and coalitions.dtype == bool
    sizes = np.bincount(coalitions.sum(axis=1), minlength=d + 1)
    assert chisquare(sizes).pvalue > ALPHA  # uniform on {0, …, d}, both ends included
    assert sizes[0] > 0.8 * n / (d + 1) and sizes[d] > 0.8 * n / (d + 1)


def test_cmcs_coalitions_are_uniform_given_their_size():
    """The rounds' own draws (a KeyedStream per game) give the CMCS law P(S) = 1 / ((d + 1) C(d, |S|))."""
    d, n = 4, 60_000
    draws = stream_of(3, seed=7).uniform(np.repeat(np.arange(3), n // 3), 2 * d + 1)
    coalitions = cmcs_coalitions(draws[:, 0], draws[:, 1 : d + 1])
    counts = np.bincount(codes_of(coalitions), minlength=2**d)
    sizes = all_masks(d).sum(axis=1)
    for s in range(d + 1):
        same_size = counts[sizes == s]
        assert same_size.size == comb(d, s)
        if same_size.size > 1:
            assert chisquare(same_size).pvalue > ALPHA
    expected = n * cmcs_coalition_probability(d)[sizes]
    assert chisquare(counts, expected).pvalue > ALPHA


# ---------------------------------------------------------------- rounds against an independent log


def _round_coalition(masks, d):
    """S of one CMCS round from its evaluated masks: the mask whose one-player flips give the rest."""
    logged = {tuple(m) for m in masks}
    assert len(logged) == len(masks)  # a round evaluates no coalition twice
    candidates = [tuple(m) for m in masks] + [(False,) * d, (True,) * d]
    for S in candidates:
        flips = {tuple(np.logical_xor(S, np.eye(d, dtype=bool)[i])) for i in range(d)}
        corners = {(False,) * d, (True,) * d}
        if logged - {S} <= flips and (S in logged or S in corners):
            return np.array(S), flips
    raise AssertionError(f"no coalition explains the round {masks.astype(int)}")


def test_cmcs_round_evaluates_s_and_its_neighbours():
    """Spec §13.10: a round's masks are {S} ∪ {S △ {i}} minus {∅, N}; its cost n+1 minus cache hits."""
    d = 5
    table = np.random.default_rng(8).normal(size=2**d)
    game = LoggingGame(table)
    ledger = Ledger(game, None)
    stream = stream_of(1)
    corners = {(False,) * d, (True,) * d}
    costs, sizes_seen = [], set()
    for _ in range(300):
        before = len(game.calls)
        samples, taken = cmcs_rounds(ledger, np.array([0]), np.ones((1, d), bool), stream)
        assert taken.all()
        masks = game.calls[before][0] if len(game.calls) > before else np.zeros((0, d), bool)
        S, flips = _round_coalition(masks, d)
        assert {tuple(m) for m in masks} == ({tuple(S)} | flips) - corners
        costs.append(len(masks))
        sizes_seen.add(int(S.sum()))
        assert len(masks) == (d if S.sum() in (0, 1, d - 1, d) else d + 1)
        for i in range(d):  # the samples are the extended marginal contributions of that S
            plus, minus = S.copy(), S.copy()
            plus[i], minus[i] = True, False
            expected_delta = table[codes_of(plus[None])[0]] - table[codes_of(minus[None])[0]]
            assert samples[0, i] == pytest.approx(expected_delta, abs=1e-13)
    assert sizes_seen == set(range(d + 1))
    assert ledger.used[0] == game.n_evals[0] == 2 + sum(costs)


def _coalition_from_samples(table, samples, selected):
    """The S whose extended marginal contributions are ``samples`` on the selected players (found by search)."""
    d = samples.size
    masks = all_masks(d)
    neighbours = table[codes_of(masks[:, None, :] ^ np.eye(d, dtype=bool))]
    delta = extended_marginals(table, neighbours, masks)
    match = np.flatnonzero(np.isclose(delta[:, selected], samples[selected], rtol=0, atol=1e-12).all(axis=1))
    assert match.size == 1
    return masks[match[0]]


def test_cmcs_rounds_with_selected_players_and_many_games():
    """Several rounds per game and a subset of players per round: masks per game, per round as specified."""
    d, n_games = 6, 4
    table = np.random.default_rng(9).normal(size=2**d)
    game = LoggingGame(table, n_games=n_games)
    ledger = Ledger(game, None)
    rng = np.random.default_rng(1)
    games = np.array([0, 0, 1, 2, 3, 3, 3])
    selected = rng.random((games.size, d)) < 0.5
    selected[:, 0] = True
    samples, taken = cmcs_rounds(ledger, games, selected, stream_of(n_games))
    np.testing.assert_array_equal(taken, selected)
    assert np.isnan(samples[~selected]).all() and np.isfinite(samples[selected]).all()
    masks, logged_games = game.calls[-1]
    corners = {(False,) * d, (True,) * d}
    for g in range(n_games):
        expected = []
        for r in np.flatnonzero(games == g):
            S = _coalition_from_samples(table, samples[r], selected[r])
            round_masks = [S] + [S ^ np.eye(d, dtype=bool)[i] for i in np.flatnonzero(selected[r])]
            expected += [tuple(m) for m in round_masks if tuple(m) not in corners]
        assert sorted(tuple(m) for m in masks[logged_games == g]) == sorted(expected)
        assert ledger.used[g] == 2 + len(expected)


def test_cmcs_rounds_of_a_game_do_not_depend_on_the_other_games():
    d = 5
    table = np.random.default_rng(3).normal(size=2**d)
    keys = row_keys(0, np.arange(3.0)[:, None])
    together = cmcs_rounds(
        Ledger(TableGame(table, 3), None), np.array([2, 0, 2, 1]), np.ones((4, d), bool), KeyedStream(keys)
    )
    alone = cmcs_rounds(Ledger(TableGame(table), None), np.array([0, 0]), np.ones((2, d), bool), KeyedStream(keys[2:]))
    np.testing.assert_array_equal(together[0][[0, 2]], alone[0])


def test_cmcs_round_cut_by_the_budget():
    """A round cut short pays S with its first neighbour, then neighbours one by one."""
    d = 6
    table = np.random.default_rng(10).normal(size=2**d)
    for budget in range(2, 2 + 2 * (d + 1)):
        for seed in range(5):
            game = LoggingGame(table)
            ledger = Ledger(game, budget)
            samples, taken = cmcs_rounds(ledger, np.zeros(3, np.intp), np.ones((3, d), bool), stream_of(1, seed))
            assert ledger.used[0] == game.n_evals[0] <= budget
            assert (budget - ledger.used[0]) <= 1
            assert np.isfinite(samples[taken]).all() and np.isnan(samples[~taken]).all()
            counts = taken.sum(axis=1)
            cut_rounds = np.flatnonzero(counts < d)
            if cut_rounds.size:  # rounds after the first cut one are not paid at all
                assert (counts[cut_rounds[0] + 1 :] == 0).all()


def test_warm_up_runs_t_min_full_rounds_per_game():
    d, n_games, t_min = 5, 3, 4
    game = LoggingGame(np.random.default_rng(2).normal(size=2**d), n_games=n_games)
    ledger = Ledger(game, None)
    stats, pairs = PlayerStats(n_games, d), PairStats(n_games, d, "signed")
    survivors = warm_up_cmcs(ledger, stats, pairs, t_min, stream_of(n_games))
    np.testing.assert_array_equal(survivors, np.arange(n_games))
    np.testing.assert_array_equal(stats.count, t_min)
    np.testing.assert_array_equal(pairs.joint, t_min)
    assert len(game.calls) == 2  # the corners, then every warm-up round in one call
    short = Ledger(LoggingGame(game.values, n_games=n_games), 2 + 2 * (d + 1))
    assert warm_up_cmcs(short, PlayerStats(n_games, d), None, t_min, stream_of(n_games)).size == 0


# ---------------------------------------------------------------- the adaptive methods


def test_greedy_cmcs_with_zero_variance_samples_everyone():
    """Spec §13.3: p̂ ≡ 0 (no NaN), so every round selects all players."""
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    game = LoggingGame(all_masks(6) @ w)
    with np.errstate(all="raise"):
        result = top_k_shapley(game, 2, "greedy_cmcs", max_evals=400, t_min=2, random_state=0)
    assert not np.isnan(result.values).any() and not np.isnan(result.stderr).any()
    np.testing.assert_allclose(result.values[0], w, atol=1e-12)
    assert np.ptp(result.counts) <= 1  # only the last round may be cut
    assert result.counts.min() > 50


@pytest.mark.parametrize("rounds_per_decision", [1, 4])
@pytest.mark.parametrize(("method", "most_masks"), [("greedy_cmcs", 7), ("cmcs_at_k", 3)])
def test_adaptive_rounds_after_the_warm_up(method, most_masks, rounds_per_decision):
    """Warm-up in one call (t_min rounds), then one small step of rounds per call (spec §13.11, §13.16)."""
    d, t_min, rounds = 6, 5, rounds_per_decision
    base = planted_unanimity_game(d, 2, np.random.default_rng(2))
    game = LoggingGame(base.evaluate(all_masks(d), np.zeros(2**d, np.intp))[:, 0])
    result = top_k_shapley(game, 2, method, max_evals=600, t_min=t_min, rounds_per_decision=rounds, random_state=0)
    sizes = [len(m) for m, _ in game.calls]
    assert sizes[0] == 2
    assert t_min * d <= sizes[1] <= t_min * (d + 1)
    assert max(sizes[2:]) <= rounds * most_masks
    assert sum(sizes) == result.n_evals[0] >= 599
    adaptive = sizes[2:]
    assert len(adaptive) <= -(-sum(adaptive) // rounds) + 1  # a round costs >= 1: a call pays >= rounds
    if rounds == 1:
        for masks, _ in game.calls[2:]:
            _round_coalition(masks, d)  # S and some of its neighbours
    selective = np.array(adaptive) < rounds * d
    assert selective.mean() > 0.5  # the adaptive phase is not plain CMCS ...
    assert selective[: -(-t_min // rounds)].any()  # ... from right after the t_min warm-up rounds
    assert (result.counts >= t_min).all()


@pytest.mark.parametrize("method", ["greedy_cmcs", "cmcs_at_k"])
def test_auto_rounds_make_steps_of_a_tenth_of_the_rounds_run(method):
    """rounds_per_decision="auto": step t runs ceil(0.1 x rounds so far) rounds, so calls grow geometrically."""
    d, t_min = 6, 5
    base = planted_unanimity_game(d, 2, np.random.default_rng(2))
    calls = {}
    for rounds in (1, "auto"):
        game = LoggingGame(base.evaluate(all_masks(d), np.zeros(2**d, np.intp))[:, 0])
        result = top_k_shapley(game, 2, method, max_evals=600, t_min=t_min, rounds_per_decision=rounds, random_state=0)
        assert result.n_evals[0] >= 599
        calls[rounds] = [len(m) for m, _ in game.calls[2:]]
    # every round costs at least 2 evaluations: the schedule's steps until it has run that many rounds
    most_rounds, done, steps = sum(calls["auto"]) // 2, t_min, 0
    while done - t_min < most_rounds:
        done += max(1, -(-done // 10))
        steps += 1
    assert len(calls["auto"]) <= steps
    assert len(calls["auto"]) < len(calls[1]) / 2
    assert max(calls["auto"]) > 3 * max(calls[1])  # late steps run many rounds in one call


@pytest.mark.parametrize("method", ["cmcs", "greedy_cmcs", "cmcs_at_k"])
def test_pac_on_an_additive_game_stops_after_the_warm_up(method):
    d, t_min = 6, 4
    w = np.array([0.3, 2.0, -1.0, 1.5, 0.1, 0.7])
    result = top_k_shapley(additive_game(w, 3), 2, method, epsilon=1e-12, t_min=t_min, random_state=0)
    assert result.pac_satisfied.all()
    assert (result.n_evals <= 2 + t_min * (d + 1)).all()  # no round after the warm-up
    np.testing.assert_array_equal(result.counts, t_min)
    np.testing.assert_allclose(result.values, np.tile(w, (3, 1)), atol=1e-12)
    np.testing.assert_allclose(result.stderr, 0.0, atol=1e-12)
    assert [set(row) for row in result.top_k] == [{1, 3}] * 3


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 7])
def test_additive_game_is_exact_after_one_cmcs_round(k):
    w = np.array([0.5, -1.0, 2.0, 0.25, 3.0, 1.5, -0.5])
    d = w.size
    result = top_k_shapley(additive_game(w), k, "cmcs", max_evals=d + 3, random_state=k)
    assert result.n_evals[0] <= d + 3
    assert (result.counts >= 1).all()
    np.testing.assert_allclose(result.values[0], w, atol=1e-12)
    np.testing.assert_array_equal(result.top_k[0], np.argsort(-w, kind="stable")[:k])
