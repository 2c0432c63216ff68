"""Read quadratic margins: a quadratic discriminant's class scores, a linear model on degree-2 polynomial features.

An ``EllipticEnvelope``'s score (its ``decision_function``) is minus the squared Mahalanobis distance to its
location, less an offset: a quadratic margin too.

``QuadraticDiscriminantAnalysis`` scores class c by −½ (x − μ_c)ᵀ M_c (x − μ_c) plus a constant, with
M_c = R_c diag(1 / s_c) R_cᵀ from its rotations and scalings; its probabilities are the softmax of the
scores (a sigmoid of the difference for two classes), and its ``decision_function`` the scores (their
difference for two classes). So the margin is xᵀ A x + bᵀ x + c with A = −½ M_c and b = M_c μ_c. The
caller finds the constant (the model's margin minus the quadratic form) and checks the link of the margin
against the model's own outputs on every background row.

A Pipeline of column-wise steps, ``PolynomialFeatures`` of degree at most 2, affine scalers of its columns
and a linear model (:func:`~sklearn_shapq.explainers._linear_models.extract_linear`) has a quadratic margin
in the column-wise steps' outputs too: each monomial's weight goes to A (t_j t_l) or b (t_j).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.explainers._linear_models import extract_linear
from sklearn_shapq.explainers._output_links import OutputLink, column_wise_preprocessing, margin_links


def extract_quadratic(model: Any, n_outputs: int, output: str) -> tuple[np.ndarray, np.ndarray, OutputLink]:
    """Return a quadratic discriminant's margin, A (d, d, n_outputs) and b (d, n_outputs), and the link to ``output``.

    Parameters
    ----------
    model : fitted QuadraticDiscriminantAnalysis or EllipticEnvelope
    n_outputs : int
        The explained outputs: a binary classifier's one (the difference of the classes' scores), else one
        per class.
    output : {"margin", "probability", "log_odds"}
        The explained output, resolved.

    Raises
    ------
    TypeError
        ``model`` is not a fitted quadratic discriminant of scikit-learn.
    ValueError
        ``output`` is a class label, or the classes give another number of outputs.

    Examples
    --------
    >>> from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
    >>> X = np.random.default_rng(0).normal(size=(60, 3))
    >>> model = QuadraticDiscriminantAnalysis().fit(X, X[:, 0] > 0)
    >>> quadratic, linear, link = extract_quadratic(model, 1, "probability")
    >>> quadratic.shape, linear.shape, link
    ((3, 3, 1), (3, 1), OutputLink(raw_output='margin', link='sigmoid', log_odds=False, after=(1.0, 0.0)))
    """
    name = type(model).__name__
    if name == "EllipticEnvelope" and hasattr(model, "location_"):
        return _elliptic_envelope_margin(model, n_outputs, output)
    if not (name == "QuadraticDiscriminantAnalysis" and hasattr(model, "rotations_")):
        raise TypeError(f"{name} is not a fitted quadratic discriminant or elliptic envelope of scikit-learn.")
    n_classes = len(model.classes_)
    if not (n_outputs == n_classes or (n_outputs == 1 and n_classes == 2)):
        raise ValueError(f"{name}'s {n_classes} classes do not give {n_outputs} explained outputs.")
    quadratic, linear = [], []
    for rotation, scaling, mean in zip(model.rotations_, model.scalings_, model.means_, strict=True):
        metric = (np.asarray(rotation, dtype=np.float64) / np.asarray(scaling, dtype=np.float64)) @ rotation.T
        quadratic.append(-0.5 * metric)
        linear.append(metric @ np.asarray(mean, dtype=np.float64))
    quadratic_forms, linear_terms = np.stack(quadratic, axis=-1), np.stack(linear, axis=-1)
    if n_outputs == 1:  # two classes: the difference of their scores
        quadratic_forms = quadratic_forms[..., 1:] - quadratic_forms[..., :1]
        linear_terms = linear_terms[:, 1:] - linear_terms[:, :1]
    links = margin_links(n_outputs)
    if output not in links:
        raise ValueError(f"{name}'s output {output!r} is not read from its quadratic forms (a class label).")
    return quadratic_forms, linear_terms, links[output]


def _elliptic_envelope_margin(model: Any, n_outputs: int, output: str) -> tuple[np.ndarray, np.ndarray, OutputLink]:
    """Return an elliptic envelope's score as a margin: −(x − μ)ᵀ P (x − μ) less its offset, so A = −P, b = 2 P μ."""
    if output != "margin" or n_outputs != 1:
        raise ValueError(f"EllipticEnvelope's output {output!r} is not read from its precision (its score is).")
    precision = np.asarray(model.get_precision(), dtype=np.float64)
    location = np.asarray(model.location_, dtype=np.float64)
    return -precision[..., None], (2.0 * precision @ location)[:, None], OutputLink("margin", "identity")


