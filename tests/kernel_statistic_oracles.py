"""Textbook kernel statistics (MMD², HSIC) and their pair-weight games, written without package code."""

import numpy as np

from brute_force import brute_force_shapley


def rbf_factors(A, B, sigma):
    """k_j(a_j, b_j) = exp(−(a_j − b_j)² / (2σ_j²)) for all pairs: (len(A), len(B), d)."""
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2) / (2.0 * np.asarray(sigma) ** 2))


def shapley_of_pairs(weights, factors):
    """Brute force over coalitions of v(S) = Σ_ab W_ab Π_{j∈S} factors_abj."""
    d = factors.shape[2]
    return brute_force_shapley(lambda s: (weights * np.prod(factors[:, :, list(s)], axis=2)).sum(), d)


def mmd2_textbook(X, Z, sigma, unbiased):
    """MMD² from the three Gram blocks: U-statistic (no diagonals) or V-statistic."""
    kxx = np.prod(rbf_factors(X, X, sigma), axis=2)
    kzz = np.prod(rbf_factors(Z, Z, sigma), axis=2)
    kxz = np.prod(rbf_factors(X, Z, sigma), axis=2)
    n, m = len(X), len(Z)
    if unbiased:
        return (kxx.sum() - n) / (n * (n - 1)) + (kzz.sum() - m) / (m * (m - 1)) - 2 * kxz.sum() / (n * m)
    return kxx.mean() + kzz.mean() - 2 * kxz.mean()


def hsic_textbook(K, L, unbiased):
    """Biased HSIC tr(KHLH)/(n − 1)², or the unbiased estimator of Song et al. (2012)."""
    n = K.shape[0]
    if not unbiased:
        H = np.eye(n) - 1.0 / n
        return np.trace(K @ H @ L @ H) / (n - 1) ** 2
    Kt, Lt = K - np.diag(np.diag(K)), L - np.diag(np.diag(L))
    one = np.ones(n)
    middle = (one @ Kt @ one) * (one @ Lt @ one) / ((n - 1) * (n - 2))
    return (np.trace(Kt @ Lt) + middle - 2 / (n - 2) * one @ Kt @ Lt @ one) / (n * (n - 3))


def mmd_weights(n, m, unbiased):
    """W with MMD² = Σ_ab W_ab K_ab for the pooled sample (X first)."""
    N = n + m
    W = np.empty((N, N))
    W[:n, :n] = 1 / (n * (n - 1)) if unbiased else 1 / n**2
    W[n:, n:] = 1 / (m * (m - 1)) if unbiased else 1 / m**2
    W[:n, n:] = W[n:, :n] = -1 / (n * m)
    if unbiased:
        np.fill_diagonal(W, 0.0)
    return W


def hsic_weights(L, unbiased):
    """Symmetric W with HSIC = Σ_ab W_ab K_ab for symmetric K, from the textbook statistic being linear in K.

    W_ab = ∂ HSIC / ∂ K_ab, symmetrised (the unbiased statistic's derivative is not symmetric); its
    diagonal is 0 for the unbiased statistic.
    """
    n = L.shape[0]
    W = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            E = np.zeros((n, n))
            E[a, b] = 1.0
            W[a, b] = hsic_textbook(E, L, unbiased) if not unbiased or a != b else 0.0
    return (W + W.T) / 2
