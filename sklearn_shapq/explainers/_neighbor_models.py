"""Read fitted k-nearest-neighbour models: their training rows, what they average, k and the distance's power.

Models: scikit-learn's ``KNeighborsRegressor`` (its prediction) and ``KNeighborsClassifier`` (its
probability), with uniform or distance weights and a Minkowski distance (Euclidean, Manhattan, any
power ≥ 1).
The training rows are read from the fitted model (not public attributes: read, then checked by the
caller against the model's outputs on every background row).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

_POWERS = {"euclidean": 2.0, "manhattan": 1.0, "l2": 2.0, "l1": 1.0, "cityblock": 1.0}
"""Minkowski powers of the metrics scikit-learn names."""


@dataclass(frozen=True)
class Neighbors:
    """A fitted k-NN model as the neighbour tables read it.

    Attributes
    ----------
    train : ndarray of shape (n_train, d)
    targets : ndarray of shape (n_train, n_outputs)
        Averaged over the k nearest: a regressor's targets, a classifier's one-hot classes (a binary
        classifier's positive class).
    k : int
    power : float
        q of the Minkowski distance (Σ_j |x_j − t_j|^q orders the training rows as the distance does).
    distance_weights : bool
        Whether the k nearest are weighed by 1 / distance (``weights="distance"``; training rows at
        distance zero, if any, alone and alike) rather than alike.
    """

    train: np.ndarray
    targets: np.ndarray
    k: int
    power: float
    distance_weights: bool = False


def extract_neighbors(model: Any, n_outputs: int, output: str) -> Neighbors:
    """Read a k-NN model's training rows and targets.

    Parameters
    ----------
    model : fitted KNeighborsRegressor or KNeighborsClassifier
    n_outputs : int
    output : str
        "predict" of a regressor, "probability" of a classifier.

    Returns
    -------
    Neighbors

    Raises
    ------
    TypeError
        ``model`` is not a k-NN model read here.
    ValueError
        Callable weights, another metric, another output (a label, log-odds), or another number of outputs.

    Examples
    --------
    >>> from sklearn.neighbors import KNeighborsRegressor
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> neighbors = extract_neighbors(KNeighborsRegressor(n_neighbors=3).fit(X, X[:, 0]), 1, "predict")
    >>> neighbors.train.shape, neighbors.targets.shape, neighbors.k, neighbors.power, neighbors.distance_weights
    ((20, 3), (20, 1), 3, 2.0, False)
    """
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    if type(model) not in (KNeighborsRegressor, KNeighborsClassifier):
        raise TypeError(f"{type(model).__name__} is not a k-nearest-neighbour model read here.")
    classifier = type(model) is KNeighborsClassifier
    if output != ("probability" if classifier else "predict"):
        raise ValueError(
            f"{type(model).__name__}'s output {output!r} is not read from its neighbours: a regressor's "
            "prediction and a classifier's probability are."
        )
    if model.weights not in ("uniform", "distance"):
        raise ValueError(
            f"k-NN models with weights={model.weights!r} are not read here (uniform and distance weights are)."
        )
    metric = model.effective_metric_
    params = {name: value for name, value in (model.effective_metric_params_ or {}).items() if value is not None}
    power = _POWERS.get(metric) if not params else None
    if metric == "minkowski" and set(params) <= {"p"}:
        power = float(params.get("p", 2.0))
    if power is None or not 1.0 <= power < np.inf:
        raise ValueError(f"k-NN models with the metric {metric!r} {params or ''} are not read here (Minkowski are).")
    if hasattr(model._fit_X, "toarray"):
        raise TypeError("a k-NN model fitted on sparse rows is not read here.")
    train = np.asarray(model._fit_X, dtype=np.float64)  # not public: read, then checked on the background
    labels = np.asarray(model._y)
    if classifier:
        if labels.ndim != 1:
            raise ValueError("a multi-output k-NN classifier is not read here.")
        targets = np.eye(len(model.classes_))[labels]
        targets = targets[:, 1:] if targets.shape[1] == 2 and n_outputs == 1 else targets
    else:
        targets = labels.reshape(labels.shape[0], -1).astype(np.float64)
    if targets.shape[1] != n_outputs:
        raise ValueError(f"the neighbours give {targets.shape[1]} outputs; the explained output has {n_outputs}.")
    return Neighbors(train, targets, int(model.n_neighbors), power, model.weights == "distance")
