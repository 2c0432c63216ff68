"""Product-kernel expansions f(x) = Σ_c Σ_i w_ci Π_j k_cj(x_j, X_cij) + b and their Shapley games.

v_x(S) = b + Σ_c Σ_i w_ci mean_l Π_{j∈S} k_cj(x_j, X_cij) Π_{j∉S} k_cj(r_lj, X_cij): no references
give PKeX (absent factors 1), one reference baseline SHAP, a background set interventional SHAP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq.backends import FACTOR_KINDS, ArrayBackend, CpuBackend, factor_tensor
from sklearn_shapq.games._game import Game

_BLOCK_BYTES = 64 * 2**20  # temporaries of one block of kernel evaluations


@dataclass(frozen=True)
class KernelComponent:
    """One product-kernel expansion Σ_i weights[i] Π_j k_j(x_j, anchors[i, j]).

    Attributes
    ----------
    anchors : ndarray of shape (n, d)
        Training or support points, in the units of the explained data.
    weights : ndarray of shape (n, n_outputs)
        Dual coefficients, amplitude included.
    kinds : int8 ndarray of shape (d,)
        Codes of :data:`FACTOR_KINDS`.
    gammas : ndarray of shape (d,)
        Factor scales (0: a null player).
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
        Summed; all of the same shapes.
    intercept : ndarray of shape (n_outputs,)
    output_names : list of str or None
    description : str
        What is explained, e.g. "SVR.predict".
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
        """f(x) of rows ``X`` (A, d) → (A, n_outputs), from the dual form."""
        out = xp.zeros((X.shape[0], self.n_outputs), dtype=xp.float64) + xp.asarray(self.intercept)
        for component in self.components:
            out += component.kernel_rows(X, xp) @ xp.asarray(component.weights)
        return out


class ProductKernelGame(Game):
    """The two-factor game of a product-kernel model for each explained row, on a backend.

    Parameters
    ----------
    expansion : KernelExpansion
    x : array of shape (n, d)
        Explained rows (one game each).
    references : array of shape (L, d) or None
        None: the PKeX game (absent factors 1); else absent features take the references' values, averaged.
    backend : ArrayBackend, optional
        Default: the CPU.
    feature_groups : FeatureGroups, optional
        Groups of columns as players; None: each column is a player.

    Notes
    -----
    Coalitions are evaluated from the definition (L·n·d per coalition): the oracle, not the fast path.
    """

    def __init__(
        self,
        expansion: KernelExpansion,
        x: Any,
        references: Any = None,
        backend: ArrayBackend | None = None,
        feature_groups: FeatureGroups | None = None,
    ) -> None:
        backend = backend if backend is not None else CpuBackend()
        xp = backend.xp
        self.expansion = expansion
        self.x = xp.asarray(x, dtype=xp.float64)
        self.references = None if references is None else xp.asarray(references, dtype=xp.float64)
        self.feature_groups = feature_groups
        n_players = self.x.shape[1] if feature_groups is None else feature_groups.n_players
        super().__init__(n_players, self.x.shape[0], expansion.n_outputs, backend)

    def corner_values(self) -> tuple[Any, Any]:
        """v(∅) from the expansion (shared by every row) and v(N) = f(x) from the dual form."""
        xp = self.backend.xp
        if self.references is None:
            empty = self.expansion.intercept + self.expansion.weight_sum()
        else:
            empty = self.expansion.predict(self.references, xp).mean(axis=0)
        empty = xp.broadcast_to(xp.asarray(empty, dtype=xp.float64), (self.n_games, self.n_outputs))
        return empty, self.expansion.predict(self.x, xp)

    def evaluate(self, masks: Any, games: Any) -> Any:
        """Return v_x(S) (m, n_outputs) of ``masks`` (m, players) of rows ``games`` (m,), from the definition."""
        xp = self.backend.xp
        if self.feature_groups is not None:
            masks = self.feature_groups.column_masks(masks)
        n_pairs = masks.shape[0]
        values = xp.zeros((n_pairs, self.n_outputs), dtype=xp.float64) + xp.asarray(self.expansion.intercept)
        for component in self.expansion.components:
            anchors = xp.asarray(component.anchors)
            weights = xp.asarray(component.weights)
            if self.references is None:
                absent = xp.ones((1,) + anchors.shape)
            else:
                absent = factor_tensor(self.references, anchors, component.kinds, component.gammas, xp)  # (L, n, d)
            step = max(1, _BLOCK_BYTES // (16 * absent.size))
            for start in range(0, n_pairs, step):
                rows = games[start : start + step]
                present = factor_tensor(self.x[rows], anchors, component.kinds, component.gammas, xp)  # (c, n, d)
                m = masks[start : start + step, None, None, :]  # (c, 1, 1, d)
                factors = xp.where(m, present[:, None], absent[None])  # (c, L, n, d)
                values[start : start + step] += xp.prod(factors, axis=3).mean(axis=1) @ weights
        return values
