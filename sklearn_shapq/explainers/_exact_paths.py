"""Exact paths of :class:`PermutationShapExplainer`: its game's values from the model's structure, no sampling.

The interventional game of a row, v_x(S) = mean over background rows z of f(x_S, z_{N∖S}), has
exact Shapley values in polynomial time for two kinds of model:

- "product_kernel": a product-kernel model (an SVR, KernelRidge, a Gaussian process, …), by
  :class:`ProductKernelShapExplainer` (PKeX-Shapley), for features or groups, pairs included;
- "tree": a tree ensemble (scikit-learn's, xgboost, LightGBM), by shap's interventional TreeSHAP
  (``shap.TreeExplainer(model, background, feature_perturbation="interventional")``), for features.

Where the structure read from the model gives exactly the outputs the permutation explainer explains
(``output``; checked on the background in ``fit`` and on every explained row), ``algorithm="auto"``
takes these values: the expectation of every estimator, without variance, in no model call but the check.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq.explainers._kernel_models import check_outputs, extract_expansion
from sklearn_shapq.explainers._product_kernel_explainer import ProductKernelShapExplainer

PRODUCT_KERNEL, TREE = "product_kernel", "tree"
EXACT_PATHS = (PRODUCT_KERNEL, TREE)
"""The ``algorithm`` names of the exact paths (``algorithm_`` of a permutation explainer that takes one)."""

CHECKED_ROWS = 64
"""Background rows on which ``fit`` compares the structure's outputs with the model's."""

TREE_RTOL = 1e-6
"""How far a tree ensemble's outputs read by shap may be from the model's (float32 leaves summed in another
order), relative to max(1, the largest |output|); the product-kernel path allows 1e-8."""


class ExactPath(ABC):
    """A fitted exact path: ``values(rows)`` (n, p, k), ``predict(rows)`` (n, k), ``interactions(rows, index)``."""

    name: str

    @abstractmethod
    def values(self, rows: np.ndarray) -> np.ndarray:
        """Exact Shapley values of rows (n, d): (n, p, k)."""

    @abstractmethod
    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Return the structure's outputs on rows (n, d): (n, k), compared with the model's."""

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray | None:
        """Exact pairs of rows (n, p, p, k) of ``index``, or None where the path has none."""
        return None

    def check(self, rows: np.ndarray, outputs: np.ndarray) -> None:
        """Refuse a model whose outputs ``outputs`` (n, k) on ``rows`` are not the structure's (a model changed)."""
        try:
            self._compare(rows, outputs, "the model")
        except ValueError as exc:
            raise ValueError(
                f"The model's output differs from the {self.name} structure read in fit: it was refitted or changed "
                f"in place since fit. Call fit again. ({exc})"
            ) from exc

    @abstractmethod
    def _compare(self, rows: np.ndarray, outputs: np.ndarray, name: str) -> None:
        """Raise a ValueError where the structure's outputs on ``rows`` are not ``outputs`` (given by ``name``)."""


class ProductKernelPath(ExactPath):
    """The product-kernel path: a :class:`ProductKernelShapExplainer` of the interventional game."""

    name = PRODUCT_KERNEL

    def __init__(self, explainer: ProductKernelShapExplainer) -> None:
        self.explainer = explainer

    def values(self, rows: np.ndarray) -> np.ndarray:
        n, p, k = rows.shape[0], self.explainer.feature_groups_.n_players, self.explainer.n_outputs_
        return np.asarray(self.explainer.explain(rows).values).reshape(n, p, k)

    def predict(self, rows: np.ndarray) -> np.ndarray:
        return np.asarray(self.explainer.expansion_.predict(rows))

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray:
        n, p, k = rows.shape[0], self.explainer.feature_groups_.n_players, self.explainer.n_outputs_
        return np.asarray(self.explainer.explain_interactions(rows, index=index).values).reshape(n, p, p, k)

    def _compare(self, rows: np.ndarray, outputs: np.ndarray, name: str) -> None:
        check_outputs(self.explainer.expansion_, rows, outputs, name)


class TreePath(ExactPath):
    """The tree path: shap's interventional TreeSHAP over the background.

    ``n_read`` outputs as shap reads the ensemble; ``column``: the one explained (a binary
    classifier's second class), or None for all.
    """

    name = TREE

    def __init__(self, explainer: Any, n_read: int, column: int | None) -> None:
        self.explainer, self.n_read, self.column = explainer, n_read, column

    def _explained(self, array: np.ndarray) -> np.ndarray:
        return array if self.column is None else array[..., self.column : self.column + 1]

    def values(self, rows: np.ndarray) -> np.ndarray:
        values = np.asarray(self.explainer.shap_values(rows, check_additivity=False), dtype=np.float64)
        return self._explained(values.reshape(rows.shape[0], rows.shape[1], self.n_read))

    def predict(self, rows: np.ndarray) -> np.ndarray:
        predicted = np.asarray(self.explainer.model.predict(rows), dtype=np.float64)
        return self._explained(predicted.reshape(rows.shape[0], self.n_read))

    def _compare(self, rows: np.ndarray, outputs: np.ndarray, name: str) -> None:
        predicted = self.predict(rows)
        if predicted.shape != outputs.shape:
            raise ValueError(f"shap's tree ensemble gives outputs of shape {predicted.shape}, {name} {outputs.shape}.")
        difference = float(np.max(np.abs(predicted - outputs)))
        scale = max(1.0, float(np.max(np.abs(outputs))))
        if not difference <= TREE_RTOL * scale:
            raise ValueError(
                f"shap's tree ensemble does not reproduce {name}: max |difference| {difference:.3g}, relative "
                f"{difference / scale:.3g} > {TREE_RTOL:g}."
            )


