"""Model adapters: turn a fitted model (scikit-learn, xgboost, a callable) into ``f(rows) -> (n_rows, n_outputs)``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
from sklearn.base import is_classifier, is_outlier_detector
from sklearn.utils.validation import check_is_fitted

from sklearn_shapq.backends import ArrayBackend, scipy_special
from sklearn_shapq.games._table_codec import TableCodec

OUTPUTS = ("auto", "margin", "log_odds", "probability", "predict")
PROBABILITY_CLIP = 1e-12
"""Probabilities are clipped to [this, 1 − this] before ``output="log_odds"`` takes their logit."""


@dataclass
class ModelFunction:
    """A model as a function of a 2-D array of rows, returning a 2-D float64 array.

    Attributes
    ----------
    predict : callable
        ``predict(rows)`` with rows on ``backend``; returns (n,) or (n, n_outputs).
    backend : ArrayBackend
    output : str
        "margin", "log_odds", "probability", "predict" or "callable".
    output_names : list of str or None
        None for a single output.
    name : str
        The model's name in error messages.
    """

    predict: Callable[[Any], Any]
    backend: ArrayBackend
    output: str
    output_names: list[str] | None = None
    name: str = "The model"

    def counted(self, bar: Any) -> ModelFunction:
        """Return this model function with every call advancing the progress ``bar`` by its rows."""
        predict = self.predict

        def counting(rows: Any) -> Any:
            out = predict(rows)
            bar.update(int(rows.shape[0]))
            return out

        return replace(self, predict=counting)

    def __call__(self, rows: Any) -> Any:
        """Evaluate the model on ``rows`` and return a (n_rows, n_outputs) float64 backend array.

        Raises
        ------
        ValueError
            The model failed on missing values, or returned NaN, infinity or a wrong shape.
        TypeError
            The model returned something that is not numbers.
        """
        xp = self.backend.xp
        try:
            predicted = self.predict(rows)
        except Exception as exc:
            said = str(exc).lower()  # only where its error speaks of them: other failures are not put on NaN
            if ("nan" in said or "missing" in said) and bool(xp.isnan(rows).any()):
                raise ValueError(
                    f"{self.name} failed on rows with missing values (NaN): it does not take them. Impute them "
                    f"first (e.g. a Pipeline starting with SimpleImputer), or explain rows without NaN. ({exc})"
                ) from exc
            raise
        try:
            out = self.backend.to_device(predicted, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{self.name} returned outputs that are not numbers ({exc}); explain a numeric output."
            ) from exc
        if out.ndim == 1:
            out = out[:, None]
        if out.ndim != 2 or out.shape[0] != rows.shape[0]:
            raise ValueError(
                f"{self.name} returned an array of shape {tuple(out.shape)} for {rows.shape[0]} rows; "
                "expected (n_rows,) or (n_rows, n_outputs)."
            )
        finite = xp.isfinite(out).all(axis=1)
        if not bool(finite.all()):
            bad = int((~finite).sum())
            raise ValueError(
                f"{self.name} returned NaN or infinity for {bad} of {out.shape[0]} rows (the first: row "
                f"{int(xp.argmin(finite))} of its input); Shapley values of such outputs are not defined. "
                + ("Its inputs had missing values: does it take NaN?" if bool(xp.isnan(rows).any()) else "")
            )
        return out


def make_model_function(
    model: Any, output: str, backend: ArrayBackend, codec: TableCodec | None = None
) -> ModelFunction:
    """Build the :class:`ModelFunction` explaining ``output`` of ``model``.

    Parameters
    ----------
    model : estimator, xgboost Booster or callable
        Fitted.
    output : {"auto", "margin", "log_odds", "probability", "predict"}
        "auto": a classifier's margin where it has one (``decision_function``, xgboost's or
        LightGBM's raw score), else its log-odds; an outlier detector's ``decision_function``; a
        regressor's ``predict``. A binary classifier
        gives one output, a multiclass one one per class.
    backend : ArrayBackend
    codec : TableCodec, optional
        Rows are codes of a raw table, decoded to a DataFrame for the model (CPU only).

    Returns
    -------
    ModelFunction

    Raises
    ------
    ValueError
        An unknown ``output``, or one the model cannot give.
    TypeError
        Neither a model nor a callable.
    sklearn.exceptions.NotFittedError
        An unfitted estimator.
    """
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}.")
    if codec is not None and backend.is_gpu:
        raise ValueError("A DataFrame with string or category columns is explained on the CPU: use device='cpu'.")
    if is_xgboost(model):
        fn = _xgboost_function(model, output, backend, codec)
    elif hasattr(model, "fit") and any(hasattr(model, m) for m in ("predict", "decision_function", "predict_proba")):
        fn = _sklearn_function(model, output, backend, codec)
    elif callable(model):
        if output not in ("auto", "predict"):
            raise ValueError(f"output={output!r} needs an estimator; a plain callable is explained as is.")
        fn = ModelFunction(model if codec is None else (lambda rows: model(codec.decode(rows))), backend, "callable")
    else:
        raise TypeError(
            f"model must be a fitted scikit-learn estimator, an xgboost model or a callable, got {type(model)!r}."
        )
    fn.name = getattr(model, "__name__", type(model).__name__) if fn.output == "callable" else type(model).__name__
    return fn


def takes_missing_values(model: Any) -> bool:
    """Whether ``model`` declares that it takes NaN: scikit-learn's ``allow_nan`` tag, or xgboost.

    Examples
    --------
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from sklearn.linear_model import Ridge
    >>> takes_missing_values(HistGradientBoostingRegressor()), takes_missing_values(Ridge())
    (True, False)
    """
    if is_xgboost(model):
        return True
    try:
        from sklearn.utils import get_tags

        return bool(get_tags(model).input_tags.allow_nan)
    except (AttributeError, TypeError, ValueError):
        return False


def is_xgboost(model: Any) -> bool:
    """Whether ``model`` is an xgboost model or Booster (by its module: xgboost need not be installed)."""
    return type(model).__module__.split(".")[0] == "xgboost"


def _log_odds(proba: Any, xp: Any = np) -> Any:
    return scipy_special(xp).logit(xp.clip(proba, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP))


def _sklearn_function(model: Any, output: str, backend: ArrayBackend, codec: TableCodec | None) -> ModelFunction:
    check_is_fitted(model)
    classifier = is_classifier(model) or hasattr(model, "predict_proba")
    margin = _margin_method(model)
    if output == "auto":
        if is_outlier_detector(model) and margin is not None:  # its score, not its ±1 label
            output = "margin"
        elif not classifier:
            output = "predict"
        elif margin is not None:
            output = "margin"
        else:
            output = "log_odds"
    if output == "margin" and margin is None:
        raise ValueError(f"output='margin' needs a decision_function, which {type(model).__name__} lacks.")
    if output in ("log_odds", "probability") and not hasattr(model, "predict_proba"):
        raise ValueError(f"output={output!r} needs predict_proba, which {type(model).__name__} lacks.")

    classes = getattr(model, "classes_", None) if classifier else None
    if output == "predict" and classes is not None and np.asarray(classes).dtype.kind not in "biuf":
        raise ValueError(
            f"output='predict' explains the predicted label, and {type(model).__name__}'s labels are not numbers "
            f"({[str(c) for c in classes][:5]}): explain output='probability', 'log_odds' or 'margin'."
        )
    names_in = getattr(model, "feature_names_in_", None)
    to_host = backend.to_numpy

    def as_input(rows: Any) -> Any:
        host = to_host(rows)
        if codec is not None:
            return codec.decode(host)
        if names_in is None:
            return host
        import pandas as pd

        return pd.DataFrame(host, columns=list(names_in), copy=False)

    if output == "predict":

        def predict(rows: Any) -> np.ndarray:
            return np.asarray(model.predict(as_input(rows)), dtype=np.float64)

    elif output == "margin":
        raw_score = cast(Callable[[Any], Any], margin)  # checked above

        def predict(rows: Any) -> np.ndarray:
            return np.asarray(raw_score(as_input(rows)), dtype=np.float64)

    else:
        transform = _log_odds if output == "log_odds" else (lambda p: p)
        two_labels = _two_labels(model)

        def predict(rows: Any) -> np.ndarray:
            proba = np.asarray(model.predict_proba(as_input(rows)), dtype=np.float64)
            if proba.ndim == 2 and proba.shape[1] == 2 and not two_labels:  # binary: the positive class only
                proba = proba[:, 1]
            return transform(proba)

    fn = ModelFunction(predict, backend, output)
    fn.output_names = _output_names_from_classes(classes)
    return fn


def _two_labels(model: Any) -> bool:
    """Whether a classifier's two probability columns are two labels' (multilabel, ``n_outputs_`` 2), not two classes'.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.neural_network import MLPClassifier
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> with warnings.catch_warnings():  # a short fit does not converge
    ...     warnings.simplefilter("ignore")
    ...     two = MLPClassifier(hidden_layer_sizes=(3,), max_iter=5).fit(X, np.c_[X[:, 0] > 0, X[:, 1] > 0])
    ...     one = MLPClassifier(hidden_layer_sizes=(3,), max_iter=5).fit(X, X[:, 0] > 0)
    >>> _two_labels(two), _two_labels(one)
    (True, False)
    """
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    return getattr(final, "n_outputs_", 1) == 2 and np.ndim(getattr(final, "classes_", [])) == 1


def _margin_method(model: Any) -> Callable[[Any], Any] | None:
    """Return the model's raw score: its ``decision_function``, a LightGBM classifier's raw score; else None."""
    if hasattr(model, "decision_function"):
        return model.decision_function
    if type(model).__module__.split(".")[0] == "lightgbm" and hasattr(model, "booster_"):
        return lambda data: model.predict(data, raw_score=True)
    return None


def _output_names_from_classes(classes: Any) -> list[str] | None:
    if classes is None or len(classes) <= 2:
        return None
    return [str(c) for c in classes]


def _xgboost_function(model: Any, output: str, backend: ArrayBackend, codec: TableCodec | None) -> ModelFunction:
    import xgboost

    if isinstance(model, xgboost.Booster):
        booster, iteration_range, classes = model, (0, 0), None
    else:
        try:
            booster = model.get_booster()
        except xgboost.core.XGBoostError as exc:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"This {type(model).__name__} instance is not fitted yet.") from exc
        iteration_range = (0, model.best_iteration + 1) if _has_best_iteration(model) else (0, 0)
        classes = getattr(model, "classes_", None)
    config = json.loads(booster.save_config())["learner"]
    objective = config["objective"]["name"]
    is_classification = objective.startswith(("binary:", "multi:"))
    if output == "auto":
        output = "margin" if is_classification else "predict"
    if output == "predict" and is_classification:
        raise ValueError("output='predict' would explain class labels; use 'margin', 'log_odds' or 'probability'.")
    if output in ("log_odds", "probability") and not is_classification:
        raise ValueError(f"output={output!r} needs a classification objective; the booster has {objective!r}.")
    device = backend.name if backend.is_gpu else "cpu"
    if config.get("generic_param", {}).get("device", "cpu") != device:  # predict where the rows are
        booster = booster.copy()
        booster.set_param({"device": device})
    # classifiers: always predict the margin and transform it here, so every objective
    # (binary:logistic/logitraw/hinge, multi:softprob/softmax) gives the same outputs
    predict_type = "margin" if is_classification or output == "margin" else "value"  # a regressor's raw score
    transform = _margin_transform(output, backend.xp)
    xp = backend.xp
    missing = getattr(model, "missing", np.nan)  # the wrapper's value read as missing (a Booster: NaN)

    def predict(rows: Any) -> Any:
        data = rows if codec is None else codec.decode(rows)
        out = booster.inplace_predict(data, iteration_range=iteration_range, predict_type=predict_type, missing=missing)
        return transform(out.astype(xp.float64))

    fn = ModelFunction(predict, backend, output)
    fn.output_names = _output_names_from_classes(classes)
    return fn


def _margin_transform(output: str, xp: Any) -> Callable[[Any], Any]:
    """Map an xgboost classifier margin (n,) binary or (n, n_classes) multiclass to ``output``."""
    if output not in ("probability", "log_odds"):
        return lambda margin: margin

    special = scipy_special(xp)

    def probability(margin: Any) -> Any:
        return special.expit(margin) if margin.ndim == 1 else special.softmax(margin, axis=1)

    if output == "probability":
        return probability

    def log_odds(margin: Any) -> Any:
        if margin.ndim == 1:  # binary margins are the log-odds
            return margin
        return _log_odds(probability(margin), xp)

    return log_odds


def _has_best_iteration(model: Any) -> bool:
    try:
        return model.best_iteration is not None
    except AttributeError:
        return False
