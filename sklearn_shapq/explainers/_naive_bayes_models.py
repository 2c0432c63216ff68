"""Read a fitted Gaussian naive Bayes: its joint log-likelihood is a sum of one term per feature and class.

``GaussianNB``'s class scores are log P(c) + Σ_i log N(x_i; θ_ci, σ²_ci), and its probabilities their softmax
(a sigmoid of the difference for two classes). In the per-feature terms as columns, the scores are a linear
margin, so the linear path explains them: a probability or log-odds by enumeration of the coalitions, the
terms' weights ones. The caller checks the link of the margin against the model's own outputs on every
background row, as for a linear model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq.explainers._output_links import margin_links, preprocessed


def is_gaussian_naive_bayes(model: Any) -> bool:
    """Whether ``model`` is a fitted scikit-learn ``GaussianNB``."""
    return type(model).__name__ == "GaussianNB" and type(model).__module__.startswith("sklearn.naive_bayes")


class NaiveBayesTerms:
    """A Gaussian naive Bayes' per-feature terms as columns: rows (n, d) to (n, d · m), after column-wise steps.

    For two classes and one explained output (the positive class), m = 1: column i is the difference of the
    classes' terms of feature i. Otherwise m = K classes: column i · K + k is class k's term of feature i.

    Parameters
    ----------
    model : fitted GaussianNB
    n_outputs : int
        The explained outputs: a binary classifier's one, else one per class.
    steps : fitted transformer or None
        A Pipeline's column-wise steps before the model, applied first.

    Raises
    ------
    ValueError
        ``n_outputs`` is neither 1 with two classes nor the number of classes.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> terms = NaiveBayesTerms(GaussianNB().fit(X, X[:, 0] > 0), 1, None)
    >>> terms.transform(X[:2]).shape, terms.coef.shape, terms.links["probability"]
    ((2, 3), (3, 1), (OutputLink(raw_output='margin', link='sigmoid', log_odds=False, after=(1.0, 0.0)),))
    """

    def __init__(self, model: Any, n_outputs: int, steps: Any) -> None:
        n_classes = len(model.classes_)
        if not (n_outputs == n_classes or (n_outputs == 1 and n_classes == 2)):
            raise ValueError(f"GaussianNB's {n_classes} classes do not give {n_outputs} explained outputs.")
        self.means = np.asarray(model.theta_, dtype=np.float64)  # (K, d)
        self.variances = np.asarray(model.var_, dtype=np.float64)
        self.steps, self.binary = steps, n_outputs == 1
        log_prior = np.log(np.asarray(model.class_prior_, dtype=np.float64))
        self.offset = log_prior[1:] - log_prior[:1] if self.binary else log_prior
        width = 1 if self.binary else n_classes  # columns per feature
        self.coef = np.tile(np.eye(width), (self.means.shape[1], 1))  # column i · width + k weighs output k
        links = margin_links(n_outputs)
        self.links = {  # two classes' log-odds are the margin where not clipped (the path's ClippedLogOddsPath)
            "probability": (links["probability"],),
            "log_odds": (links["log_odds"],),
        }

    def transform(self, rows: np.ndarray) -> np.ndarray:
        """Return the terms (n, d · m) of ``rows`` (n, d) in the model's input units before ``steps``."""
        inputs = preprocessed(self.steps, rows)
        terms = -0.5 * (np.log(2.0 * np.pi * self.variances) + (inputs[:, None, :] - self.means) ** 2 / self.variances)
        if self.binary:
            return terms[:, 1] - terms[:, 0]
        return terms.transpose(0, 2, 1).reshape(inputs.shape[0], -1)

    def groups(self, groups: FeatureGroups) -> FeatureGroups:
        """Return the players of the term columns: each column is its feature's player."""
        return FeatureGroups(groups.names, np.repeat(groups.player_of_column, self.coef.shape[1]))