def exact_path(
    algorithm: str,
    model: Any,
    background: np.ndarray,
    background_outputs: np.ndarray,
    groups: FeatureGroups,
    device: Any,
    progress: bool,
) -> ExactPath | None:
    """Return the exact path ``algorithm`` asks for where it gives the explained outputs, else None.

    Parameters
    ----------
    algorithm : str
        "auto" (the product-kernel path, else the tree path, else None), "product_kernel" or "tree"
        (that path, or an error saying why not); another name: None.
    model : fitted estimator
    background : ndarray of shape (N, d)
        The background rows, in the model's input units.
    background_outputs : ndarray of shape (N, n_outputs)
        The explained output of the model (``output``) on ``background``.
    groups : FeatureGroups
        The players (the tree path takes single columns only).
    device, progress
        The permutation explainer's (the product-kernel path runs on ``device``; the tree path on the CPU).

    Returns
    -------
    ExactPath or None
        Fitted on the background; its outputs on the first :data:`CHECKED_ROWS` background rows are
        ``background_outputs``.

    Raises
    ------
    TypeError
        An exact path asked for by name whose model is not of its kind.
    ValueError
        An exact path asked for by name whose structure does not give the explained output (a
        probability, say), or the tree path with feature groups.
    """
    names = (PRODUCT_KERNEL, TREE) if algorithm == "auto" else (algorithm,) if algorithm in EXACT_PATHS else ()
    for name in names:
        try:
            path = _product_kernel_path if name == PRODUCT_KERNEL else _tree_path
            return path(model, background, background_outputs, groups, device, progress)
        except (TypeError, ValueError):
            if algorithm != "auto":
                raise
    return None


def _product_kernel_path(
    model: Any, background: np.ndarray, outputs: np.ndarray, groups: FeatureGroups, device: Any, progress: bool
) -> ProductKernelPath:
    check_outputs(
        extract_expansion(model), background[:CHECKED_ROWS], outputs[:CHECKED_ROWS], "the explained output (output=)"
    )
    feature_groups = {name: members.tolist() for name, members in zip(groups.names, groups.members, strict=True)}
    explainer = ProductKernelShapExplainer(
        model,
        value_function="interventional",
        background_size=None,
        feature_groups=feature_groups,
        device=device,
        progress=progress,
    )
    return ProductKernelPath(explainer.fit(background))


def _tree_path(
    model: Any, background: np.ndarray, outputs: np.ndarray, groups: FeatureGroups, device: Any, progress: bool
) -> TreePath:
    if not _is_checked_tree_ensemble(model):
        raise TypeError(f"algorithm={TREE!r} takes {TREE_MODELS}; got {type(model).__name__}.")
    if groups.n_players != background.shape[1]:
        raise ValueError(f"algorithm={TREE!r} explains single features: interventional TreeSHAP has no groups.")
    import shap

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # shap's notes on the background's size
            explainer = shap.TreeExplainer(
                model, data=background, feature_perturbation="interventional", model_output="raw"
            )
    except Exception as exc:  # shap raises its own exceptions for what it cannot read
        raise TypeError(f"shap's TreeExplainer cannot read this {type(model).__name__}: {exc}") from exc
    n_read = np.asarray(explainer.model.predict(background[:1])).reshape(1, -1).shape[1]
    # a binary classifier's probability: shap reads both classes, the explained output is the second's
    column = 1 if n_read == 2 and outputs.shape[1] == 1 else None
    path = TreePath(explainer, n_read, column)
    path._compare(background[:CHECKED_ROWS], outputs[:CHECKED_ROWS], "the explained output (output=)")
    return path


TREE_MODELS = (
    "scikit-learn's DecisionTree, ExtraTree, RandomForest, ExtraTrees and GradientBoosting regressors and "
    "classifiers, and xgboost's XGBRegressor, XGBClassifier and Booster"
)
"""The models of the tree path: those whose interventional TreeSHAP (shap's) the tests check by enumeration.
shap's values of a HistGradientBoostingRegressor are off by 1e-2 where its predictions agree: not taken."""


def _is_checked_tree_ensemble(model: Any) -> bool:
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.tree import BaseDecisionTree

    sklearn_trees = (
        BaseDecisionTree,
        RandomForestRegressor,
        RandomForestClassifier,
        ExtraTreesRegressor,
        ExtraTreesClassifier,
        GradientBoostingRegressor,
        GradientBoostingClassifier,
    )
    kind = type(model)
    return isinstance(model, sklearn_trees) or (
        kind.__module__.startswith("xgboost") and kind.__name__ in ("XGBRegressor", "XGBClassifier", "Booster")
    )
