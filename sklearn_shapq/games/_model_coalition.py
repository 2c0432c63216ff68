"""Coalition games of models: local interventional games of rows, and global score games.

- :class:`LocalModelGame`: v_x(S) = mean_z f(x_S, z_{N∖S}) for each explained row x (one game per
  row), through an :class:`InterventionalGame`, so the model is called on large batches.
- :class:`RetrainGame`: v(S) = cross-validated score of a clone of an estimator trained on the
  features in S (the paper's global games); v(∅) is the score of a constant predictor.
- :class:`MarginalScoreGame`: v(S) = score of a fitted model whose absent features are
  marginalised over a background (no refits).
"""

from __future__ import annotations

import pickle
from abc import abstractmethod
from collections import OrderedDict
from typing import Any

import joblib
import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_classifier
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv

from sklearn_shapq.games._coalition import CoalitionGame
from sklearn_shapq.games._interventional import InterventionalGame


class LocalModelGame(CoalitionGame):
    """One interventional game per explained row, evaluated through an :class:`InterventionalGame`.

    Parameters
    ----------
    game : InterventionalGame
        Model and background on a backend.
    x : array of shape (n_rows, d)
        Explained rows (host array; moved to the backend here).
    outputs : int array of shape (n_rows,)
        Which model output each row's game is.
    """

    def __init__(self, game: InterventionalGame, x: np.ndarray, outputs: np.ndarray) -> None:
        super().__init__(x.shape[1], x.shape[0])
        self.game = game
        self.x = game.backend.to_device(x)
        self.outputs = np.asarray(outputs, dtype=np.intp)

    def evaluate(self, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        backend = self.game.backend
        rows = backend.to_device(games)
        values = self.game(self.x[rows], backend.to_device(masks)[:, None, :])[:, 0, :]
        return backend.to_numpy(values)[np.arange(masks.shape[0]), self.outputs[games]]


_SHARED_SCORES: OrderedDict[str, dict[bytes, float]] = OrderedDict()
_SHARED_GAMES = 8
"""Retrain games whose scores are kept for later games on the same data and estimator."""


def _shared_scores(key: str) -> dict[bytes, float]:
    """Scores memo of the retrain game ``key`` (a hash of everything a score depends on), LRU."""
    memo = _SHARED_SCORES.pop(key, {})
    _SHARED_SCORES[key] = memo
    while len(_SHARED_SCORES) > _SHARED_GAMES:
        _SHARED_SCORES.popitem(last=False)
    return memo


class _ScoreGame(CoalitionGame):
    """A global game whose coalition values are scores; a value is computed once per coalition.

    The scores are deterministic, so a repeated coalition is looked up instead of recomputed;
    it is still counted (and charged to a budget) as an evaluation, as in the paper.
    """

    def __init__(self, n_players: int, n_jobs: int | None, memo: dict[bytes, float] | None = None) -> None:
        super().__init__(n_players)
        self.n_jobs = n_jobs
        self._memo: dict[bytes, float] = {} if memo is None else memo

    def evaluate(self, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        keys = [np.packbits(mask).tobytes() for mask in masks]
        todo = {key: mask for key, mask in zip(keys, masks, strict=True) if key not in self._memo}
        if todo:
            self._memo.update(zip(todo, self._scores(np.stack(list(todo.values()))), strict=True))
        return np.array([self._memo[key] for key in keys])

    @abstractmethod
    def _scores(self, masks: np.ndarray) -> list[float]:
        """Scores of distinct new coalitions ``masks`` (m, d)."""

    @property
    def n_unique(self) -> int:
        """Distinct coalitions in the scores memo (shared with earlier games on the same data)."""
        return len(self._memo)


class RetrainGame(_ScoreGame):
    """v(S): mean cross-validated score of ``clone(estimator)`` trained on the features in S.

    v(∅) is the score of a constant predictor (``DummyClassifier(strategy="prior")`` or
    ``DummyRegressor()``) on the same folds. Scores are kept (for the 8 most recent data sets)
    and reused by later games with the same data, estimator (class and parameters), folds and
    scoring, so refitting a selector for another k (GridSearchCV) costs little; an estimator
    that is not deterministic (``random_state=None``) is scored once per coalition. Lambdas
    (which cannot be hashed) turn the sharing off.

    Parameters
    ----------
    estimator : estimator
        Unfitted (it is cloned for every fit).
    X : ndarray of shape (n, d)
    y : array-like of shape (n,)
    cv : int, splitter or iterable
        As in ``cross_val_score``; the folds are drawn once, so every coalition sees the same.
    scoring : str, callable or None
        As in ``cross_val_score`` (None: accuracy for classifiers, R² otherwise, which is what
        their ``score`` computes and what the constant predictor of v(∅) can share).
    n_jobs : int or None
        Coalitions of one call scored in parallel.
    """

    def __init__(self, estimator: Any, X: np.ndarray, y: Any, cv: Any, scoring: Any, n_jobs: int | None) -> None:
        classifier = is_classifier(estimator)
        folds = list(check_cv(cv, y, classifier=classifier).split(X, y))
        if scoring is None:  # the estimator's own score, which the dummy must share
            scoring = "accuracy" if classifier else "r2"
        try:  # the class and parameters of the estimator, the data, folds and scoring
            memo = _shared_scores(joblib.hash((X, np.asarray(y), clone(estimator), folds, scoring)))
        except (pickle.PicklingError, TypeError, AttributeError):  # lambdas: scores are not shared
            memo = None
        super().__init__(X.shape[1], n_jobs, memo)
        self.estimator = estimator
        self.X, self.y = X, y
        self.folds = folds
        self.scoring = scoring
        self.scorer = check_scoring(estimator, scoring=scoring)
        self.dummy = DummyClassifier(strategy="prior") if classifier else DummyRegressor()

    def _scores(self, masks: np.ndarray) -> list[float]:
        return Parallel(n_jobs=self.n_jobs)(delayed(self._score)(mask) for mask in masks)

    def _score(self, mask: np.ndarray) -> float:
        """Mean score over the folds (a plain loop: ``cross_val_score``'s overhead is 2x a small fit)."""
        empty = not mask.any()
        model = self.dummy if empty else self.estimator
        columns = self.X[:, :1] if empty else self.X[:, mask]
        scores = []
        for train, test in self.folds:
            fitted = clone(model).fit(columns[train], _rows(self.y, train))
            scores.append(self.scorer(fitted, columns[test], _rows(self.y, test)))
        return float(np.mean(scores))


def _rows(y: Any, index: np.ndarray) -> Any:
    return y.iloc[index] if hasattr(y, "iloc") else np.asarray(y)[index]


class _MarginalModel(BaseEstimator):
    """A fitted model's outputs for one coalition, averaged over a background (for scorers)."""

    def __init__(self, outputs: np.ndarray, classes: Any = None) -> None:
        self.outputs = outputs
        self.classes = classes

    def fit(self, X: Any = None, y: Any = None) -> _MarginalModel:
        """Do nothing: the outputs are given (scorers require a fit method)."""
        return self

    def predict(self, X: Any) -> np.ndarray:
        if self.classes is None:
            return self.outputs
        return np.asarray(self.classes)[self.predict_proba(X).argmax(axis=1)]


class _MarginalClassifier(ClassifierMixin, _MarginalModel):
    @property
    def classes_(self) -> np.ndarray:
        return np.asarray(self.classes)

    def predict_proba(self, X: Any) -> np.ndarray:
        proba = self.outputs
        return np.column_stack([1.0 - proba, proba]) if proba.ndim == 1 else proba


class _MarginalRegressor(RegressorMixin, _MarginalModel):
    pass


class MarginalScoreGame(_ScoreGame):
    """v(S): score of a fitted model on (X, y) with the features outside S marginalised.

    The model's predictions (regressors) or class probabilities (classifiers) for x_S completed by
    each background row are averaged over the background, then scored; no model is refitted.
    v(∅) scores the mean prediction over the background for every row.

    Parameters
    ----------
    game : InterventionalGame
        The fitted model (output "predict" or "probability") and the background.
    X : ndarray of shape (n, d)
        Rows the score is computed on.
    y : array-like of shape (n,)
    scoring : str, callable or None
        A scorer name or callable (None: accuracy for classifiers, R² for regressors).
    classes : array or None
        The classifier's ``classes_`` (None for a regressor).
    """

    def __init__(self, game: InterventionalGame, X: np.ndarray, y: Any, scoring: Any, classes: Any) -> None:
        super().__init__(X.shape[1], None)
        self.game = game
        self.X, self.y = X, y
        wrapper = _MarginalRegressor(None) if classes is None else _MarginalClassifier(None, classes)
        self.scorer = check_scoring(wrapper, scoring=scoring)
        self.classes = classes

    def _scores(self, masks: np.ndarray) -> list[float]:
        backend = self.game.backend  # one batched model pass for all new coalitions of a call
        x = backend.to_device(self.X)
        outputs = backend.to_numpy(self.game(x, backend.to_device(np.broadcast_to(masks, (len(x), *masks.shape)))))
        return [self._score_outputs(out) for out in outputs.transpose(1, 0, 2)]

    def _score_outputs(self, outputs: np.ndarray) -> float:
        outputs = outputs[:, 0] if outputs.shape[1] == 1 else outputs
        if self.classes is None:
            model: _MarginalModel = _MarginalRegressor(outputs)
        else:
            model = _MarginalClassifier(outputs, self.classes)
        return float(self.scorer(model, self.X, self.y))
