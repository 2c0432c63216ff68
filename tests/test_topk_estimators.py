"""Top-k Shapley identification (spec topk_cmcs.md §13): CMCS law, budgets, recovery, PAC mode and metrics."""

from itertools import combinations
from math import comb, factorial

import numpy as np
import pytest
from scipy.stats import chisquare, norm

from sklearn_shapq.estimators import (
    binary_precision,
    inclusion_exclusion_error,
    ratio_precision,
    top_k_shapley,
)
from sklearn_shapq.estimators._topk import (
    PAC_METHODS,
    TOPK_METHODS,
    cmcs_coalition_probability,
    cmcs_rounds,
    draw_cmcs_coalitions,
    extended_marginals,
    permutation_rounds,
)
from sklearn_shapq.estimators._topk_state import Ledger, PairStats, PlayerStats
from sklearn_shapq.games import CallableGame, TableGame, UnanimityGame, planted_unanimity_game

from brute_force import brute_force_shapley

SAMPLING_METHODS = tuple(m for m in TOPK_METHODS if m not in ("svarm", "stratified_svarm"))
"""Methods that average marginal contributions (exact on additive games)."""


def all_masks(d):
    codes = np.arange(2**d)
    return ((codes[:, None] >> np.arange(d)) & 1).astype(bool)


def codes_of(masks):
    return masks.astype(np.int64) @ (np.int64(1) << np.arange(masks.shape[1], dtype=np.int64))


def additive_game(w, n_games=1):
    w = np.asarray(w, dtype=float)
    return TableGame(all_masks(w.size) @ w, n_games=n_games)


class LoggingGame(CallableGame):
    """An independent counter: logs every coalition handed to the wrapped table, per call."""

    def __init__(self, table, n_games=1):
        self.table = np.asarray(table, dtype=float)
        self.calls = []
        d = self.table.size.bit_length() - 1
        super().__init__(self._log, d, n_games)

    def _log(self, masks, games=None):
        games = np.zeros(len(masks), np.intp) if games is None else games
        self.calls.append((masks.copy(), games.copy()))
        return self.table[codes_of(masks)]

    def logged(self):
        if not self.calls:
            return np.zeros((0, self.n_players), bool), np.zeros(0, np.intp)
        return np.concatenate([m for m, _ in self.calls]), np.concatenate([g for _, g in self.calls])


def comparability_game(n=12):
    """Spec §13.16: v(S) = (|S|/n)^2 Σ_{i∈S} w_i + 0.3 sin(0.7 index(S)) 1[S ≠ ∅], w sorted U(0, 1), seed 5.

    index(S) puts player 0 on the most significant bit: the spec's calibration numbers
    (CMCS 0.81, ApproShapley 0.28 at B = 300) are reproduced with that order, not the reverse.
    """
    w = np.sort(np.random.default_rng(5).uniform(size=n))
    masks = all_masks(n)
    index = masks.astype(np.int64) @ (np.int64(1) << np.arange(n - 1, -1, -1, dtype=np.int64))
    return (masks.sum(axis=1) / n) ** 2 * (masks @ w) + 0.3 * np.sin(0.7 * index) * (index > 0)


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
    phi = TableGame(table).shapley_values()[0]
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


def test_cmcs_sizes_are_uniform_chi_square():
    rng = np.random.default_rng(2024)
    d, n = 5, 100_000
    coalitions = draw_cmcs_coalitions(rng, n, d)
    assert coalitions.shape == (n, d) and coalitions.dtype == bool
    sizes = np.bincount(coalitions.sum(axis=1), minlength=d + 1)
    assert chisquare(sizes).pvalue > 1e-3  # uniform on {0, …, d}, both ends included
    assert sizes[0] > 0.8 * n / (d + 1) and sizes[d] > 0.8 * n / (d + 1)


def test_cmcs_coalitions_are_uniform_given_their_size():
    rng = np.random.default_rng(7)
    d, n = 4, 60_000
    coalitions = draw_cmcs_coalitions(rng, n, d)
    counts = np.bincount(codes_of(coalitions), minlength=2**d)
    sizes = all_masks(d).sum(axis=1)
    for s in range(d + 1):
        same_size = counts[sizes == s]
        assert same_size.size == comb(d, s)
        if same_size.size > 1:
            assert chisquare(same_size).pvalue > 1e-3
    # marginally: P(S) = 1 / ((d + 1) C(d, |S|))
    expected = n * cmcs_coalition_probability(d)[sizes]
    assert chisquare(counts, expected).pvalue > 1e-3


