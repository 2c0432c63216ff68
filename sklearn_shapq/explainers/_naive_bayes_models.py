"""Read a fitted naive Bayes: its joint log-likelihood is a sum of one term per feature and class.

scikit-learn's naive Bayes classifiers score class c by log P(c) plus a term of each feature: ``GaussianNB``
log N(x_i; θ_ci, σ²_ci); ``MultinomialNB`` and ``ComplementNB`` x_i log p_ci (``ComplementNB`` without the
prior); ``BernoulliNB`` b_i (log p_ci − log(1 − p_ci)) of the binarized b_i = [x_i > t], plus Σ_i log(1 − p_ci)
in the constant; ``CategoricalNB`` log p_ci(x_i), a table per feature. Their probabilities are the softmax of
the scores (a sigmoid of the difference for two classes). In the per-feature terms as columns, the scores are
a linear margin, so the linear path explains them: a probability or log-odds by enumeration of the
coalitions, the terms' weights ones. The caller checks the link of the margin against the model's own outputs
on every background row, as for a linear model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq.explainers._output_links import margin_links, preprocessed

NAIVE_BAYES = ("GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB")
"""scikit-learn's naive Bayes classifiers read in per-feature terms."""


def is_naive_bayes(model: Any) -> bool:
    """Whether ``model`` is one of scikit-learn's :data:`NAIVE_BAYES` classifiers."""
    return type(model).__name__ in NAIVE_BAYES and type(model).__module__.startswith("sklearn.naive_bayes")


class NaiveBayesTerms:
    """A naive Bayes' per-feature terms as columns: rows (n, d) to (n, d · m), after column-wise steps.

    For two classes and one explained output (the positive class), m = 1: column i is the difference of the
    classes' terms of feature i. Otherwise m = K classes: column i · K + k is class k's term of feature i.

    Parameters
    ----------
    model : fitted naive Bayes of :data:`NAIVE_BAYES`
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
        self.name = type(model).__name__
        if not (n_outputs == n_classes or (n_outputs == 1 and n_classes == 2)):
            raise ValueError(f"{self.name}'s {n_classes} classes do not give {n_outputs} explained outputs.")
        self.model, self.steps, self.binary = model, steps, n_outputs == 1
        log_prior = self._class_constants()
        self.offset = log_prior[1:] - log_prior[:1] if self.binary else log_prior
        width = 1 if self.binary else n_classes  # columns per feature
        self.coef = np.tile(np.eye(width), (int(model.n_features_in_), 1))  # column i · width + k weighs output k
        links = margin_links(n_outputs)
        self.links = {  # two classes' log-odds are the margin where not clipped (the path's ClippedLogOddsPath)
            "probability": (links["probability"],),
            "log_odds": (links["log_odds"],),
        }

    def _class_constants(self) -> np.ndarray:
        """Return each class's score less its features' terms (K,): its log prior, and Bernoulli's Σ log(1 − p)."""
        model = self.model
        if self.name == "GaussianNB":
            return np.log(np.asarray(model.class_prior_, dtype=np.float64))
        log_prior = np.asarray(model.class_log_prior_, dtype=np.float64)
        if self.name == "ComplementNB" and len(model.classes_) > 1:
            return np.zeros_like(log_prior)
        if self.name == "BernoulliNB":
            return log_prior + np.log(1.0 - np.exp(np.asarray(model.feature_log_prob_, dtype=np.float64))).sum(axis=1)
        return log_prior

    def _class_terms(self, inputs: np.ndarray) -> np.ndarray:
        """Return each class's term of each feature (n, K, d) of rows in the model's input units."""
        model = self.model
        if self.name == "GaussianNB":
            means, variances = np.asarray(model.theta_, dtype=np.float64), np.asarray(model.var_, dtype=np.float64)
            return -0.5 * (np.log(2.0 * np.pi * variances) + (inputs[:, None, :] - means) ** 2 / variances)
        if self.name == "CategoricalNB":  # the model reads its categories as integers
            codes = inputs.astype(np.int64)
            tables = [np.asarray(table, dtype=np.float64) for table in model.feature_log_prob_]  # (K, categories)
            return np.stack([table[:, codes[:, i]].T for i, table in enumerate(tables)], axis=2)
        log_prob = np.asarray(model.feature_log_prob_, dtype=np.float64)  # (K, d)
        if self.name == "BernoulliNB":
            weights = log_prob - np.log(1.0 - np.exp(log_prob))
            present = inputs if model.binarize is None else (inputs > model.binarize).astype(np.float64)
            return present[:, None, :] * weights
        return inputs[:, None, :] * log_prob  # multinomial and complement: counts times log-probabilities

    def transform(self, rows: np.ndarray) -> np.ndarray:
        """Return the terms (n, d · m) of ``rows`` (n, d) in the model's input units before ``steps``."""
        inputs = preprocessed(self.steps, rows)
        terms = self._class_terms(inputs)
        if self.binary:
            return terms[:, 1] - terms[:, 0]
        return terms.transpose(0, 2, 1).reshape(inputs.shape[0], -1)

    def groups(self, groups: FeatureGroups) -> FeatureGroups:
        """Return the players of the term columns: each column is its feature's player."""
        return FeatureGroups(groups.names, np.repeat(groups.player_of_column, self.coef.shape[1]))
