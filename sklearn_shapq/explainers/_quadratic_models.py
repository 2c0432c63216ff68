"""Read a fitted quadratic discriminant: each class's score is a quadratic form of the row.

``QuadraticDiscriminantAnalysis`` scores class c by −½ (x − μ_c)ᵀ M_c (x − μ_c) plus a constant, with
M_c = R_c diag(1 / s_c) R_cᵀ from its rotations and scalings; its probabilities are the softmax of the
scores (a sigmoid of the difference for two classes), and its ``decision_function`` the scores (their
difference for two classes). So the margin is xᵀ A x + bᵀ x + c with A = −½ M_c and b = M_c μ_c. The
caller finds the constant (the model's margin minus the quadratic form) and checks the link of the margin
against the model's own outputs on every background row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.explainers._output_links import OutputLink


def extract_quadratic(model: Any, n_outputs: int, output: str) -> tuple[np.ndarray, np.ndarray, OutputLink]:
    """Return a quadratic discriminant's margin, A (d, d, n_outputs) and b (d, n_outputs), and the link to ``output``.

    Parameters
    ----------
    model : fitted QuadraticDiscriminantAnalysis
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
    ((3, 3, 1), (3, 1), OutputLink(raw_output='margin', link='sigmoid', log_odds=False))
    """
    name = type(model).__name__
    if not (name == "QuadraticDiscriminantAnalysis" and hasattr(model, "rotations_")):
        raise TypeError(f"{name} is not a fitted quadratic discriminant of scikit-learn.")
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
    class_link = "sigmoid" if n_outputs == 1 else "softmax"
    links = {
        "margin": OutputLink("margin", "identity"),
        "probability": OutputLink("margin", class_link),
        "log_odds": OutputLink("margin", class_link, log_odds=True),
    }
    if output not in links:
        raise ValueError(f"{name}'s output {output!r} is not read from its quadratic forms (a class label).")
    return quadratic_forms, linear_terms, links[output]
