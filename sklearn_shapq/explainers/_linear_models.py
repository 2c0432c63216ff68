"""Read fitted linear models: the weights of their margin and the links from it to the explained output.

Models: scikit-learn's ``sklearn.linear_model`` estimators with ``coef_`` (and ``RANSACRegressor``, by its
``estimator_``), ``LinearSVC``, ``LinearSVR``, ``LinearDiscriminantAnalysis`` and the partial least squares
(``PLSRegression``, ``PLSCanonical``, ``CCA``) (regressors, generalized linear models with a log
link, classifiers' margins, and a logistic classifier's or linear discriminant's probability and
log-odds). The caller finds the intercept (the model's raw output minus the weighted sum) and checks
the link of the sum against the model's own outputs on every background row: a link that does not
give them (a one-vs-rest probability, say) is never explained from the weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import is_classifier

from sklearn_shapq.explainers._output_links import OutputLink, margin_links

LINEAR_MODELS_ELSEWHERE = (
    "LinearSVC",
    "LinearSVR",
    "LinearDiscriminantAnalysis",
    "PLSRegression",
    "PLSCanonical",
    "CCA",
)
"""Linear models of scikit-learn outside ``sklearn.linear_model`` (their decision function is ``X @ coef_.T +
intercept_``, or a partial least squares' ``(X − mean) @ coef_.T + intercept_``; a discriminant's probability is the
sigmoid or softmax of it)."""


def extract_linear(model: Any, n_outputs: int, output: str) -> tuple[np.ndarray, tuple[OutputLink, ...]]:
    """Return a linear model's weights and the links from its margin that may give ``output``.

    Parameters
    ----------
    model : fitted estimator of ``sklearn.linear_model``, LinearSVC, LinearSVR or LinearDiscriminantAnalysis
    n_outputs : int
        The explained outputs: a binary classifier's one, else one per class or target.
    output : {"predict", "margin", "probability", "log_odds"}
        The explained output, resolved.

    Returns
    -------
    coef : ndarray of shape (d, n_outputs)
    links : tuple of OutputLink
        The candidates, to be checked in turn against the model's outputs: a regressor's prediction
        is its margin (identity) or, for a log-link generalized linear model, exp of it (read from the model,
        never from how the background fits: one background row fits both).

    Raises
    ------
    TypeError
        ``model`` is not a fitted linear model of scikit-learn.
    ValueError
        ``output`` is a class label, or the weights give another number of outputs.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> coef, links = extract_linear(LogisticRegression().fit(X, X[:, 0] > 0), 1, "probability")
    >>> coef.shape, links
    ((3, 1), (OutputLink(raw_output='margin', link='sigmoid', log_odds=False, after=(1.0, 0.0)),))
    """
    module, name = type(model).__module__, type(model).__name__
    if name == "RANSACRegressor" and module.startswith("sklearn.linear_model"):  # its inliers' fit predicts
        return extract_linear(model.estimator_, n_outputs, output)
    linear = module.startswith("sklearn.linear_model") or name in LINEAR_MODELS_ELSEWHERE
    if not (linear and hasattr(model, "coef_") and hasattr(model, "intercept_")):
        raise TypeError(f"{name} is not a fitted linear model of scikit-learn.")
    coef = model.coef_.toarray() if hasattr(model.coef_, "toarray") else model.coef_  # after sparsify()
    coef = np.asarray(coef, dtype=np.float64)
    coef = coef.reshape(1, -1).T if coef.ndim == 1 else coef.T
    if coef.shape[1] != n_outputs:
        raise ValueError(f"the weights give {coef.shape[1]} outputs; the explained output has {n_outputs}.")
    links: dict[str, tuple[OutputLink, ...]]
    if is_classifier(model):
        links = {name: (link,) for name, link in margin_links(n_outputs).items()}
    else:
        links = {"predict": (_regression_link(model),)}
    if output not in links:
        raise ValueError(f"{type(model).__name__}'s output {output!r} is not read from its weights (a class label).")
    return coef, links[output]


def _regression_link(model: Any) -> OutputLink:
    """Return how a linear regressor's prediction follows from its margin: exp for a log-link GLM, else itself.

    Poisson and gamma regressors have the log link; a Tweedie regressor its ``link`` ("auto": the identity
    for power ≤ 0, else the log), as scikit-learn resolves it.
    """
    from sklearn.linear_model import GammaRegressor, PoissonRegressor, TweedieRegressor

    log_link = isinstance(model, (PoissonRegressor, GammaRegressor))
    if isinstance(model, TweedieRegressor):
        log_link = model.link == "log" or (model.link == "auto" and model.power > 0)
    return OutputLink(None, "exp") if log_link else OutputLink("predict", "identity")