# ---------------------------------------------------------------- B. Monte Carlo unbiasedness


@pytest.mark.parametrize(("method", "budget"), [("cmcs", 30), ("cmcs", 2 + 3 * 7), ("permutation", 27)])
def test_monte_carlo_mean_is_unbiased(method, budget):
    """Mean of φ̂ over 4000 lockstep runs within 4 standard errors of φ (not for the adaptive methods)."""
    d, runs = 6, 4000
    table = np.random.default_rng(3).normal(size=2**d) * 2
    game = TableGame(table, n_games=runs)
    phi = game.shapley_values()[0]
    result = top_k_shapley(game, 2, method, max_evals=budget, random_state=0)
    standard_error = result.values.std(axis=0, ddof=1) / np.sqrt(runs)
    z = (result.values.mean(axis=0) - phi) / standard_error
    assert np.abs(z).max() < 4.0, z
    assert (result.values.std(axis=0) > 0).all()  # the runs are independent, not copies


def test_lockstep_runs_are_independent_and_reproducible():
    table = np.random.default_rng(0).normal(size=2**5)
    for method in TOPK_METHODS:
        first = top_k_shapley(TableGame(table, n_games=3), 2, method, max_evals=60, t_min=3, random_state=5)
        second = top_k_shapley(TableGame(table, n_games=3), 2, method, max_evals=60, t_min=3, random_state=5)
        np.testing.assert_array_equal(first.values, second.values)
        np.testing.assert_array_equal(first.top_k, second.top_k)
        np.testing.assert_array_equal(first.n_evals, second.n_evals)
        assert not np.array_equal(first.values[0], first.values[1]), method
        third = top_k_shapley(TableGame(table, n_games=3), 2, method, max_evals=60, t_min=3, random_state=6)
        assert not np.array_equal(first.values, third.values), method
    generator = top_k_shapley(TableGame(table), 2, "cmcs", max_evals=60, random_state=np.random.default_rng(1))
    assert generator.values.shape == (1, 5)


# ---------------------------------------------------------------- C. budget accounting


@pytest.mark.parametrize("n_games", [1, 3])
@pytest.mark.parametrize("method", TOPK_METHODS)
def test_budget_matches_an_independent_counter(method, n_games):
    d = 5
    table = np.random.default_rng(1).normal(size=2**d)
    leftover_bound = {"permutation": d - 2, "sampling_shap_at_k": d - 2, "svarm": 0}.get(method, 1)
    for budget in (2, 3, d, d + 1, d + 2, 2 * d, 10 * d, 1000):
        game = LoggingGame(table, n_games=n_games)
        result = top_k_shapley(game, 2, method, max_evals=budget, random_state=budget)
        masks, games = game.logged()
        counts = np.bincount(games, minlength=n_games)
        np.testing.assert_array_equal(counts, result.n_evals)  # reported = evaluated
        np.testing.assert_array_equal(game.n_evals, counts)
        assert counts.max() <= budget  # never past the budget
        assert (budget - counts).max() <= leftover_bound  # and (nearly) all of it spent
        sizes = masks.sum(axis=1)
        for g in range(n_games):  # ∅ and N once per game, in the first call
            assert ((sizes == 0) & (games == g)).sum() == 1
            assert ((sizes == d) & (games == g)).sum() == 1
        first_masks, first_games = game.calls[0]
        assert len(first_masks) == 2 * n_games
        assert set(first_masks.sum(axis=1)) == {0, d} and set(first_games) == set(range(n_games))
        assert result.values.shape == result.stderr.shape == result.counts.shape == (n_games, d)
        assert result.top_k.shape == (n_games, 2)
        assert not np.isnan(result.values).any() and not np.isnan(result.stderr).any()


