"""Exactness of the product-kernel Shapley kernels (numba, array twin, CUDA): brute force, Möbius form, closed forms."""

from itertools import combinations

import numpy as np
import pytest

from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.backends._product_kernel import FACTOR_KINDS

from brute_force import brute_force_shapley

BACKENDS = {"numba": CpuBackend(), "array twin": ArrayBackend(np)}
METHODS = ("prefix_suffix", "quadrature")


def factors(x, anchors, kinds, gammas):
    """z_ij = k_j(x_j, X_ij) written out per kind (independent of the package)."""
    diff = x[None, :] - anchors
    out = np.empty_like(diff)
    for j, kind in enumerate(kinds):
        if kind == FACTOR_KINDS["rbf"]:
            out[:, j] = np.exp(-gammas[j] * diff[:, j] ** 2)
        elif kind == FACTOR_KINDS["laplacian"]:
            out[:, j] = np.exp(-gammas[j] * np.abs(diff[:, j]))
        else:
            out[:, j] = 1.0 / (1.0 + gammas[j] * diff[:, j] ** 2)
    return out


def pkex_value(alpha, z, coalition):
    """v(S) = Σ_i α_i Π_{j∈S} z_ij."""
    return alpha @ np.prod(z[:, list(coalition)], axis=1)


def mobius_shapley(alpha, z):
    """φ_j = Σ_{S∋j} f_S / |S| with the dividends f_S = Σ_i α_i Π_{j∈S} (z_ij − 1)."""
    d = z.shape[1]
    phi = np.zeros(d)
    for size in range(1, d + 1):
        for s in combinations(range(d), size):
            dividend = alpha @ np.prod(z[:, list(s)] - 1.0, axis=1)
            phi[list(s)] += dividend / size
    return phi


def random_problem(d, rng, n=7):
    anchors = rng.normal(size=(n, d))
    alpha = rng.normal(size=n)  # both signs
    kinds = rng.choice([FACTOR_KINDS["rbf"], FACTOR_KINDS["laplacian"]], size=d).astype(np.int8)
    gammas = rng.uniform(0.05, 2.0, size=d)  # ARD: one scale per feature
    return anchors, alpha, kinds, gammas


def run(backend, method, x, anchors, alpha, kinds, gammas, references=None):
    weights = alpha.reshape(1, -1, 1)
    return backend.product_kernel_shapley(x, anchors, references, kinds, gammas, weights, method)[..., 0]


@pytest.mark.parametrize("d", range(1, 11))
def test_pkex_matches_subset_enumeration_and_mobius_form(d):
    rng = np.random.default_rng(d)
    anchors, alpha, kinds, gammas = random_problem(d, rng)
    x = rng.normal(size=(2, d))
    expected = []
    for row in x:
        z = factors(row, anchors, kinds, gammas)
        subsets = brute_force_shapley(lambda s, z=z: pkex_value(alpha, z, s), d)
        if d <= 8:
            np.testing.assert_allclose(mobius_shapley(alpha, z), subsets, rtol=0, atol=1e-12)
        expected.append(subsets)
    scale = np.abs(alpha).max()
    for backend in BACKENDS.values():
        for method in METHODS:
            got = run(backend, method, x, anchors, alpha, kinds, gammas)
            np.testing.assert_allclose(got, np.array(expected), rtol=0, atol=1e-10 * scale)


@pytest.mark.parametrize("d", [1, 3, 6])
def test_two_factor_game_matches_enumeration(d):
    """Absent factors at reference rows: v(S) = Σ_i α_i mean_l Π_{j∈S} a_ij Π_{j∉S} b_lij."""
    rng = np.random.default_rng(10 + d)
    anchors, alpha, kinds, gammas = random_problem(d, rng)
    x, references = rng.normal(size=(2, d)), rng.normal(size=(3, d))
    for row_index, row in enumerate(x):
        a = factors(row, anchors, kinds, gammas)
        b = np.stack([factors(r, anchors, kinds, gammas) for r in references])

        def value(s, a=a, b=b):
            present = np.zeros(d, bool)
            present[list(s)] = True
            return np.mean([alpha @ np.prod(np.where(present, a, bl), axis=1) for bl in b])

        expected = brute_force_shapley(value, d)
        for backend in BACKENDS.values():
            for method in METHODS:
                got = run(backend, method, x, anchors, alpha, kinds, gammas, references)[row_index]
                np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("with_references", [False, True])
