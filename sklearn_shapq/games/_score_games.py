"""Global score games: cross-validated refits on S (:class:`RetrainGame`) or a fitted model marginalised off S."""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from typing import Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_classifier
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv

from sklearn_shapq.games._game import Game
from sklearn_shapq.games._interventional import InterventionalGame


class _ScoreGame(Game):
    """A global game of scores: a repeated coalition is looked up, not recomputed, but still counted."""

    def __init__(self, n_players: int, n_jobs: int | None) -> None:
        super().__init__(n_players, 1)
        self.n_jobs = n_jobs
        self._memo: dict[bytes, float] = {}

    def evaluate(self, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        keys = [np.packbits(mask).tobytes() for mask in masks]  # a loop over a call's few coalitions
        todo = {key: mask for key, mask in zip(keys, masks, strict=True) if key not in self._memo}
        if todo:
            new = np.stack(list(todo.values()))
            scores = self._scores(new)
            bad = ~np.isfinite(scores)
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                raise ValueError(self._undefined_score(new[first], float(scores[first])))
            self._memo.update(zip(todo, scores, strict=True))
        return np.array([self._memo[key] for key in keys])[:, None]

    @abstractmethod
    def _scores(self, masks: np.ndarray) -> list[float]:
        """Scores of distinct new coalitions ``masks`` (m, d)."""

    @abstractmethod
    def _undefined_score(self, mask: np.ndarray, score: float) -> str:
        """Return the error message for a coalition ``mask`` whose score came out NaN or infinite."""

    @property
    def n_unique(self) -> int:
        """Distinct coalitions scored so far."""
        return len(self._memo)


_TASKS_PER_WORKER = 2
"""Tasks a call's new coalitions are split into per parallel worker (a task scores several)."""


class RetrainGame(_ScoreGame):
    """v(S): mean cross-validated score of ``clone(estimator)`` trained on the features in S.

    v(∅) is the score of a constant predictor on the same folds. A score depends on its coalition
    and the parameters alone, never on the joblib backend, worker or order: with ``seed`` every
    ``random_state`` of the clone is :func:`coalition_seed` of (seed, coalition), and under
    several jobs its ``n_jobs`` left at None become 1.

    Parameters
    ----------
    estimator : estimator
        Unfitted; cloned for every fit.
    X : ndarray of shape (n, d)
    y : array-like of shape (n,)
    cv : int, splitter or iterable
        As in ``cross_val_score``; the folds are drawn once.
    scoring : str, callable or None
        As in ``cross_val_score`` (None: accuracy for classifiers, R² otherwise).
    n_jobs : int or None
        Coalitions of one call scored in parallel by joblib's active backend.
    memory : joblib.Memory or None
        Scores cached on disk across games of the same data, estimator, folds, scoring and seed.
    seed : int or None, default=None
        Seed of the refits' ``random_state``; None leaves the estimator's as it is.
    """

    def __init__(
        self,
        estimator: Any,
        X: np.ndarray,
        y: Any,
        cv: Any,
        scoring: Any,
        n_jobs: int | None,
        memory: Any = None,
        seed: int | None = None,
    ) -> None:
        classifier = is_classifier(estimator)
        folds = list(check_cv(cv, y, classifier=classifier).split(X, y))
        self._default_scoring = scoring is None
        if scoring is None:  # the estimator's own score, which the dummy must share
            scoring = "accuracy" if classifier else "r2"
        super().__init__(X.shape[1], n_jobs)
        self.estimator = estimator
        self.X, self.y = X, y
        self.cv = cv
        self.folds = folds
        self.scoring = scoring
        self.scorer = check_scoring(estimator, scoring=scoring)
        self.dummy = DummyClassifier(strategy="prior") if classifier else DummyRegressor()
        self.seed = seed
        self._models = {  # by whether a coalition is non-empty: the model and whether it takes a seed
            nonempty: (model, bool(_params_named(model.get_params(deep=True), "random_state")))
            for nonempty, model in ((True, estimator), (False, self.dummy))
        }
        self._score = (
            cross_validated_score if memory is None else memory.cache(cross_validated_score, ignore=["single_threaded"])
        )

    def _task(self, mask: np.ndarray) -> tuple[Any, np.ndarray, int | None]:
        """Model, coalition and seed of a coalition's refits (no seed for a model without one)."""
        model, seeded = self._models[bool(mask.any())]
        return model, mask, coalition_seed(self.seed, mask) if seeded and self.seed is not None else None

    def _scores(self, masks: np.ndarray) -> list[float]:
        n_workers = effective_n_jobs(self.n_jobs)
        tasks = [self._task(mask) for mask in masks]
        batches = np.array_split(np.arange(len(tasks)), min(len(tasks), _TASKS_PER_WORKER * n_workers))
        scores = Parallel(n_jobs=self.n_jobs)(
            delayed(_score_tasks)(
                self._score, [tasks[i] for i in batch], self.X, self.y, self.folds, self.scorer, n_workers > 1
            )
            for batch in batches
        )
        return [score for batch in scores for score in batch]

    def _undefined_score(self, mask: np.ndarray, score: float) -> str:
        smallest = min(len(test) for _, test in self.folds)
        if smallest < 2:
            why = (
                "a fold of cv tests on a single row, where scores such as R² are undefined: use folds with more than "
                "one test row (e.g. cv=5) or another scoring."
            )
        else:
            why = (
                "the score is undefined on some fold (e.g. ROC AUC on a fold with one class): use a scoring that is "
                "defined on every fold, or other folds (e.g. stratified)."
            )
        return (
            f"{_scoring_text(self.scoring, self._default_scoring)} gave {_number(score)} on a fold of cv={self.cv!r} "
            f"({_coalition_text(mask)}): {why}"
        )


def _scoring_text(scoring: Any, default: bool) -> str:
    """``scoring=...`` as the user gave it, for messages."""
    return f"scoring=None (the default, {scoring!r})" if default else f"scoring={scoring!r}"


def _number(score: float) -> str:
    """Write a score as a message says it (NaN, inf, -inf)."""
    return "NaN" if np.isnan(score) else str(score)


def _coalition_text(mask: np.ndarray) -> str:
    """Say a coalition in words, for messages."""
    if not mask.any():
        return "the empty coalition, scored by a constant predictor"
    if mask.all():
        return "all features"
    return f"the features {np.flatnonzero(mask).tolist()}"


def coalition_seed(seed: int, mask: np.ndarray) -> int:
    """Seed in [0, 2^31) of a coalition's refits, from ``seed`` and the coalition's mask alone.

    A BLAKE2b hash of ``seed`` and the mask (d,); 31 bits suit every library's ``random_state``.

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.array([True, False, True])
    >>> coalition_seed(0, mask) == coalition_seed(0, mask.copy()), coalition_seed(0, mask) == coalition_seed(1, mask)
    (True, False)
    """
    digest = hashlib.blake2b(
        int(seed).to_bytes(8, "little") + np.ascontiguousarray(mask, dtype=bool).tobytes(), digest_size=4
    ).digest()
    return int.from_bytes(digest, "little") >> 1


def _score_tasks(
    score: Any, tasks: list, X: np.ndarray, y: Any, folds: list, scorer: Any, single_threaded: bool
) -> list[float]:
    """Scores of several coalitions ``tasks`` [(model, mask, seed)] in one joblib task."""
    return [score(model, X, y, mask, folds, scorer, seed, single_threaded) for model, mask, seed in tasks]


def cross_validated_score(
    model: Any,
    X: np.ndarray,
    y: Any,
    mask: np.ndarray,
    folds: list,
    scorer: Any,
    seed: int | None = None,
    single_threaded: bool = False,
) -> float:
    """Mean score over ``folds`` of clones of ``model`` fitted on the columns ``mask`` of X.

    A plain loop (``cross_val_score``'s overhead is twice a small fit); an empty ``mask`` fits the
    first column for the constant predictor. ``seed`` and ``single_threaded`` as in :class:`RetrainGame`.
    """
    values = model.get_params(deep=True)
    params = {}
    if seed is not None:
        params.update(dict.fromkeys(_params_named(values, "random_state"), seed))
    if single_threaded:
        params.update({key: 1 for key in _params_named(values, "n_jobs") if values[key] is None})
    columns = X[:, mask] if mask.any() else X[:, :1]
    scores = []
    for train, test in folds:
        fitted = clone(model).set_params(**params).fit(columns[train], _rows(y, train))
        scores.append(scorer(fitted, columns[test], _rows(y, test)))
    return float(np.mean(scores))


def _params_named(params: dict, name: str) -> list[str]:
    """Keys of an estimator's parameters ``params`` (``get_params(deep=True)``) called ``name``."""
    return [key for key in params if key == name or key.endswith(f"__{name}")]


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

    Predictions (or class probabilities) are averaged over the background, then scored; no refits.

    Parameters
    ----------
    game : InterventionalGame
        The model (output "predict" or "probability") and background; its explained rows are X (n, d).
    y : array-like of shape (n,)
    scoring : str, callable or None
        None: accuracy for classifiers, R² for regressors.
    classes : array or None
        The classifier's ``classes_``.
    """

    def __init__(self, game: InterventionalGame, y: Any, scoring: Any, classes: Any) -> None:
        super().__init__(game.n_players, None)
        self.game = game
        self.X = game.backend.to_numpy(game.x)
        self.y = y
        wrapper = _MarginalRegressor(None) if classes is None else _MarginalClassifier(None, classes)  # type: ignore[arg-type]
        self.scorer = check_scoring(wrapper, scoring=scoring)
        self.scoring = scoring
        self.classes = classes

    def _scores(self, masks: np.ndarray) -> list[float]:
        game = self.game  # one batched model pass for all new coalitions of a call
        n_rows = game.n_games
        coalitions = game.backend.to_device(np.broadcast_to(masks, (n_rows, *masks.shape)))
        outputs = game.backend.to_numpy(game.grid(game.backend.xp.arange(n_rows), coalitions))
        return [self._score_outputs(out) for out in outputs.transpose(1, 0, 2)]

    def _score_outputs(self, outputs: np.ndarray) -> float:
        outputs = outputs[:, 0] if outputs.shape[1] == 1 else outputs
        if self.classes is None:
            model: _MarginalModel = _MarginalRegressor(outputs)
        else:
            model = _MarginalClassifier(outputs, self.classes)
        return float(self.scorer(model, self.X, self.y))

    def _undefined_score(self, mask: np.ndarray, score: float) -> str:
        n_rows = len(self.y)
        if n_rows < 2:
            why = (
                "scores such as R² are undefined on a single row: score on more rows (TopKShapley: a larger "
                "background_size) or use another scoring."
            )
        else:
            why = "use a scoring that is defined on these rows (e.g. ROC AUC needs both classes among them)."
        default = "accuracy" if self.classes is not None else "r2"
        scoring = _scoring_text(default if self.scoring is None else self.scoring, self.scoring is None)
        coalition = _coalition_text(mask)
        return f"{scoring} gave {_number(score)} on the {n_rows} rows the marginal game scores ({coalition}): {why}"