@pytest.mark.parametrize("method", PAC_METHODS)
def test_budget_cap_in_pac_mode(method):
    game = LoggingGame(np.random.default_rng(2).normal(size=2**6), n_games=4)
    result = top_k_shapley(game, 2, method, max_evals=150, epsilon=0.0, t_min=5, random_state=0)
    counts = np.bincount(game.logged()[1], minlength=4)
    np.testing.assert_array_equal(counts, result.n_evals)
    assert counts.max() <= 150


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
    rng = np.random.default_rng(0)
    corners = {(False,) * d, (True,) * d}
    costs, sizes_seen = [], set()
    for _ in range(300):
        before = len(game.calls)
        samples, taken = cmcs_rounds(ledger, np.array([0]), np.ones((1, d), bool), rng)
        assert taken.all()
        masks = game.calls[before][0] if len(game.calls) > before else np.zeros((0, d), bool)
        S, flips = _round_coalition(masks, d)
        expected = ({tuple(S)} | flips) - corners
        assert {tuple(m) for m in masks} == expected
        costs.append(len(masks))
        sizes_seen.add(int(S.sum()))
        assert len(masks) == (d if S.sum() in (0, 1, d - 1, d) else d + 1)
        # and the samples are the extended marginal contributions of that S
        for i in range(d):
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
    samples, taken = cmcs_rounds(ledger, games, selected, rng)
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


def test_cmcs_round_cut_by_the_budget():
    """A round cut short pays S with its first neighbour, then neighbours one by one."""
    d = 6
    table = np.random.default_rng(10).normal(size=2**d)
    for budget in range(2, 2 + 2 * (d + 1)):
        for seed in range(5):
            game = LoggingGame(table)
            ledger = Ledger(game, budget)
            rng = np.random.default_rng(seed)
            samples, taken = cmcs_rounds(ledger, np.zeros(3, np.intp), np.ones((3, d), bool), rng)
            assert ledger.used[0] == game.n_evals[0] <= budget
            assert (budget - ledger.used[0]) <= 1
            assert np.isfinite(samples[taken]).all() and np.isnan(samples[~taken]).all()
            counts = taken.sum(axis=1)
            cut_rounds = np.flatnonzero(counts < d)
            if cut_rounds.size:  # rounds after the first cut one are not paid at all
                assert (counts[cut_rounds[0] + 1 :] == 0).all()


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
    values, paid = unlimited.pay(np.stack([one, one]), np.zeros(2, np.intp), np.array([0, 1]))
    assert paid.all() and unlimited.used[0] == 4  # a repeated coalition is charged again (no memo)
    with pytest.raises(ValueError, match="at least 2"):
        Ledger(game, 1)


def test_permutation_rounds_walk_the_prefixes():
    d = 6
    table = np.random.default_rng(11).normal(size=2**d)
    game = LoggingGame(table)
    ledger = Ledger(game, None)
    gains, taken = permutation_rounds(ledger, np.zeros(50, np.intp), np.random.default_rng(0))
    assert taken.all()
    np.testing.assert_allclose(gains.sum(axis=1), table[-1] - table[0], atol=1e-12)  # efficiency per walk
    masks = game.calls[-1][0]
    assert len(masks) == 50 * (d - 1) and ledger.used[0] == 2 + 50 * (d - 1)
    walks = masks.reshape(50, d - 1, d)
    np.testing.assert_array_equal(walks.sum(axis=2), np.tile(np.arange(1, d), (50, 1)))
    assert (walks[:, :-1] <= walks[:, 1:]).all()  # nested prefixes
    cut = Ledger(LoggingGame(table), 2 + 2 * (d - 1) + 3)
    gains, taken = permutation_rounds(cut, np.zeros(4, np.intp), np.random.default_rng(0))
    assert taken.all(axis=1).tolist() == [True, True, False, False]  # walks are paid whole
    assert cut.used[0] == 2 + 2 * (d - 1)


