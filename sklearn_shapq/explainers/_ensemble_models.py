"""Ensembles whose output is a weighted sum of their members' outputs: the weights read from the model.

A :class:`~sklearn.ensemble.VotingRegressor` predicts the weighted mean of its members' predictions, a soft
:class:`~sklearn.ensemble.VotingClassifier` the weighted mean of their probabilities, and a
:class:`~sklearn.ensemble.StackingRegressor` whose final estimator is linear (its default ``RidgeCV``, say)
the final estimator's coefficients times its members' predictions plus its intercept. Shapley values are
linear in the game, so such an ensemble's values are the same weighted sum of its members' values: exact
wherever every member's are (the ``"ensemble"`` path of :mod:`~sklearn_shapq.explainers._exact_paths`).
A binary :class:`~sklearn.calibration.CalibratedClassifierCV` is the mean over its folds of a link of m, a
fold's decision function (or probability): σ(scale · m + shift) with ``method="sigmoid"`` (Platt's), the
interpolation of its thresholds with ``method="isotonic"``; each member's path enumerates the coalitions. A
:class:`~sklearn.compose.TransformedTargetRegressor` is its regressor's prediction through the inverse of
the target's transform: affine for a scaler (a weighted sum of one member), the exponential for a log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import TransformedTargetRegressor
from sklearn.ensemble import StackingRegressor, VotingClassifier, VotingRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.preprocessing import FunctionTransformer, MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler

MEMBER_OUTPUT = {"predict": "predict", "probability": "probability"}
FLOAT32_CALIBRATION_RTOL = 1e-6
"""Tolerance of an isotonic calibration interpolated in float32 (its outputs are rounded to float32)."""
"""The members' output each explained output of an ensemble is a weighted sum of (others are not)."""


@dataclass(frozen=True)
class WeightedEnsemble:
    """An ensemble's output as ``intercept + Σ_m weights[m] · (member m's member_output)``.

    Attributes
    ----------
    members : tuple of fitted estimators
    weights : ndarray of shape (n_members,)
    intercept : float
    member_output : str
        What is summed of each member: "predict", "probability" or "margin".
    description : str
        The ensemble, for messages.
    member_link : str, optional
        Each member's output through this link ("sigmoid", "exp", "interp") of ``scale · output + shift`` before
        the sum.
    affine : tuple of (scale, shift) pairs, optional
        Each member's, with ``member_link`` (a sigmoid calibration's −a and −b).
    knots : tuple of ndarrays of shape (2, K), optional
        Each member's "interp" link (an isotonic calibration's thresholds and values).
    rtol : float
        Least tolerance of the check of its outputs (an isotonic calibration in float32: 1e-6).
    """

    members: tuple[Any, ...]
    weights: np.ndarray
    intercept: float
    member_output: str
    description: str
    member_link: str | None = None
    affine: tuple[tuple[float, float], ...] | None = None
    knots: tuple[np.ndarray, ...] | None = None
    rtol: float = 0.0


def extract_ensemble(model: Any, output: str) -> WeightedEnsemble:
    """Read a voting ensemble or a stacking regressor with a linear final estimator as a weighted sum.

    Parameters
    ----------
    model : fitted VotingRegressor, VotingClassifier, StackingRegressor, CalibratedClassifierCV or
        TransformedTargetRegressor
    output : str
        The explained output, resolved: "predict" (regressors) or "probability" (classifiers).

    Returns
    -------
    WeightedEnsemble

    Raises
    ------
    TypeError
        Not one of these ensembles.
    ValueError
        One whose ``output`` is not a weighted sum of its members' outputs: hard voting, a classifier's
        log-odds, a stacking regressor that passes its inputs through or whose final estimator is not
        linear, a temperature or multiclass calibration, a target transform other than a scaler
        or a log (``np.log`` or ``np.log1p`` with its inverse).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import VotingRegressor
    >>> from sklearn.linear_model import LinearRegression, Ridge
    >>> X, y = load_diabetes(return_X_y=True)
    >>> voting = VotingRegressor([("ols", LinearRegression()), ("ridge", Ridge())], weights=[3, 1]).fit(X, y)
    >>> extract_ensemble(voting, "predict").weights.tolist()
    [0.75, 0.25]
    """
    if isinstance(model, VotingRegressor | VotingClassifier):
        return _voting(model, output)
    if isinstance(model, StackingRegressor):
        return _stacking(model, output)
    if isinstance(model, CalibratedClassifierCV):
        return _calibration(model, output)
    if isinstance(model, TransformedTargetRegressor):
        return _transformed_target(model, output)
    raise TypeError(
        f"{type(model).__name__} is not a voting ensemble, a stacking regressor, a calibrated classifier or a "
        "transformed target."
    )


def _voting(model: VotingRegressor | VotingClassifier, output: str) -> WeightedEnsemble:
    name = type(model).__name__
    if isinstance(model, VotingClassifier) and model.voting != "soft":
        raise ValueError(f"A {name} with voting={model.voting!r} outputs a vote, not a sum: use voting='soft'.")
    expected = "probability" if isinstance(model, VotingClassifier) else "predict"
    if output != expected:
        raise ValueError(f"A {name}'s output {output!r} is not a weighted mean of its members' (its {expected!r} is).")
    kept = [est != "drop" for _, est in model.estimators]
    weights = np.ones(len(kept)) if model.weights is None else np.asarray(model.weights, dtype=np.float64)
    weights = weights[np.asarray(kept)]
    members = tuple(_unfrozen(est) for est in model.estimators_)
    return WeightedEnsemble(members, weights / weights.sum(), 0.0, MEMBER_OUTPUT[output], f"{name}'s weighted mean")