def test_grouped_players_match_enumeration(with_references):
    """Players that are groups of columns: v(T) = Σ_i α_i mean_l Π over the columns of T of a, of the rest of b."""
    rng = np.random.default_rng(20)
    d = 6
    anchors, alpha, kinds, gammas = random_problem(d, rng)
    players = np.array([1, 0, 2, 0, 1, 3])  # any numbering: player 0 owns columns 1 and 3
    x = rng.normal(size=(2, d))
    references = rng.normal(size=(3, d)) if with_references else None
    for row_index, row in enumerate(x):
        a = factors(row, anchors, kinds, gammas)
        b = np.ones((1,) + a.shape) if references is None else [factors(r, anchors, kinds, gammas) for r in references]

        def value(s, a=a, b=b):
            present = np.isin(players, s)
            return np.mean([alpha @ np.prod(np.where(present, a, bl), axis=1) for bl in b])

        expected = brute_force_shapley(value, 4)
        for backend in BACKENDS.values():
            for method in METHODS:
                got = backend.product_kernel_shapley(
                    x, anchors, references, kinds, gammas, alpha.reshape(1, -1, 1), method, players=players
                )
                np.testing.assert_allclose(got[row_index, :, 0], expected, rtol=0, atol=1e-12)


def test_cauchy_factors_and_multiple_outputs_and_per_query_weights():
    rng = np.random.default_rng(3)
    d, n = 5, 6
    anchors = rng.normal(size=(n, d))
    kinds = np.full(d, FACTOR_KINDS["cauchy"], dtype=np.int8)
    gammas = rng.uniform(0.1, 1.0, size=d)
    x = rng.normal(size=(3, d))
    weights = rng.normal(size=(3, n, 2))  # one weight row per query, two outputs
    expected = np.empty((3, d, 2))
    for q in range(3):
        z = factors(x[q], anchors, kinds, gammas)
        for o in range(2):
            expected[q, :, o] = brute_force_shapley(lambda s, z=z, w=weights[q, :, o]: pkex_value(w, z, s), d)
    for backend in BACKENDS.values():
        for method in METHODS:
            got = backend.product_kernel_shapley(x, anchors, None, kinds, gammas, weights, method)
            np.testing.assert_allclose(got, expected, atol=1e-12)


def test_small_worked_example_efficiency():
    alpha = np.array([1.0, -2.0, 0.5])
    anchors = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, -1.0], [2.0, 2.0, 0.0]])
    x = np.array([[0.5, 0.5, 0.5]])
    gammas = np.array([1.0, 0.5, 2.0])
    for kind in ("rbf", "laplacian"):
        kinds = np.full(3, FACTOR_KINDS[kind], dtype=np.int8)
        z = factors(x[0], anchors, kinds, gammas)
        expected = brute_force_shapley(lambda s, z=z: pkex_value(alpha, z, s), 3)
        f = alpha @ np.prod(z, axis=1)
        for backend in BACKENDS.values():
            for method in METHODS:
                phi = run(backend, method, x, anchors, alpha, kinds, gammas)[0]
                np.testing.assert_allclose(phi, expected, rtol=1e-12)
                assert phi.sum() + alpha.sum() == pytest.approx(f, rel=1e-12)