@pytest.mark.parametrize(("method", "most_masks"), [("greedy_cmcs", 7), ("cmcs_at_k", 3), ("sampling_shap_at_k", 4)])
def test_adaptive_rounds_after_the_warm_up(method, most_masks):
    """Warm-up in one call (t_min rounds), then one small round per call (spec §13.11)."""
    d, t_min = 6, 5
    base = planted_unanimity_game(d, 2, np.random.default_rng(2))
    table = base.evaluate(all_masks(d), np.zeros(2**d, np.intp))
    game = LoggingGame(table)
    result = top_k_shapley(game, 2, method, max_evals=600, t_min=t_min, random_state=0)
    sizes = [len(m) for m, _ in game.calls]
    assert sizes[0] == 2
    if method == "sampling_shap_at_k":
        assert sizes[1] == t_min * (d - 1)
    else:
        assert t_min * d <= sizes[1] <= t_min * (d + 1)
    assert max(sizes[2:]) <= most_masks
    assert sum(sizes) == result.n_evals[0] >= 599
    if method != "sampling_shap_at_k":
        for masks, _ in game.calls[2:]:
            _round_coalition(masks, d)  # S and some of its neighbours
        selective = np.array(sizes[2:]) < d
        assert selective.mean() > 0.5  # the adaptive phase is not plain CMCS ...
        assert selective[:t_min].any()  # ... from right after the t_min warm-up rounds
    assert (result.counts >= t_min).all()


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


# ---------------------------------------------------------------- D. recovery of a planted top-k


def _success(game, k, method, budget, seed=0):
    phi = game.shapley_values()[0]
    result = top_k_shapley(game, k, method, max_evals=budget, random_state=seed)
    assert (result.n_evals <= budget).all()
    return binary_precision(phi, result.top_k).mean()


@pytest.mark.parametrize("method", ["cmcs", "greedy_cmcs", "cmcs_at_k", "permutation"])
def test_planted_top3_of_12_at_budget_300(method):
    game = planted_unanimity_game(12, 3, np.random.default_rng(123), n_games=100)
    assert _success(game, 3, method, 300) >= 0.95


@pytest.mark.parametrize("method", ["cmcs", "greedy_cmcs", "cmcs_at_k", "permutation"])
def test_planted_top5_of_30_at_budget_2000(method):
    game = planted_unanimity_game(30, 5, np.random.default_rng(123), n_games=100)
    phi = game.shapley_values()[0]
    assert np.sort(phi)[-5] - np.sort(phi)[-6] > 0.1  # a clear but not huge gap
    assert _success(game, 5, method, 2000) >= 0.95


def test_comparable_sampling_beats_permutation_sampling():
    """Spec §13.16: CMCS binary precision > ApproShapley + 0.2 at B = 300, k = 3, 300 runs."""
    table = comparability_game()
    game = TableGame(table, n_games=300)
    cmcs = _success(game, 3, "cmcs", 300)
    permutation = _success(game, 3, "permutation", 300)
    assert cmcs > permutation + 0.2, (cmcs, permutation)


# ---------------------------------------------------------------- E. PAC mode


@pytest.fixture(scope="module")
def pac_runs():
    """CMCS family and SamplingSHAP@K run to the SHAP@K rule on a planted game (δ = 0.05, ε = 1% of the range)."""
    game = planted_unanimity_game(12, 3, np.random.default_rng(5), n_games=100)
    phi = game.shapley_values()[0]
    epsilon = 0.01 * (phi.max() - phi.min())
    runs = {}
    for method in PAC_METHODS:
        result = top_k_shapley(game, 3, method, max_evals=100_000, epsilon=epsilon, delta=0.05, random_state=1)
        runs[method] = result
    return phi, epsilon, runs


@pytest.mark.parametrize("method", PAC_METHODS)
def test_pac_error_rate_is_at_most_delta(pac_runs, method):
    phi, epsilon, runs = pac_runs
    result = runs[method]
    assert result.pac_satisfied.all()  # every run stopped on the rule, not on the safety cap
    assert (result.n_evals < 100_000).all()
    correct = inclusion_exclusion_error(phi, result.top_k) <= epsilon
    delta, runs_count = 0.05, correct.size
    assert correct.mean() >= 1 - delta - 3 * np.sqrt(delta * (1 - delta) / runs_count)


@pytest.mark.parametrize("method", PAC_METHODS)
def test_pac_flag_is_the_stopping_rule(pac_runs, method):
    """pac_satisfied: max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i <= ε with z = Φ⁻¹(1 − δ/(2d)), all t >= t_min."""
    phi, epsilon, runs = pac_runs
    result = runs[method]
    z = norm.isf(0.05 / (2 * phi.size))
    inside = np.zeros(result.values.shape, bool)
    np.put_along_axis(inside, result.top_k, True, axis=1)
    upper = np.where(inside, -np.inf, result.values + z * result.stderr).max(axis=1)
    lower = np.where(inside, result.values - z * result.stderr, np.inf).min(axis=1)
    assert (upper - lower <= epsilon + 1e-12).all()
    assert (result.counts >= 30).all()


