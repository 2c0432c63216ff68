"""The paired regression's normal equations: numba kernels and array twins against sums written out."""

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


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_normal_equations_equal_the_sums_written_out(backend, seed):
    masks, weights, groups, n_groups, coalition_targets = _problem(seed)
    normal, right = _written_out(masks, weights, groups, n_groups, coalition_targets)
    pair_targets = coalition_targets[:, :, 0] - coalition_targets[:, :, 1]
    on_device = backend.to_device
    got_normal = backend.paired_normal_matrices(on_device(masks), weights, groups, n_groups)
    got_right = backend.paired_right_sides(on_device(masks), weights, groups, n_groups, on_device(pair_targets))
    np.testing.assert_allclose(backend.to_numpy(got_normal), normal, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(backend.to_numpy(got_right), right, rtol=1e-12, atol=1e-12)


def _solved_one_by_one(normal, right):
    """Each system written out: Σ of its groups' matrices + 11ᵀ / d + 1e-10 × mean diagonal (if positive) × I."""
    games, n_groups, d, _ = normal.shape

    def solve(kept):
        matrix, side = normal[b, kept].sum(axis=0), right[b, kept].sum(axis=0)
        system = matrix + np.ones((d, d)) / d + 1e-10 * max(np.trace(matrix) / d, 1e-300) * np.eye(d)
        return np.linalg.solve(system, side)

    full = np.zeros((games, d, right.shape[3]))
    leave_out = np.zeros((games, n_groups - 1, d, right.shape[3]))
    for b in range(games):
        full[b] = solve(list(range(n_groups)))
        for g in range(1, n_groups):
            leave_out[b, g - 1] = solve([h for h in range(n_groups) if h != g])
    return full, leave_out


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_solutions_equal_the_systems_solved_one_by_one(backend):
    masks, weights, groups, n_groups, coalition_targets = _problem(4, games=4, pairs=40, d=9, n_groups=5)
    pair_targets = coalition_targets[:, :, 0] - coalition_targets[:, :, 1]
    normal = CpuBackend().paired_normal_matrices(masks, weights, groups, n_groups)
    right = CpuBackend().paired_right_sides(masks, weights, groups, n_groups, pair_targets)
    expected_full, expected_leave_out = _solved_one_by_one(normal, right)
    full, leave_out = backend.paired_solutions(backend.to_device(normal), backend.to_device(right), leave_outs=True)
    np.testing.assert_allclose(backend.to_numpy(full), expected_full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(backend.to_numpy(leave_out), expected_leave_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(backend.to_numpy(full).sum(axis=1), 0.0, atol=1e-12)  # efficiency: x ⟂ 1
    only_full, none = backend.paired_solutions(backend.to_device(normal), backend.to_device(right), leave_outs=False)
    assert none is None
    np.testing.assert_array_equal(backend.to_numpy(only_full), backend.to_numpy(full))


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_singular_normal_matrix_is_solved_through_the_ridge(backend):
    """Two pairs on six players: the normal matrix has rank 2; the ridge makes the system regular.

    There the ridge magnifies rounding (the paths differ by about 1e-6 relative), so each path is
    held to the least squares and to the system solved on its own, not to the other path bit for bit.
    """
    masks, weights, groups, n_groups, coalition_targets = _problem(5, games=2, pairs=2, d=6, n_groups=1)
    pair_targets = coalition_targets[:, :, 0] - coalition_targets[:, :, 1]
    normal = CpuBackend().paired_normal_matrices(masks, weights, groups, n_groups)
    right = CpuBackend().paired_right_sides(masks, weights, groups, n_groups, pair_targets)
    full, _ = backend.paired_solutions(backend.to_device(normal), backend.to_device(right), leave_outs=False)
    full = backend.to_numpy(full)
    expected, _ = _solved_one_by_one(normal, right)
    assert np.isfinite(full).all()
    residual = np.einsum("bij,bjk->bik", normal.sum(axis=1), full) - right.sum(axis=1)  # the least squares hold
    np.testing.assert_allclose(residual, 0.0, atol=1e-6 * np.abs(right).max())
    np.testing.assert_allclose(full, expected, rtol=1e-4, atol=1e-8 * np.abs(expected).max())


def test_a_system_that_is_not_positive_definite_is_solved_again_by_pivoted_lu():
    """Cholesky needs positive pivots; a game whose system has none (here a negative definite
    matrix, which no pairs give) is solved again by the array path, the others stay Cholesky's."""
    rng = np.random.default_rng(6)
    square = rng.normal(size=(3, 2, 5, 5))
    normal = square @ square.transpose(0, 1, 3, 2) + np.eye(5)
    normal[1] *= -1.0
    right = rng.normal(size=(3, 2, 5, 2))
    full, leave_out = CpuBackend().paired_solutions(normal, right, leave_outs=True)
    expected_full, expected_leave_out = _solved_one_by_one(normal, right)
    np.testing.assert_allclose(full, expected_full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(leave_out, expected_leave_out, rtol=1e-10, atol=1e-12)


def test_normal_matrices_are_symmetric_and_annihilate_the_ones():
    """Centred masks are orthogonal to 1, so every normal matrix maps 1 to 0: what makes the solve efficient."""
    masks, weights, groups, n_groups, _ = _problem(2, d=12, pairs=40)
    normal = CpuBackend().paired_normal_matrices(masks, weights, groups, n_groups)
    np.testing.assert_array_equal(normal, normal.transpose(0, 1, 3, 2))
    np.testing.assert_allclose(normal.sum(axis=3), 0.0, atol=1e-12)


def test_threads_split_the_games_without_changing_the_sums(monkeypatch):
    from sklearn_shapq.backends import _paired_regression

    masks, weights, groups, n_groups, coalition_targets = _problem(3, games=9)
    pair_targets = coalition_targets[:, :, 0] - coalition_targets[:, :, 1]
    serial = (
        CpuBackend().paired_normal_matrices(masks, weights, groups, n_groups),
        CpuBackend().paired_right_sides(masks, weights, groups, n_groups, pair_targets),
    )
    monkeypatch.setattr(_paired_regression, "_MIN_THREAD_ADDITIONS", 1)  # one game per thread is worth it
    threaded = (
        CpuBackend().paired_normal_matrices(masks, weights, groups, n_groups),
        CpuBackend().paired_right_sides(masks, weights, groups, n_groups, pair_targets),
    )
    for one, other in zip(serial, threaded, strict=True):
        np.testing.assert_array_equal(one, other)


@pytest.mark.parametrize(
    ("weights", "groups", "message"),
    [(np.ones(3), np.zeros(5, dtype=int), "one per pair"), (np.ones(5), np.full(5, 4), r"groups must lie in \[0, 4\)")],
)
def test_kernels_refuse_inconsistent_pairs(weights, groups, message):
    masks = np.zeros((2, 5, 4), dtype=bool)
    with pytest.raises(ValueError, match=message):
        CpuBackend().paired_normal_matrices(masks, weights, groups, 4)
    with pytest.raises(ValueError, match=message):
        CpuBackend().paired_right_sides(masks, weights, groups, 4, np.zeros((2, 5, 1)))
