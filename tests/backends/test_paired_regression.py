"""The paired regression: the numba kernel and the array twins against systems written out and solved one by one."""

import numpy as np
import pytest

from sklearn_shapq.backends import ArrayBackend, CpuBackend

from strict_twin import StrictBackend

BACKENDS = [CpuBackend(), ArrayBackend(np, "numpy-twin"), StrictBackend()]
IDS = ["numba", "numpy twin", "strict twin"]


def _problem(seed, games=3, pairs=17, d=7, n_groups=4, n_outputs=2):
    rng = np.random.default_rng(seed)
    masks = rng.random((games, pairs, d)) < rng.uniform(0.1, 0.9, size=(games, pairs, 1))
    masks[0, 0] = False  # an empty coalition (its complement is every player)
    masks[1, 0] = True
    weights = rng.uniform(0.1, 2.0, pairs)
    groups = rng.integers(0, n_groups, pairs)
    coalition_targets = rng.normal(size=(games, pairs, 2, n_outputs))  # b_S and b_{N∖S}
    return masks, weights, groups, n_groups, coalition_targets


def _written_out(masks, weights, groups, n_groups, coalition_targets):
    """Σ over the group's pairs and both coalitions of w c cᵀ and w c b, coalition by coalition."""
    games, pairs, d = masks.shape
    normal = np.zeros((games, n_groups, d, d))
    right = np.zeros((games, n_groups, d, coalition_targets.shape[3]))
    for b in range(games):
        for p in range(pairs):
            for side, z in enumerate((masks[b, p], ~masks[b, p])):
                centred = z - z.sum() / d
                normal[b, groups[p]] += weights[p] * np.outer(centred, centred)
                right[b, groups[p]] += weights[p] * np.outer(centred, coalition_targets[b, p, side])
    return normal, right


def _solved_one_by_one(normal, right):
    """Each system written out, Σ of its groups' matrices + 11ᵀ / d, solved by least squares (its least-norm
    solution where it is singular); the kernels' ridge is refined away."""
    games, n_groups, d, _ = normal.shape

    def solve(kept):
        matrix, side = normal[b, kept].sum(axis=0), right[b, kept].sum(axis=0)
        return np.linalg.lstsq(matrix + np.ones((d, d)) / d, side, rcond=None)[0]

    full = np.zeros((games, d, right.shape[3]))
    leave_out = np.zeros((games, n_groups - 1, d, right.shape[3]))
    for b in range(games):
        full[b] = solve(list(range(n_groups)))
        for g in range(1, n_groups):
            leave_out[b, g - 1] = solve([h for h in range(n_groups) if h != g])
    return full, leave_out