def extract_polynomial_margin(
    model: Any, n_outputs: int, output: str
) -> tuple[Any, np.ndarray, np.ndarray, tuple[OutputLink, ...]]:
    """Return a polynomial Pipeline's column-wise steps, its margin's A (d, d, k) and b (d, k), and the links.

    Parameters
    ----------
    model : fitted Pipeline
        Column-wise steps, ``PolynomialFeatures`` (degree at most 2), scalers of its columns
        (``StandardScaler``, ``MaxAbsScaler``, ``MinMaxScaler``) and a linear model.
    n_outputs : int
    output : str
        The explained output, resolved.

    Returns
    -------
    preprocessing : fitted transformer or None
        The column-wise steps before ``PolynomialFeatures``: the margin is quadratic in their outputs.
    quadratic, linear : ndarray
    links : tuple of OutputLink
        The candidates from the linear model, to be checked in turn against the model's outputs.

    Raises
    ------
    TypeError
        ``model`` is no such Pipeline.
    ValueError
        A degree above 2, or what :func:`extract_linear` refuses.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import PolynomialFeatures
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> model = make_pipeline(PolynomialFeatures(2), LogisticRegression()).fit(X, X[:, 0] * X[:, 1] > 0)
    >>> _, quadratic, linear, links = extract_polynomial_margin(model, 1, "probability")
    >>> quadratic.shape, linear.shape, links
    ((2, 2, 1), (2, 1), (OutputLink(raw_output='margin', link='sigmoid', log_odds=False, after=(1.0, 0.0)),))
    """
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    found = _polynomial_steps(model)
    if len(found) != 1:
        raise TypeError(f"{type(model).__name__} is not a Pipeline with one PolynomialFeatures step.")
    steps, at = model.steps, found[0]
    preprocessing, polynomial = column_wise_preprocessing(model[: at + 1]) if at else (None, steps[0][1])
    powers = np.asarray(polynomial.powers_)
    if powers.sum(axis=1).max(initial=0) > 2:
        raise ValueError(f"PolynomialFeatures of degree {int(powers.sum(axis=1).max())} is not read (at most 2 is).")
    scale = np.ones(powers.shape[0])  # of each polynomial column through the affine scalers after it
    for name, step in steps[at + 1 : -1]:
        if type(step) not in (StandardScaler, MaxAbsScaler, MinMaxScaler) and step not in (None, "passthrough"):
            raise TypeError(
                f"The Pipeline's step {name!r} ({type(step).__name__}) after PolynomialFeatures is not read "
                "(affine scalers are)."
            )
        if step not in (None, "passthrough"):
            zeros, ones = np.zeros((1, powers.shape[0])), np.ones((1, powers.shape[0]))
            scale *= (step.transform(ones) - step.transform(zeros))[0]  # affine: the slope of each column
    coef, links = extract_linear(steps[-1][1], n_outputs, output)
    weights = coef * scale[:, None]
    d, k = powers.shape[1], weights.shape[1]
    quadratic, linear = np.zeros((d, d, k)), np.zeros((d, k))
    for monomial, weight in zip(powers, weights, strict=True):
        columns = np.repeat(np.arange(d), monomial)  # t_j t_l: (j, l); t_j: (j,); the constant: ()
        if columns.size == 2:
            quadratic[columns[0], columns[1]] += weight
        elif columns.size == 1:
            linear[columns[0]] += weight
    return preprocessing, quadratic, linear, links


def has_polynomial_features(model: Any) -> bool:
    """Whether ``model`` is a Pipeline with a ``PolynomialFeatures`` step (:func:`extract_polynomial_margin`)."""
    return bool(_polynomial_steps(model))


def _polynomial_steps(model: Any) -> list[int]:
    """Return the indices of a Pipeline's ``PolynomialFeatures`` steps; another model: none."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import PolynomialFeatures

    steps = model.steps if isinstance(model, Pipeline) else []
    return [i for i, (_, step) in enumerate(steps) if type(step) is PolynomialFeatures]