def _stacking(model: StackingRegressor, output: str) -> WeightedEnsemble:
    final = model.final_estimator_
    coef, intercept = getattr(final, "coef_", None), np.ravel(getattr(final, "intercept_", 0.0))
    if output != "predict":
        raise ValueError(f"A StackingRegressor's output {output!r} is not read from its members (its 'predict' is).")
    if model.passthrough:
        raise ValueError("A StackingRegressor with passthrough=True also gives its final estimator the raw inputs.")
    members = tuple(_unfrozen(est) for est in model.estimators_ if not isinstance(est, str))
    if coef is None or np.ndim(coef) != 1 or np.shape(coef)[0] != len(members) or intercept.size != 1:
        raise ValueError(
            f"A StackingRegressor's final estimator {type(final).__name__} is not linear in its members' predictions "
            "(no coef_ of one weight per member)."
        )
    return WeightedEnsemble(
        members, np.asarray(coef, dtype=np.float64), float(intercept[0]), "predict", "StackingRegressor's linear stack"
    )


def _calibration(model: CalibratedClassifierCV, output: str) -> WeightedEnsemble:
    if output != "probability":
        raise ValueError(
            f"A CalibratedClassifierCV's output {output!r} is not read from its folds (its 'probability' is)."
        )
    if model.method not in ("sigmoid", "isotonic") or len(model.classes_) != 2:
        raise ValueError(
            f"A CalibratedClassifierCV with method={model.method!r} and {len(model.classes_)} classes is not a mean of "
            "its folds' outputs each through a link (a binary method='sigmoid' or 'isotonic' is)."
        )
    folds = model.calibrated_classifiers_
    members = tuple(_unfrozen(fold.estimator) for fold in folds)
    response = "margin" if hasattr(members[0], "decision_function") else "probability"  # scikit-learn's order
    weights = np.full(len(members), 1.0 / len(members))
    description = f"CalibratedClassifierCV's mean of {model.method} calibrations"
    if model.method == "sigmoid":  # σ(−(a m + b))
        affine = tuple((-float(fold.calibrators[0].a_), -float(fold.calibrators[0].b_)) for fold in folds)
        return WeightedEnsemble(members, weights, 0.0, response, description, "sigmoid", affine)
    knots = tuple(  # an isotonic regression interpolates its thresholds (clipped beyond them)
        np.array([fold.calibrators[0].X_thresholds_, fold.calibrators[0].y_thresholds_], dtype=np.float64)
        for fold in folds
    )
    # scikit-learn interpolates in the thresholds' dtype: float32 for a member with float32 margins
    rtol = (
        FLOAT32_CALIBRATION_RTOL if any(fold.calibrators[0].X_thresholds_.dtype == np.float32 for fold in folds) else 0
    )
    affine = ((1.0, 0.0),) * len(folds)
    return WeightedEnsemble(members, weights, 0.0, response, description, "interp", affine, knots, rtol)


def _unfrozen(estimator: Any) -> Any:
    """Return the estimator a FrozenEstimator holds (a prefit model calibrated), or ``estimator``."""
    return estimator.estimator if isinstance(estimator, FrozenEstimator) else estimator


def _transformed_target(model: TransformedTargetRegressor, output: str) -> WeightedEnsemble:
    if output != "predict":
        raise ValueError(f"A TransformedTargetRegressor's output {output!r} is not read (its 'predict' is).")
    transformer, member = model.transformer_, (_unfrozen(model.regressor_),)
    if type(transformer) is not FunctionTransformer and getattr(transformer, "n_features_in_", 1) != 1:
        raise ValueError(
            "A TransformedTargetRegressor scaling several targets is not read (each target its own scale)."
        )
    description = "TransformedTargetRegressor's inverse transform"
    affine = _affine_inverse(transformer)
    if affine is not None:  # y = scale · prediction + shift
        return WeightedEnsemble(member, np.array([affine[0]]), affine[1], "predict", description)
    inverse = getattr(transformer, "inverse_func", None) if type(transformer) is FunctionTransformer else None
    if inverse is np.exp or inverse is np.expm1:  # expm1(m) = exp(m) − 1: the −1 is the intercept
        intercept = -1.0 if inverse is np.expm1 else 0.0
        return WeightedEnsemble(member, np.ones(1), intercept, "predict", description, "exp", ((1.0, 0.0),))
    raise ValueError(
        f"A TransformedTargetRegressor's transform {transformer!r} is not read: a scaler's or an identity's inverse is "
        "affine, np.exp and np.expm1 are links; others (quantiles, powers, functions) are sampled."
    )


def _affine_inverse(transformer: Any) -> tuple[float, float] | None:
    """Return (scale, shift) with inverse_transform(t) = scale · t + shift for a one-target scaler, or None."""
    kind = type(transformer)
    if kind is FunctionTransformer and transformer.func is None and transformer.inverse_func is None:
        return 1.0, 0.0
    if kind is StandardScaler:  # mean_ is filled even without with_mean, and not used
        scale = 1.0 if transformer.scale_ is None or not transformer.with_std else float(transformer.scale_[0])
        shift = 0.0 if transformer.mean_ is None or not transformer.with_mean else float(transformer.mean_[0])
        return scale, shift
    if kind is MinMaxScaler:  # (t − min_) / scale_
        return 1.0 / float(transformer.scale_[0]), -float(transformer.min_[0]) / float(transformer.scale_[0])
    if kind is MaxAbsScaler:
        return float(transformer.scale_[0]), 0.0
    if kind is RobustScaler:
        scale = 1.0 if transformer.scale_ is None or not transformer.with_scaling else float(transformer.scale_[0])
        shift = 0.0 if transformer.center_ is None or not transformer.with_centering else float(transformer.center_[0])
        return scale, shift
    return None
