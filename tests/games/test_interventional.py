"""The interventional game: values against a direct oracle, corners, model-row accounting, batching, threads."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge

from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.games import InterventionalGame, make_model_function, prefix_masks
from sklearn_shapq.games._interventional import DEFAULT_MEMORY_BYTES, GPU_MEMORY_BYTES

from brute_force import brute_force_shapley, interventional_value
from game_helpers import CountingModel, interventional_game


def test_regressor_values_corners_counts_and_shapley():
    X, _ = load_diabetes(return_X_y=True)
    X = X[:, :5]
    model = Ridge(alpha=0.1).fit(X, load_diabetes().target)
    background, rows = X[:20], X[100:103]
    game = InterventionalGame(make_model_function(model, "predict", CpuBackend()), background, rows)
    d = X.shape[1]
    assert (game.n_players, game.n_games, game.n_outputs) == (d, 3, 1)
    np.testing.assert_allclose(game.full_value[:, 0], model.predict(rows), rtol=1e-12)
    np.testing.assert_allclose(game.empty_value[:, 0], model.predict(background).mean(), rtol=1e-12)
    np.testing.assert_allclose(game(np.ones((3, d), bool), np.arange(3))[:, 0], model.predict(rows), rtol=1e-12)
    np.testing.assert_allclose(game(np.zeros((1, d), bool), np.array([2]))[:, 0], game.empty_value[2, 0])
    rng = np.random.default_rng(0)
    masks = rng.random((12, d)) < 0.5
    games = rng.integers(0, 3, 12)
    expected = [
        interventional_value(model.predict, rows[g], background, np.flatnonzero(m))
        for m, g in zip(masks, games, strict=True)
    ]
    np.testing.assert_allclose(game(masks, games)[:, 0], expected, rtol=1e-10)
    np.testing.assert_array_equal(game.n_evals, np.bincount(games, minlength=3) + 2 + [1, 1, 2])
    phi = game.shapley_values()  # the game's exact Shapley values are the interventional ones
    assert phi.shape == (3, d, 1)
    for g in range(3):
        brute = brute_force_shapley(lambda s, g=g: interventional_value(model.predict, rows[g], background, s), d)
        np.testing.assert_allclose(phi[g, :, 0], brute, atol=1e-10)


def test_multi_output_values():
    rng = np.random.default_rng(1)
    d = 4
    background, rows = rng.normal(size=(8, d)), rng.normal(size=(3, d))

    def f(Z):
        return np.column_stack([Z[:, 0] * Z[:, 1], Z[:, 2] - Z[:, 3], Z.sum(axis=1)])

    game = interventional_game(f, background, rows)
    assert game.n_outputs == 3
    masks = rng.random((9, d)) < 0.5
    games = np.repeat(np.arange(3), 3)
    expected = [
        interventional_value(f, rows[g], background, np.flatnonzero(m)) for m, g in zip(masks, games, strict=True)
    ]
    values = game(masks, games)
    assert values.shape == (9, 3)
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    np.testing.assert_allclose(game.full_value, f(rows), rtol=1e-12)
    np.testing.assert_allclose(game.empty_value, np.tile(f(background).mean(axis=0), (3, 1)), rtol=1e-12)


def test_model_rows_and_calls_are_counted_for_the_explained_rows_only():
    d, n_background, n_rows = 5, 7, 4
    rng = np.random.default_rng(2)
    model = CountingModel(d)
    background, rows = rng.normal(size=(n_background, d)), rng.normal(size=(n_rows, d))
    game = interventional_game(model, background, rows)
    assert model.rows == n_background and model.calls == 1  # v(∅) from the background, at construction
    assert game.n_model_rows == game.n_model_calls == 0  # not charged to the explained rows
    game.full_value  # noqa: B018  (v(N) = f(x): one model row per explained row, one call)
    assert model.rows - n_background == game.n_model_rows == n_rows
    assert game.n_model_calls == 1
    game.empty_value  # noqa: B018  (cached with v(N): no model call)
    assert game.n_model_calls == 1
    masks = rng.random((11, d)) < 0.5
    game(masks, rng.integers(0, n_rows, 11))
    assert model.rows - n_background == game.n_model_rows == n_rows + 11 * n_background
    np.testing.assert_array_equal(game.n_evals.sum(), 2 * n_rows + 11)


def test_known_background_outputs_cost_no_model_call():
    d = 3
    model = CountingModel(d)
    outputs = np.array([[0.0], [0.25], [0.5], [0.25], [0.25]])
    game = interventional_game(model, np.zeros((5, d)), np.ones((2, d)), background_outputs=outputs)
    assert model.calls == 0
    np.testing.assert_array_equal(game.empty_value[:, 0], [0.25, 0.25])
    assert model.calls == 1 and model.rows == 2  # only v(N)


@pytest.mark.parametrize(("batch_size", "pairs_per_call"), [(1, 1), (7, 1), (13, 1), (14, 2), (100, 14)])
def test_batch_size_bounds_the_rows_per_model_call(batch_size, pairs_per_call):
    d, n_background = 4, 7
    rng = np.random.default_rng(3)
    model = CountingModel(d)
    background, rows = rng.normal(size=(n_background, d)), rng.normal(size=(3, d))
    game = interventional_game(model, background, rows, batch_size=batch_size)
    assert game.pairs_per_call == pairs_per_call and game.batch_rows == pairs_per_call * n_background
    masks, games = rng.random((20, d)) < 0.5, rng.integers(0, 3, 20)
    model.calls = 0
    values = game(masks, games)
    assert model.calls == -(-20 // pairs_per_call)
    reference = interventional_game(CountingModel(d), background, rows, batch_size=10_000)
    np.testing.assert_allclose(values, reference(masks, games), rtol=0, atol=1e-15)


def test_auto_batch_size_fills_a_memory_budget():
    d, n_background = 10, 50
    game = interventional_game(CountingModel(d), np.zeros((n_background, d)), np.ones((2, d)))
    assert game.batch_rows * 8 * d <= DEFAULT_MEMORY_BYTES
    assert game.batch_rows * 8 * d > DEFAULT_MEMORY_BYTES - 8 * d * n_background
    threaded = interventional_game(CountingModel(d), np.zeros((n_background, d)), np.ones((2, d)), n_jobs=3)
    assert threaded.batch_rows * 8 * d * 4 <= DEFAULT_MEMORY_BYTES  # shared by the batches in flight
    threaded.close()


class _GpuFlaggedTwin(ArrayBackend):
    """The numpy twin, reporting itself as a GPU (for the GPU's batch budget)."""

    @property
    def is_gpu(self) -> bool:
        return True


def test_auto_batch_size_fills_the_gpu_budget_on_a_gpu():
    d, n_background = 10, 50
    background, rows = np.zeros((n_background, d)), np.ones((2, d))
    cpu = interventional_game(CountingModel(d), background, rows)
    gpu = interventional_game(CountingModel(d), background, rows, backend=_GpuFlaggedTwin(np))
    assert gpu.batch_rows * 8 * d <= GPU_MEMORY_BYTES < gpu.batch_rows * 8 * d + 8 * d * n_background
    assert cpu.batch_rows * 8 * d <= DEFAULT_MEMORY_BYTES < gpu.batch_rows * 8 * d


@pytest.mark.parametrize(("d", "n_background"), [(16, 128), (100, 100), (8, 1)])
def test_the_cpu_buffer_stays_below_glibcs_largest_mmap_threshold(d, n_background):
    """A buffer below 32 MiB with malloc's header and page rounding stays in the heap when freed.

    d = 16 with 128 background rows fills exactly 32 MiB with a budget of 32 MiB.
    """
    game = interventional_game(CountingModel(d), np.zeros((n_background, d)), np.ones((2, d)))
    buffer = game._take_buffer(game.batch_rows)
    assert buffer.nbytes + 4096 <= 32 * 2**20


@pytest.mark.parametrize("batch_size", ["auto", 30])
def test_threaded_model_calls_give_the_same_values_and_counts(batch_size):
    d, n_background = 6, 10
    rng = np.random.default_rng(4)
    background, rows = rng.normal(size=(n_background, d)), rng.normal(size=(5, d))
    masks, games = rng.random((40, d)) < 0.5, rng.integers(0, 5, 40)
    results = []
    for n_jobs in (1, 2, 4):
        model = CountingModel(d)
        with interventional_game(model, background, rows, batch_size=batch_size, n_jobs=n_jobs) as game:
            model.rows = 0
            results.append(game(masks, games))
            assert model.rows == game.n_model_rows == 40 * n_background
            assert game.n_model_calls == model.calls - 1  # every model call but the background's
            if n_jobs > 1:
                assert game.n_model_calls >= n_jobs  # the work is split over the threads
        assert game._pool is None  # closed by the with block
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


def test_generic_array_backend_gives_the_same_values():
    rng = np.random.default_rng(5)
    d = 4
    background, rows = rng.normal(size=(6, d)), rng.normal(size=(3, d))
    masks, games = rng.random((10, d)) < 0.5, rng.integers(0, 3, 10)
    cpu = interventional_game(CountingModel(d), background, rows)
    twin = interventional_game(CountingModel(d), background, rows, backend=ArrayBackend(np, "twin"))
    np.testing.assert_allclose(twin(masks, games), cpu(masks, games), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(twin.shapley_values(), cpu.shapley_values(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_reused_input_buffers_give_every_call_its_own_values(n_jobs):
    """Calls of shrinking and growing sizes reuse (or replace) the model-input buffers: values stay exact."""
    d, n_background = 5, 7
    rng = np.random.default_rng(6)
    background, rows = rng.normal(size=(n_background, d)), rng.normal(size=(4, d))
    weights = rng.normal(size=d)
    model = make_model_function(lambda Z: np.tanh(Z @ weights), "predict", CpuBackend())
    with InterventionalGame(model, background, rows, batch_size=4 * n_background, n_jobs=n_jobs) as game:
        for n_pairs in (30, 3, 11, 1, 30, 2):
            masks, games = rng.random((n_pairs, d)) < 0.5, rng.integers(0, 4, n_pairs)
            expected = [
                interventional_value(lambda Z: np.tanh(Z @ weights), rows[g], background, np.flatnonzero(m))
                for m, g in zip(masks, games, strict=True)
            ]
            np.testing.assert_allclose(game(masks, games)[:, 0], expected, rtol=1e-12, atol=1e-12)
        assert len(game._free_buffers) <= n_jobs + 1


def test_parts_split_each_rows_game_by_equal_parts_of_the_background():
    """Game r · parts + j is the mean over part j alone (brute force); the parts average to the row's game."""
    rng = np.random.default_rng(5)
    d, parts = 4, 3
    model = CountingModel(d)
    background, rows = rng.normal(size=(6, d)), rng.normal(size=(2, d))
    whole = interventional_game(model, background, rows)
    split = interventional_game(model, background, rows, parts=parts)
    assert (split.n_games, split.rows_per_coalition) == (2 * parts, 2)
    masks = rng.random((20, d)) < 0.5
    games = rng.integers(0, 2 * parts, 20)
    model.rows = 0
    values = split(masks, games)[:, 0]
    assert model.rows == 20 * 2  # a coalition costs the rows of its part
    expected = [
        interventional_value(
            model, rows[g // parts], background[2 * (g % parts) : 2 * (g % parts) + 2], np.flatnonzero(m)
        )
        for m, g in zip(masks, games, strict=True)
    ]
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    row_of = games // parts  # every part of each coalition's row: the parts' mean is the row's game
    every_part = parts * np.repeat(row_of, parts) + np.tile(np.arange(parts), 20)
    parts_values = split(np.repeat(masks, parts, axis=0), every_part)[:, 0].reshape(20, parts)
    np.testing.assert_allclose(parts_values.mean(axis=1), whole(masks, row_of)[:, 0], rtol=1e-12)
    np.testing.assert_allclose(
        split.empty_value[:, 0].reshape(2, parts).mean(axis=1), whole.empty_value[:, 0], rtol=1e-12
    )
    np.testing.assert_allclose(split.full_value[:, 0], np.repeat(whole.full_value[:, 0], parts), rtol=1e-12)
    np.testing.assert_allclose(
        split.shapley_values().reshape(2, parts, d, 1).mean(axis=1), whole.shapley_values(), rtol=1e-10
    )


def test_parts_must_divide_the_background():
    with pytest.raises(ValueError, match="parts=4 must divide the 6 background rows"):
        interventional_game(CountingModel(3), np.zeros((6, 3)), np.ones((1, 3)), parts=4)


@pytest.mark.parametrize("part_size", [1, 3, 6])
def test_part_masked_rows_kernel_matches_its_numpy_twin(part_size):
    rng = np.random.default_rng(part_size)
    x, background = rng.normal(size=(3, 5)), rng.normal(size=(6, 5))
    masks = rng.random((9, 5)) < 0.5
    x_rows = rng.integers(0, 3, 9)
    first = rng.integers(0, 6 // part_size, 9) * part_size
    cpu = CpuBackend().part_masked_rows(x, x_rows, masks, background, first, part_size)
    twin = ArrayBackend(np, "numpy-twin").part_masked_rows(x, x_rows, masks, background, first, part_size)
    np.testing.assert_array_equal(cpu, twin)
    if part_size == 6:  # one part: the interventional game's masked rows
        np.testing.assert_array_equal(cpu, CpuBackend().masked_rows(x[x_rows], masks, background))


@pytest.mark.parametrize("part_size", [1, 3, 6])
@pytest.mark.parametrize("window", [(0, 12), (5, 11)])
def test_prefix_rows_are_the_rows_of_the_walks_prefixes(part_size, window):
    """Coalition c is prefix c mod (d − 1) + 1 of ordering c div (d − 1): its rows, written from
    the ranks (CPU kernel) or from masks (array code), are the masked rows of that prefix."""
    rng = np.random.default_rng(part_size)
    d, n_orderings = 5, 3
    x, background = rng.normal(size=(2, d)), rng.normal(size=(6, d))
    ranks = np.argsort(rng.random((n_orderings, d)), axis=1)
    x_rows = rng.integers(0, 2, n_orderings)
    first = rng.integers(0, 6 // part_size, n_orderings) * part_size
    start, stop = window
    expected = []
    for c in range(start, stop):
        ordering, size = divmod(c, d - 1)
        prefix = np.argsort(ranks[ordering])[: size + 1]  # the ordering's first size + 1 players
        for i in range(part_size):
            row = background[first[ordering] + i].copy()
            row[prefix] = x[x_rows[ordering], prefix]
            expected.append(row)
    for backend in (CpuBackend(), ArrayBackend(np, "numpy-twin")):
        rows = backend.prefix_rows(x, x_rows, ranks, background, first, part_size, start, stop)
        np.testing.assert_array_equal(rows, np.array(expected))


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("backend", [CpuBackend(), ArrayBackend(np, "numpy-twin")])
def test_prefix_grid_gives_and_counts_what_grid_of_the_prefix_masks_gives(parts, backend):
    rng = np.random.default_rng(parts)
    d = 6
    model = CountingModel(d)
    background, rows = rng.normal(size=(6, d)), rng.normal(size=(2, d))
    fused = interventional_game(model, background, rows, parts=parts, backend=backend, batch_size=7)
    masked = interventional_game(CountingModel(d), background, rows, parts=parts, backend=backend, batch_size=7)
    games = np.array([0, 2 * parts - 1, parts])
    ranks = np.argsort(rng.random((3, 4, d)), axis=-1)
    values = fused.prefix_grid(games, ranks)
    assert values.shape == (3, 4, d - 1, 1)
    by_masks = masked.grid(games, prefix_masks(ranks, np).reshape(3, 4 * (d - 1), d))
    np.testing.assert_allclose(values, by_masks.reshape(values.shape), rtol=1e-13)
    np.testing.assert_array_equal(fused.n_evals, masked.n_evals)
    assert fused.n_calls == masked.n_calls == 1 and fused.n_model_rows == masked.n_model_rows
    for b, g in enumerate(games):  # against the oracle, written without the package
        x, part = rows[g // parts], background[(g % parts) * (6 // parts) : (g % parts + 1) * (6 // parts)]
        for o in range(4):
            order = np.argsort(ranks[b, o])
            for t in range(1, d):
                v = interventional_value(model, x, part, order[:t])
                np.testing.assert_allclose(values[b, o, t - 1], v, rtol=1e-12)


def test_prefix_grid_checks_its_arguments():
    game = interventional_game(CountingModel(3), np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"ranks must have shape \(B, n, 3\)"):
        game.prefix_grid(np.array([0]), np.zeros((1, 2, 4), dtype=int))
    with pytest.raises(ValueError, match=r"ranks must have shape \(B, n, 3\)"):
        game.prefix_grid(np.array([0]), np.zeros((2, 3), dtype=int))
    with pytest.raises(ValueError, match=r"game indices must lie in \[0, 2\)"):
        game.prefix_grid(np.array([2]), np.zeros((1, 2, 3), dtype=int))
    with pytest.raises(ValueError, match=r"games must have shape \(1,\)"):
        game.prefix_grid(np.array([0, 1]), np.zeros((1, 2, 3), dtype=int))
    assert game.prefix_grid(np.array([0]), np.zeros((1, 0, 3), dtype=int)).shape == (1, 0, 2, 1)
    assert game.n_calls == 0


def test_prefix_rows_refuse_a_window_outside_the_coalitions():
    x, background, ranks = np.zeros((1, 3)), np.zeros((2, 3)), np.array([[0, 1, 2]])
    with pytest.raises(ValueError, match="start and stop must satisfy"):
        CpuBackend().prefix_rows(x, np.array([0]), ranks, background, np.array([0]), 2, 1, 3)
