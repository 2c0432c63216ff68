"""Product-kernel expansions and their Shapley games (PKeX, baseline and interventional).

A product-kernel model is f(x) = Σ_c Σ_i w_ci Π_j k_cj(x_j, X_cij) + b: a sum of components c,
each with anchors X_c (training or support points), weights w_c (n_c, k) for k outputs and a kernel
factor k_cj per feature (RBF, Laplacian or Cauchy with its own γ_cj). Any amplitude is folded into
the weights. The games of an explained row x are two-factor games

    v_x(S) = b + Σ_c Σ_i w_ci mean_l Π_{j∈S} k_cj(x_j, X_cij) Π_{j∉S} k_cj(r_lj, X_cij)

with the absent factors taken at reference rows r_l. Without references every absent factor is 1:
the PKeX game of the paper (v(∅) = b + Σw). One reference gives baseline SHAP, a background set
gives the exact interventional game, v(∅) = mean_l f(r_l).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.backends._product_kernel import FACTOR_KINDS, factor_tensor

_BLOCK_BYTES = 64 * 2**20  # temporaries of one block of kernel evaluations


@dataclass(frozen=True)
class KernelComponent:
    """One product-kernel expansion Σ_i weights[i] Π_j k_j(x_j, anchors[i, j]).

    Attributes
    ----------
    anchors : ndarray of shape (n, d)
        Training or support points, in the units of the explained data.
    weights : ndarray of shape (n, k)
        Dual coefficients per output, amplitude included.
    kinds : int8 ndarray of shape (d,)
        Factor kind of each feature (codes of :data:`FACTOR_KINDS`).
    gammas : ndarray of shape (d,)
        Factor scale of each feature (0 makes the feature a null player).
    """

    anchors: np.ndarray
    weights: np.ndarray
    kinds: np.ndarray
    gammas: np.ndarray

    def __post_init__(self) -> None:
        n, d = self.anchors.shape
        if self.weights.ndim != 2 or self.weights.shape[0] != n:
            raise ValueError(f"weights must have shape ({n}, k), got {self.weights.shape}.")
        if self.kinds.shape != (d,) or self.gammas.shape != (d,):
            raise ValueError(f"kinds and gammas must have shape ({d},).")
        if not np.all(np.isin(self.kinds, list(FACTOR_KINDS.values()))):
            raise ValueError(f"kinds must be codes of {FACTOR_KINDS}, got {self.kinds}.")
        if not np.all(np.isfinite(self.gammas)) or np.any(self.gammas < 0):
            raise ValueError("kernel scales (gamma) must be finite and non-negative.")

    def kernel_rows(self, x: Any, xp: Any = np) -> Any:
        """Kernel values Π_j k_j(x_j, anchors_ij) of rows ``x`` (A, d) → (A, n), blocked."""
        anchors = xp.asarray(self.anchors)
        n, d = anchors.shape
        out = xp.empty((x.shape[0], n), dtype=xp.float64)
        step = max(1, _BLOCK_BYTES // (8 * 4 * max(1, n * d)))
        for start in range(0, x.shape[0], step):
            block = factor_tensor(x[start : start + step], anchors, self.kinds, self.gammas, xp)
            out[start : start + step] = xp.prod(block, axis=2)
        return out


@dataclass
class KernelExpansion:
    """A product-kernel model: components, an intercept and the names of its outputs.

    Attributes
    ----------
    components : list of KernelComponent
        Summed; all have the same d and k.
    intercept : ndarray of shape (k,)
    output_names : list of str or None
        Names of the k outputs when k > 1.
    description : str
        What is explained, e.g. "SVR.predict" (used in messages).
    """

    components: list[KernelComponent]
    intercept: np.ndarray
    output_names: list[str] | None = None
    description: str = "kernel expansion"
    _checked: bool = field(default=False, repr=False)

    @property
    def n_features(self) -> int:
        """Number of features d."""
        return int(self.components[0].anchors.shape[1])

    @property
    def n_outputs(self) -> int:
        """Number of outputs k."""
        return int(self.intercept.shape[0])

    def weight_sum(self) -> np.ndarray:
        """Σ_c Σ_i w_ci per output: v(∅) − b of the PKeX game."""
        return sum(component.weights.sum(axis=0) for component in self.components)

    def predict(self, X: Any, xp: Any = np) -> Any:
        """f(x) of rows ``X`` (A, d) → (A, k), from the dual form."""
        out = xp.zeros((X.shape[0], self.n_outputs), dtype=xp.float64) + xp.asarray(self.intercept)
        for component in self.components:
            out += component.kernel_rows(X, xp) @ xp.asarray(component.weights)
        return out


class ProductKernelGame:
    """The two-factor game of a product-kernel model, on a backend.

    Parameters
    ----------
    expansion : KernelExpansion
    references : array of shape (L, d) or None
        None: the PKeX game (absent factors are 1). Rows: absent features take their values,
        averaged over the rows (one row: baseline SHAP; a background set: interventional SHAP).
    backend : ArrayBackend, optional
        Where values are computed (default: the CPU).

    Attributes
    ----------
    empty_value : array of shape (k,)
        v(∅): b + Σw without references, else the mean model output over the references.
    n_outputs : int
    """

    def __init__(self, expansion: KernelExpansion, references: Any = None, backend: ArrayBackend | None = None):
        self.expansion = expansion
        self.backend = backend if backend is not None else CpuBackend()
        xp = self.backend.xp
        self.references = None if references is None else xp.asarray(references, dtype=xp.float64)
        if self.references is None:
            empty = expansion.intercept + expansion.weight_sum()
        else:
            empty = expansion.predict(self.references, xp).mean(axis=0)
        self.empty_value = xp.asarray(empty, dtype=xp.float64)
        self.n_outputs = expansion.n_outputs

    def full_values(self, x: Any) -> Any:
        """v(N) = f(x) for rows ``x`` (B, d) → (B, k)."""
        return self.expansion.predict(x, self.backend.xp)

    def __call__(self, x: Any, masks: Any) -> Any:
        """v_x(S) for every row of ``x`` (B, d) and each of its coalitions ``masks`` (B, C, d).

        Evaluated directly from the definition (cost B·C·L·n·d): the oracle of the brute-force
        method and of the tests, not a fast path.

        Returns
        -------
        array of shape (B, C, k)
        """
        xp = self.backend.xp
        n_rows, n_coalitions, d = masks.shape
        values = xp.zeros((n_rows, n_coalitions, self.n_outputs), dtype=xp.float64)
        values += xp.asarray(self.expansion.intercept)
        for component in self.expansion.components:
            anchors = xp.asarray(component.anchors)
            weights = xp.asarray(component.weights)
            present = factor_tensor(x, anchors, component.kinds, component.gammas, xp)  # (B, n, d)
            if self.references is None:
                absent = xp.ones((1,) + anchors.shape)
            else:
                absent = factor_tensor(self.references, anchors, component.kinds, component.gammas, xp)  # (L, n, d)
            n_anchor_cells = absent.shape[0] * anchors.shape[0] * d
            step = max(1, _BLOCK_BYTES // (16 * max(1, n_rows * n_anchor_cells)))
            for start in range(0, n_coalitions, step):
                m = masks[:, start : start + step, None, None, :]  # (B, c, 1, 1, d)
                factors = xp.where(m, present[:, None, None], absent[None, None])  # (B, c, L, n, d)
                terms = xp.prod(factors, axis=4).mean(axis=2)  # (B, c, n)
                values[:, start : start + step] += terms @ weights
        return values