def test_closed_forms_d1_and_d2():
    rng = np.random.default_rng(4)
    alpha = rng.normal(size=5)
    kinds = np.zeros(2, dtype=np.int8)
    gammas = np.array([0.7, 1.3])
    anchors, x = rng.normal(size=(5, 2)), rng.normal(size=(1, 2))
    z = factors(x[0], anchors, kinds, gammas)
    for backend in BACKENDS.values():
        for method in METHODS:
            phi1 = run(backend, method, x[:, :1], anchors[:, :1], alpha, kinds[:1], gammas[:1])[0]
            np.testing.assert_allclose(phi1, [alpha @ z[:, 0] - alpha.sum()], rtol=1e-13)
            phi2 = run(backend, method, x, anchors, alpha, kinds, gammas)[0]
            np.testing.assert_allclose(phi2[0], alpha @ ((z[:, 0] - 1) * (1 + z[:, 1]) / 2), rtol=1e-13)


def equal_factor_problem(d, levels):
    """Anchors at distance δ_i from x in every feature, so z_ij = c_i for all j (RBF, γ = 1)."""
    deltas = np.sqrt(-np.log(np.asarray(levels)))
    x = np.zeros((1, d))
    anchors = np.repeat(deltas[:, None], d, axis=1)
    return x, anchors, np.zeros(d, dtype=np.int8), np.ones(d)


@pytest.mark.parametrize("d", [200, 1000, 2000])
def test_equal_factors_closed_form(d):
    levels = np.array([0.999, 0.9, 0.3])
    alpha = np.array([1.0, -0.5, 2.0])
    x, anchors, kinds, gammas = equal_factor_problem(d, levels)
    psi = (1.0 - levels**d) / (d * (1.0 - levels))
    expected = np.full(d, alpha @ ((levels - 1.0) * psi))
    methods = {"quadrature": 1e-9}
    if d <= 1000:
        methods["prefix_suffix"] = 1e-12
    for method, rtol in methods.items():
        got = run(CpuBackend(), method, x, anchors, alpha, kinds, gammas)[0]
        np.testing.assert_allclose(got, expected, rtol=rtol)


@pytest.mark.parametrize("d", [50, 100, 200])
def test_high_precision_agreement_near_one(d):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    rng = np.random.default_rng(d)
    z = rng.uniform(0.95, 1.0, size=d)
    x, anchors = np.zeros((1, d)), np.sqrt(-np.log(z))[None, :]  # one anchor with factors z
    mu = [mpmath.factorial(q) * mpmath.factorial(d - q - 1) / mpmath.factorial(d) for q in range(d)]
    expected = []
    for j in range(d):
        esp = [mpmath.mpf(1)] + [mpmath.mpf(0)] * (d - 1)
        for k in range(d):
            if k != j:
                zk = mpmath.mpf(float(z[k]))
                for q in range(d - 1, 0, -1):
                    esp[q] += zk * esp[q - 1]
        psi = mpmath.fsum(m * e for m, e in zip(mu, esp, strict=True))
        expected.append(float((mpmath.mpf(float(z[j])) - 1) * psi))
    for backend in BACKENDS.values():
        for method in METHODS:
            got = run(backend, method, x, anchors, np.ones(1), np.zeros(d, np.int8), np.ones(d))[0]
            np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_blocking_does_not_change_the_array_twin():
    rng = np.random.default_rng(5)
    anchors, alpha, kinds, gammas = random_problem(6, rng, n=40)
    x, references = rng.normal(size=(9, 6)), rng.normal(size=(3, 6))
    twin = ArrayBackend(np)
    for method in METHODS:
        whole = twin.product_kernel_shapley(x, anchors, references, kinds, gammas, alpha.reshape(1, -1, 1), method)
        tiny = twin.product_kernel_shapley(
            x, anchors, references, kinds, gammas, alpha.reshape(1, -1, 1), method, max_bytes=1
        )
        np.testing.assert_allclose(tiny, whole, rtol=0, atol=1e-14)


