"""Permutations from points on S^{d−2}: orthogonal spherical codes and Sobol points (Mitchell et al. 2022).

A point y gives the ordering ``argsort(Ûᵀ y)`` (Û a basis of the zero-sum hyperplane); built on the host.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import betaincinv
from scipy.stats import qmc

from sklearn_shapq.samplers._blas import single_threaded_blas


def zero_sum_embedding(points: np.ndarray) -> np.ndarray:
    """Apply Ûᵀ in O(d): points (..., d − 1) → (..., d) with zero row sums.

    With c_k = y_k / sqrt(k (k + 1)) and suffix sums S_j = Σ_{k >= j} c_k: z_1 = S_1 and
    z_j = S_j − (j − 1) c_{j−1} (1-based).

    Examples
    --------
    >>> import numpy as np
    >>> z = zero_sum_embedding(np.array([0.6, 0.8]))
    >>> bool(abs(z.sum()) < 1e-12), bool(abs(np.linalg.norm(z) - 1) < 1e-12)
    (True, True)
    """
    points = np.asarray(points, dtype=np.float64)
    m = points.shape[-1]
    k = np.arange(1, m + 1)
    scaled = points / np.sqrt(k * (k + 1.0))
    suffix = np.cumsum(scaled[..., ::-1], axis=-1)[..., ::-1]
    z = np.concatenate([suffix, np.zeros(points.shape[:-1] + (1,))], axis=-1)
    z[..., 1:] -= k * scaled
    return z


def sphere_orderings(points: np.ndarray) -> np.ndarray:
    """Orderings (int32, (..., d)) of points (..., d − 1) of S^{d−2}: ``argsort(Ûᵀ y)``."""
    return np.argsort(zero_sum_embedding(points), axis=-1, kind="stable").astype(np.int32)


@single_threaded_blas
def orthogonal_orderings(gaussians: np.ndarray) -> np.ndarray:
    """Orthogonal spherical codes: each Gaussian matrix gives one block of orderings.

    The sign-corrected Q factor of each Gaussian matrix (..., d − 1, m), m <= d − 1, is a Haar
    basis; each vector and its antipode give an ordering and its reverse (rows 2i, 2i + 1), so
    the result is int32 (..., 2 m, d). The first m columns give the first m vectors of a block.
    """
    q, r = np.linalg.qr(gaussians)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    basis = np.swapaxes(q * np.where(signs == 0, 1.0, signs)[..., None, :], -1, -2)  # rows = basis vectors
    forward = sphere_orderings(basis)  # (..., d − 1, d)
    blocks = np.stack([forward, forward[..., ::-1]], axis=-2)  # antipode = reversed ordering
    return blocks.reshape(gaussians.shape[:-2] + (2 * forward.shape[-2], forward.shape[-1]))


def polar_inverse_cdf(u: np.ndarray, power: int) -> np.ndarray:
    """Inverse CDF on [0, π] of the density ∝ sin^power, through the incomplete beta function.

    F(φ) = ½ I_{sin²φ}((power + 1)/2, ½) for φ <= π/2 and 1 − ½ I_{sin²φ}(…) beyond.
    """
    u = np.clip(u, 1e-300, 1.0 - 1e-16)
    lower = u <= 0.5
    tail = np.where(lower, 2.0 * u, 2.0 * (1.0 - u))
    angle = np.arcsin(np.sqrt(np.clip(betaincinv((power + 1) / 2.0, 0.5, tail), 0.0, 1.0)))
    return np.where(lower, angle, np.pi - angle)


def polar_to_cartesian(angles: np.ndarray) -> np.ndarray:
    """Map m − 1 generalised polar angles (the last one the azimuth) to unit vectors of R^{m}.

    The corrected form of Mitchell et al.'s Algorithm 4, whose ``i < d − 2`` leaves points off the sphere.
    """
    n, n_angles = angles.shape
    sines = np.concatenate([np.ones((n, 1)), np.cumprod(np.sin(angles), axis=1)], axis=1)
    cosines = np.concatenate([np.cos(angles), np.ones((n, 1))], axis=1)
    return sines * cosines


def sobol_sphere_points(n: int, n_features: int, rng: np.random.Generator) -> np.ndarray:
    """N scrambled-Sobol points of S^{d−2} mapped by the area-preserving polar map, shape (n, d − 1).

    Needs d >= 3; scrambled (LMS + digital shift) from ``rng``, so every point is uniform.
    """
    n_angles = n_features - 2
    with warnings.catch_warnings():  # balance properties need powers of 2; uniformity does not
        warnings.simplefilter("ignore", UserWarning)
        unit_cube = qmc.Sobol(n_angles, scramble=True, seed=rng).random(n)
    angles = np.empty_like(unit_cube)
    for j in range(n_angles - 1):  # the paper's φ_{j+1} has density ∝ sin^{d−j−3}
        angles[:, j] = polar_inverse_cdf(unit_cube[:, j], n_features - j - 3)
    angles[:, -1] = 2.0 * np.pi * unit_cube[:, -1]
    return polar_to_cartesian(angles)


def sobol_orderings(n: int, n_features: int, rng: np.random.Generator) -> np.ndarray:
    """Orderings (int32, (n, d)) from scrambled Sobol points on S^{d−2}; d >= 3."""
    return sphere_orderings(sobol_sphere_points(n, n_features, rng))