def test_cmcs_at_k_stops_sooner_than_plain_cmcs(pac_runs):
    """Spec §13.18 (paper Table 1: 2–5x fewer calls)."""
    _, _, runs = pac_runs
    cmcs, at_k, greedy = (runs[m].n_evals.mean() for m in ("cmcs", "cmcs_at_k", "greedy_cmcs"))
    assert at_k < 0.75 * cmcs, (at_k, cmcs)
    assert greedy < cmcs


def test_pac_mode_without_a_budget_and_an_unreachable_rule():
    game = planted_unanimity_game(8, 2, np.random.default_rng(1), n_games=5)
    phi = game.shapley_values()[0]
    result = top_k_shapley(game, 2, "cmcs_at_k", epsilon=0.05 * np.ptp(phi), t_min=10, random_state=0)
    assert result.pac_satisfied.all()
    capped = top_k_shapley(game, 2, "cmcs_at_k", max_evals=200, epsilon=0.0, t_min=10, random_state=0)
    assert not capped.pac_satisfied.any()  # budget first: the intervals cannot separate to ε = 0 this fast
    assert (capped.n_evals >= 199).all()


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


# ---------------------------------------------------------------- metrics


@pytest.mark.parametrize(
    ("top_k", "ratio", "error"),
    [
        ([0, 1], 1.0, 0.0),
        ([0, 2], 1.0, 0.0),
        ([2, 0], 1.0, 0.0),
        ([1, 2], 0.5, 1.0),
        ([0, 3], 0.5, 1.0),
        ([1, 3], 0.5, 1.0),
        ([2, 3], 0.5, 1.0),
        ([3, 1], 0.5, 1.0),
    ],
)
def test_metrics_hand_cases_with_ties(top_k, ratio, error):
    phi = [3.0, 2.0, 2.0, 1.0]  # k = 2: {0, 1} and {0, 2} are both eligible
    assert ratio_precision(phi, top_k)[0] == ratio
    assert binary_precision(phi, top_k)[0] == float(ratio == 1.0)
    assert inclusion_exclusion_error(phi, top_k)[0] == error