def test_numba_matches_twin_at_larger_sizes():
    rng = np.random.default_rng(6)
    for d, n_rows in [(5, 1), (50, 64), (300, 1)]:
        anchors = rng.normal(size=(30, d))
        alpha = rng.normal(size=30)
        kinds, gammas = np.zeros(d, np.int8), np.full(d, 1.0 / (2 * d))
        x = rng.normal(size=(n_rows, d))
        reference = run(ArrayBackend(np), "quadrature", x, anchors, alpha, kinds, gammas)
        for method in METHODS:
            got = run(CpuBackend(), method, x, anchors, alpha, kinds, gammas)
            np.testing.assert_allclose(got, reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())


@pytest.mark.gpu
def test_cuda_kernels_match_numba():
    from sklearn_shapq.backends import resolve_backend

    cuda = resolve_backend("cuda")
    rng = np.random.default_rng(7)
    for d, n_rows, refs in [(5, 64, None), (50, 1, None), (300, 4, None), (6, 3, 4)]:
        anchors, alpha, kinds, gammas = random_problem(d, rng, n=50)
        x = rng.normal(size=(n_rows, d))
        references = None if refs is None else rng.normal(size=(refs, d))
        expected = run(CpuBackend(), "prefix_suffix", x, anchors, alpha, kinds, gammas, references)
        for method in METHODS:
            got = cuda.to_numpy(run(cuda, method, x, anchors, alpha, kinds, gammas, references))
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_underflowing_factors_give_no_nan():
    """A factor underflowing to 0 next to a subnormal one (b = 5e-324, a = 0) stays finite."""
    x, anchors = np.array([[100.0, 0.3, 0.1]]), np.zeros((1, 3))
    references = np.array([[np.sqrt(744.4), 0.2, 1.0]])
    kinds, gammas, weights = np.zeros(3, np.int8), np.ones(3), np.ones((1, 1, 1))
    results = [
        backend.product_kernel_shapley(x, anchors, references, kinds, gammas, weights, method)
        for backend in BACKENDS.values()
        for method in METHODS
    ]
    for result in results:
        assert np.all(np.isfinite(result))
        np.testing.assert_allclose(result, results[0], atol=1e-300)


def test_per_query_weights_are_blocked_correctly():
    rng = np.random.default_rng(8)
    anchors, _, kinds, gammas = random_problem(4, rng, n=25)
    x = rng.normal(size=(6, 4))
    weights = rng.normal(size=(6, 25, 2))
    expected = CpuBackend().product_kernel_shapley(x, anchors, None, kinds, gammas, weights, "quadrature")
    for method in METHODS:
        tiny = ArrayBackend(np).product_kernel_shapley(x, anchors, None, kinds, gammas, weights, method, max_bytes=1)
        np.testing.assert_allclose(tiny, expected, atol=1e-14)


def test_malformed_calls_are_refused():
    rng = np.random.default_rng(9)
    anchors, alpha, kinds, gammas = random_problem(3, rng, n=4)
    x = rng.normal(size=(6, 3))
    for backend in BACKENDS.values():
        with pytest.raises(ValueError, match="weights"):
            backend.product_kernel_shapley(x, anchors, None, kinds, gammas, np.ones((2, 4, 1)), "quadrature")
        with pytest.raises(ValueError, match="kinds"):
            backend.product_kernel_shapley(x, anchors, None, kinds[:2], gammas, np.ones((1, 4, 1)), "quadrature")
        with pytest.raises(ValueError, match="algorithm"):
            backend.product_kernel_shapley(x, anchors, None, kinds, gammas, np.ones((1, 4, 1)), "auto")
        for players in (np.array([0, 1]), np.array([0, 2, 2]), np.array([0.0, 1.0, 1.0])):  # length, gap, floats
            with pytest.raises(ValueError, match="players"):
                backend.product_kernel_shapley(
                    x, anchors, None, kinds, gammas, np.ones((1, 4, 1)), "quadrature", players=players
                )
        with pytest.raises(ValueError, match="overflows"):
            wide = np.zeros((1, 1001))
            backend.product_kernel_shapley(
                wide, wide, None, np.zeros(1001, np.int8), np.ones(1001), np.ones((1, 1, 1)), "prefix_suffix"
            )