def _regression(backend, masks, weights, groups, n_groups, coalition_targets, leave_outs=True):
    pair_targets = coalition_targets[:, :, 0] - coalition_targets[:, :, 1]
    full, leave_out = backend.paired_regression(
        backend.to_device(masks), weights, groups, n_groups, backend.to_device(pair_targets), leave_outs
    )
    return backend.to_numpy(full), None if leave_out is None else backend.to_numpy(leave_out)


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
@pytest.mark.parametrize(
    ("seed", "games", "pairs", "d", "n_groups"),
    [(1, 3, 17, 7, 4), (2, 3, 30, 7, 4), (4, 4, 40, 9, 5), (7, 2, 60, 16, 11)],
)
def test_solutions_equal_the_systems_written_out_and_solved_one_by_one(backend, seed, games, pairs, d, n_groups):
    problem = _problem(seed, games=games, pairs=pairs, d=d, n_groups=n_groups)
    expected_full, expected_leave_out = _solved_one_by_one(*_written_out(*problem))
    full, leave_out = _regression(backend, *problem)
    np.testing.assert_allclose(full, expected_full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(leave_out, expected_leave_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(full.sum(axis=1), 0.0, atol=1e-12)  # efficiency: x ⟂ 1
    only_full, none = _regression(backend, *problem, leave_outs=False)
    assert none is None
    np.testing.assert_array_equal(only_full, full)


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_singular_normal_matrix_is_solved_through_the_ridge(backend):
    """Two pairs on six players: the normal matrix has rank 2; the ridge makes the system regular, and the
    solution is the least-norm one.

    There the ridge magnifies rounding (the paths differ by about 1e-6 relative), so each path is
    held to the least squares and to the system solved on its own, not to the other path bit for bit.
    """
    problem = _problem(5, games=2, pairs=2, d=6, n_groups=1)
    normal, right = _written_out(*problem)
    full, _ = _regression(backend, *problem, leave_outs=False)
    expected, _ = _solved_one_by_one(normal, right)
    assert np.isfinite(full).all()
    residual = np.einsum("bij,bjk->bik", normal.sum(axis=1), full) - right.sum(axis=1)  # the least squares hold
    np.testing.assert_allclose(residual, 0.0, atol=1e-6 * np.abs(right).max())
    np.testing.assert_allclose(full, expected, rtol=1e-4, atol=1e-8 * np.abs(expected).max())


def test_a_system_that_is_not_positive_definite_is_solved_again_by_pivoted_lu():
    """Cholesky needs positive pivots; games whose systems have none (here negative weights, which
    no kernel gives, make the normal matrices negative definite) are solved again by the array path."""
    masks, weights, groups, n_groups, coalition_targets = _problem(6, games=3, pairs=30, d=5, n_groups=3)
    negative = (masks, -weights, groups, n_groups, coalition_targets)
    expected_full, expected_leave_out = _solved_one_by_one(*_written_out(*negative))
    full, leave_out = _regression(CpuBackend(), *negative)
    np.testing.assert_allclose(full, expected_full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(leave_out, expected_leave_out, rtol=1e-10, atol=1e-12)


def test_threads_split_the_games_without_changing_the_solutions(monkeypatch):
    from sklearn_shapq.backends import _paired_regression

    problem = _problem(3, games=9)
    serial = _regression(CpuBackend(), *problem)
    monkeypatch.setattr(_paired_regression, "_MIN_THREAD_ADDITIONS", 1)  # one game per thread is worth it
    threaded = _regression(CpuBackend(), *problem)
    for one, other in zip(serial, threaded, strict=True):
        np.testing.assert_array_equal(one, other)


@pytest.mark.parametrize(
    ("weights", "groups", "message"),
    [(np.ones(3), np.zeros(5, dtype=int), "one per pair"), (np.ones(5), np.full(5, 4), r"groups must lie in \[0, 4\)")],
)
def test_the_kernel_refuses_inconsistent_pairs(weights, groups, message):
    masks = np.zeros((2, 5, 4), dtype=bool)
    with pytest.raises(ValueError, match=message):
        CpuBackend().paired_regression(masks, weights, groups, 4, np.zeros((2, 5, 1)), leave_outs=True)
    with pytest.raises(ValueError, match="pair_targets must have shape"):
        CpuBackend().paired_regression(masks, np.ones(5), np.zeros(5, dtype=int), 4, np.zeros((2, 4, 1)), True)


def test_a_game_whose_leave_out_system_alone_fails_is_solved_again_whole(monkeypatch):
    """Every full system positive definite; without group 1, game 2's is not (group 2's negative
    weights, which group 1 outweighs; in game 0 group 2's coalitions are empty, centred masks 0):
    game 2 alone is solved again, whole, by the array path."""
    from sklearn_shapq.backends import _paired_regression

    masks, _, _, _, coalition_targets = _problem(8, games=3, pairs=40, d=5, n_groups=4)
    groups = np.repeat([1, 2, 3], [26, 4, 10])
    weights = np.where(groups == 2, -0.05, 1.0)
    masks[0, 26:30] = False
    redone, original = [], _paired_regression.paired_regression_array

    def array_path(first_masks, *args):
        redone.append(first_masks.shape[0])
        return original(first_masks, *args)

    monkeypatch.setattr(_paired_regression, "paired_regression_array", array_path)
    problem = (masks, weights, groups, 4, coalition_targets)
    full, leave_out = _regression(CpuBackend(), *problem)
    expected_full, expected_leave_out = _solved_one_by_one(*_written_out(*problem))
    assert redone == [1]
    np.testing.assert_allclose(full, expected_full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(leave_out, expected_leave_out, rtol=1e-10, atol=1e-12)


def test_non_contiguous_inputs_and_narrow_group_integers_give_the_same_solutions():
    masks, weights, groups, n_groups, coalition_targets = _problem(9, games=4, pairs=34, d=8, n_groups=3)
    wide = np.zeros((4, 68, 8), dtype=bool)
    wide[:, ::2] = masks  # a strided view, as the estimator passes its pairs' first coalitions
    wide_targets = np.zeros((4, 68, 2, 2))
    wide_targets[:, ::2] = coalition_targets
    expected = _regression(CpuBackend(), masks, weights, groups, n_groups, coalition_targets)
    got = _regression(CpuBackend(), wide[:, ::2], weights, groups.astype(np.int32), n_groups, wide_targets[:, ::2])
    for one, other in zip(expected, got, strict=True):
        np.testing.assert_array_equal(one, other)