def test_metrics_more_hand_cases():
    phi = [5.0, 4.0, 4.0, 4.0, 0.0]
    np.testing.assert_array_equal(ratio_precision(phi, [[0, 3], [1, 2], [2, 4], [0, 4]]), [1.0, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(binary_precision(phi, [[0, 3], [1, 2], [2, 4], [0, 4]]), [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(inclusion_exclusion_error(phi, [[0, 3], [1, 2], [2, 4], [0, 4]]), [0, 1, 4, 4])
    # k = 3 inside a tie of three: any two of them with player 0
    np.testing.assert_array_equal(ratio_precision(phi, [[3, 0, 1], [1, 2, 3], [4, 1, 2]]), [1.0, 2 / 3, 2 / 3])
    # k = d: only the full set, trivially right
    assert ratio_precision(phi, [[4, 3, 2, 1, 0]])[0] == 1.0
    assert inclusion_exclusion_error(phi, [[4, 3, 2, 1, 0]])[0] == 0.0
    # per-row φ (n, d) with per-row sets
    rows = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    np.testing.assert_array_equal(binary_precision(rows, [[2], [0]]), [1.0, 1.0])
    np.testing.assert_array_equal(inclusion_exclusion_error(rows, [[0], [0]]), [2.0, 0.0])


def test_metrics_validation():
    with pytest.raises(ValueError, match="repeated"):
        ratio_precision([1.0, 2.0, 3.0], [1, 1])
    with pytest.raises(ValueError, match="between 1 and d"):
        binary_precision([1.0, 2.0], [0, 1, 1])
    with pytest.raises(ValueError, match="between 1 and d"):
        inclusion_exclusion_error([1.0, 2.0], np.zeros((1, 0), int))


@pytest.mark.parametrize("seed", range(4))
def test_metrics_against_brute_force_eligible_sets(seed):
    """ε = 0 iff eligible iff binary precision 1; ratio = max over eligible K of |K̂ ∩ K| / k."""
    rng = np.random.default_rng(seed)
    d = 6
    phi = rng.integers(0, 4, d).astype(float)  # many ties
    for k in range(1, d + 1):
        sets = [list(c) for c in combinations(range(d), k)]
        sums = np.array([phi[s].sum() for s in sets])
        eligible = [set(s) for s, total in zip(sets, sums, strict=True) if total == sums.max()]
        kth = np.sort(phi)[::-1][k - 1]
        ratio, binary, error = (
            ratio_precision(phi, sets),
            binary_precision(phi, sets),
            inclusion_exclusion_error(phi, sets),
        )
        for r, s in enumerate(sets):
            is_eligible = set(s) in eligible
            assert binary[r] == float(is_eligible)
            assert (error[r] == 0.0) == is_eligible
            assert ratio[r] == pytest.approx(max(len(set(s) & e) for e in eligible) / k)
            outside = [j for j in range(d) if j not in s]
            expected = max([kth - phi[i] for i in s] + [phi[j] - kth for j in outside] + [0.0])
            assert error[r] == expected


@pytest.mark.parametrize("method", TOPK_METHODS)
def test_symmetric_game_any_set_is_right(method):
    d = 6
    game = CallableGame(lambda masks: masks.sum(axis=1) ** 2.0, d, n_games=1)
    phi = game.shapley_values()[0]
    assert np.ptp(phi) == 0.0
    result = top_k_shapley(game, 3, method, max_evals=200, t_min=3, random_state=0)
    assert ratio_precision(phi, result.top_k)[0] == 1.0
    assert binary_precision(phi, result.top_k)[0] == 1.0
    assert inclusion_exclusion_error(phi, result.top_k)[0] == 0.0
    sets = list(combinations(range(d), 3))
    np.testing.assert_array_equal(ratio_precision(phi, sets), 1.0)
    np.testing.assert_array_equal(inclusion_exclusion_error(phi, sets), 0.0)


# ---------------------------------------------------------------- closed forms and edge cases


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 7])
def test_additive_game_is_exact_after_one_cmcs_round(k):
    w = np.array([0.5, -1.0, 2.0, 0.25, 3.0, 1.5, -0.5])
    d = w.size
    result = top_k_shapley(additive_game(w), k, "cmcs", max_evals=d + 3, random_state=k)
    assert result.n_evals[0] <= d + 3
    assert (result.counts >= 1).all()
    np.testing.assert_allclose(result.values[0], w, atol=1e-12)
    np.testing.assert_array_equal(result.top_k[0], np.argsort(-w, kind="stable")[:k])


@pytest.mark.parametrize("method", SAMPLING_METHODS)
def test_additive_game_is_exact_for_every_sampling_method(method):
    w = np.array([0.5, -1.0, 2.0, 0.25, 3.0])
    result = top_k_shapley(additive_game(w, 2), 2, method, max_evals=300, t_min=3, random_state=0)
    np.testing.assert_allclose(result.values, np.tile(w, (2, 1)), atol=1e-12)
    np.testing.assert_allclose(result.stderr, 0.0, atol=1e-12)
    assert [set(row) for row in result.top_k] == [{2, 4}] * 2


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


def test_absolute_ranking_picks_the_largest_magnitudes():
    d = 6
    carriers = np.vstack([np.eye(d, dtype=bool), [[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 0], [0, 1, 0, 0, 0, 1]]])
    coefficients = np.array([1.0, -6.0, 2.0, 0.5, -3.0, 0.2, 0.4, -0.6, 0.3])
    game = UnanimityGame(carriers, coefficients, n_games=50)
    phi = game.shapley_values()[0]
    assert set(np.argsort(-phi)[:2]) == {0, 2} and set(np.argsort(-np.abs(phi))[:2]) == {1, 4}
    for method in TOPK_METHODS:
        budget = 1500 if "svarm" in method else 300
        absolute = top_k_shapley(game, 2, method, max_evals=budget, ranking="absolute", random_state=0)
        signed = top_k_shapley(game, 2, method, max_evals=budget, random_state=0)
        assert binary_precision(np.abs(phi), absolute.top_k).mean() >= 0.9, method
        assert binary_precision(phi, signed.top_k).mean() >= 0.9, method
        # top_k is ordered by the ranking key, largest first
        key = np.abs(absolute.values)
        assert (
            np.take_along_axis(key, absolute.top_k, 1)[:, 0] >= np.take_along_axis(key, absolute.top_k, 1)[:, 1]
        ).all()
    pac = top_k_shapley(game, 2, "cmcs_at_k", epsilon=0.05, ranking="absolute", random_state=0)
    assert pac.pac_satisfied.all()
    assert binary_precision(np.abs(phi), pac.top_k).mean() >= 0.9


@pytest.mark.parametrize("method", TOPK_METHODS)
def test_single_player_game(method):
    game = LoggingGame([0.5, 2.0], n_games=2)
    for budget in (2, 50):
        result = top_k_shapley(game, 1, method, max_evals=budget, random_state=0)
        np.testing.assert_allclose(result.values, [[1.5], [1.5]])
        np.testing.assert_array_equal(result.top_k, [[0], [0]])
        np.testing.assert_array_equal(result.n_evals, [2, 2])
    assert len(game.calls) == 2  # only ∅ and N, once per run


@pytest.mark.parametrize("method", TOPK_METHODS)
def test_k_equal_to_d_returns_everyone(method):
    d = 4
    table = np.random.default_rng(13).normal(size=2**d)
    result = top_k_shapley(TableGame(table, n_games=2), d, method, max_evals=200, t_min=3, random_state=0)
    assert [sorted(row) for row in result.top_k] == [list(range(d))] * 2
    key = np.take_along_axis(result.values, result.top_k, 1)
    assert (np.diff(key, axis=1) <= 0).all()  # best first
    np.testing.assert_array_equal(binary_precision(TableGame(table).shapley_values()[0], result.top_k), 1.0)


@pytest.mark.parametrize("method", TOPK_METHODS)
def test_two_player_game(method):
    table = [0.0, 1.0, 3.0, 5.0]  # φ = (1.5, 3.5)
    result = top_k_shapley(TableGame(table, n_games=20), 1, method, max_evals=40, t_min=2, random_state=0)
    assert (result.n_evals <= 40).all()
    np.testing.assert_array_equal(result.top_k, 1)


# ---------------------------------------------------------------- argument validation


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 0}, "k must be an int between 1"),
        ({"k": 6}, "k must be an int between 1"),
        ({"k": 2.0}, "k must be an int"),
        ({"k": True}, "k must be an int"),
        ({"method": "kernel_shap"}, "method must be one of"),
        ({"ranking": "abs"}, "ranking must be one of"),
        ({"t_min": 1}, "t_min must be an int >= 2"),
        ({"t_min": 2.5}, "t_min must be an int >= 2"),
        ({"delta": 0.0}, "delta must lie in"),
        ({"delta": 1.0}, "delta must lie in"),
        ({"delta": "0.1"}, "delta must lie in"),
        ({"epsilon": -0.1}, "epsilon must be None or a finite number"),
        ({"epsilon": float("nan")}, "epsilon must be None or a finite number"),
        ({"epsilon": float("inf")}, "epsilon must be None or a finite number"),
        ({"epsilon": 0.1, "method": "permutation"}, "PAC mode"),
        ({"epsilon": 0.1, "method": "svarm"}, "PAC mode"),
        ({"epsilon": 0.1, "method": "stratified_svarm"}, "PAC mode"),
        ({"max_evals": None}, "give epsilon > 0"),
        ({"max_evals": None, "epsilon": 0.0}, "never separate"),
        ({"max_evals": 1}, "max_evals must be an int >= 2"),
        ({"max_evals": 0}, "max_evals must be an int >= 2"),
        ({"max_evals": 100.0}, "max_evals must be an int >= 2"),
        ({"max_evals": True}, "max_evals must be an int >= 2"),
    ],
)
def test_argument_validation(kwargs, match):
    game = TableGame(np.arange(32.0))
    arguments = {"k": 2, "method": "cmcs", "max_evals": 50} | kwargs
    with pytest.raises(ValueError, match=match):
        top_k_shapley(game, **arguments)
    assert game.n_evals[0] == 0  # nothing evaluated before the arguments are checked


def test_numpy_integers_are_accepted():
    game = TableGame(np.arange(32.0))
    result = top_k_shapley(game, np.int64(2), "cmcs", max_evals=np.int64(40), t_min=np.int32(3), random_state=0)
    assert result.n_evals[0] <= 40
