"""``TopKShapley``: the k features with the largest Shapley values, as a selector and an explainer."""

from __future__ import annotations

import time
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.feature_selection import SelectorMixin
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from sklearn_shapq._explanation import make_explanation
from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import check_positive_int, default_feature_names
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.estimators import PAC_METHODS, TOPK_METHODS, top_k_shapley
from sklearn_shapq.games import (
    CoalitionGame,
    InterventionalGame,
    LocalModelGame,
    MarginalScoreGame,
    RetrainGame,
    make_model_function,
)

GAMES = ("retrain", "marginal")
RANKINGS = ("auto", "signed", "absolute")
_PAC_BUDGET_PER_PLAYER = 2000
_BUDGET_PER_PLAYER = 20
"""Rounds of d + 1 evaluations that "auto" adds to the warm-up's t_min."""
_PAIR_STATE_BYTES = 2**26
"""Memory for the per-row pair statistics of Greedy CMCS when explaining many rows at once."""


class _ProgressGame(CoalitionGame):
    """Delegates to a game and advances a progress bar by the coalitions evaluated."""

    def __init__(self, game: CoalitionGame, bar: Any) -> None:
        super().__init__(game.n_players, game.n_games)
        self.game, self.bar = game, bar

    def evaluate(self, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        values = self.game(masks, games)
        self.bar.update(masks.shape[0])
        return values


class TopKShapley(SelectorMixin, BaseEstimator):
    """Find the k features with the largest Shapley values in few evaluations (CMCS).

    Comparable Marginal Contributions Sampling (Kolpaczki, Nielen & Hüllermeier, 2025) samples
    every feature's marginal contribution on the same coalitions, so that features are compared
    like for like; Greedy CMCS then spends evaluations on the pairs whose order is still in doubt,
    and CMCS@K on the two features at the border of the top-k, until confidence bounds separate
    (PAC mode). Two uses:

    - **Selector** (``fit(X, y)``, ``transform``): the game is global. ``game="retrain"``:
      v(S) is the cross-validated score of a clone of ``estimator`` trained on the features in S
      (v(∅): a constant predictor), as in the paper. ``game="marginal"``: v(S) is the score of
      the fitted estimator with the features outside S marginalised over a background (no
      refits; cheaper, but it measures what the model uses, not what the data offer). The
      selector keeps the top k by signed value: features that lower the score are not wanted.
    - **Local explainer** (``explain(X)``): per row x, the interventional game
      v_x(S) = mean_z f(x_S, z_{N∖S}) of the fitted estimator over the background from ``fit``;
      every row is explained in lockstep, with batched model calls. The top k is taken by
      magnitude: what drove this prediction, up or down.

    Parameters
    ----------
    estimator : estimator or None, default=None
        The model. None: ``RidgeCV`` for a continuous target, else a standardised
        ``LogisticRegression``.
    k : int, default=5
        Number of features sought (1 <= k <= d).
    method : str, default="greedy_cmcs"
        "greedy_cmcs", "cmcs", "cmcs_at_k", or a baseline: "permutation" (ApproShapley),
        "sampling_shap_at_k", "svarm", "stratified_svarm".
    max_evals : int or "auto", default="auto"
        Evaluations of the game (per row for ``explain``), v(∅) and v(N) included; with
        ``game="retrain"`` each is one cross-validation. "auto": 2 + (t_min + 20) (d + 1), the
        CMCS warm-up of t_min rounds of d + 1 evaluations and 20 rounds' worth of adaptive
        sampling; in PAC mode a safety cap of 2000 (d + 1). A budget below the warm-up warns.
    epsilon : float or None, default=None
        PAC mode: stop once max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i <= epsilon, in the units of
        the game (score units for the selector). Methods "cmcs", "greedy_cmcs", "cmcs_at_k",
        "sampling_shap_at_k".
    delta : float, default=0.01
        Error probability of the confidence bounds.
    t_min : int, default=30
        Warm-up rounds before bounds are trusted and adaptive sampling starts.
    game : {"retrain", "marginal"}, default="retrain"
        The selector's global game (see above).
    cv : int, splitter or iterable, default=5
        Folds of the "retrain" game (drawn once; every coalition sees the same folds).
    scoring : str, callable or None, default=None
        Score of the global game (None: accuracy for classifiers, R² for regressors).
    background_size : int or None, default=100
        Rows of ``fit``'s X kept as background (a reproducible subsample; None keeps all); the
        "marginal" game also scores on these rows.
    prefit : bool, default=False
        ``estimator`` is already fitted: it is used as is (and kept by ``clone``); ``fit`` then
        accepts y=None, which skips the global game and only prepares ``explain``.
    ranking : {"auto", "signed", "absolute"}, default="auto"
        Which values the top-k is taken over: "auto" is signed for the selector's global game
        and absolute for local explanations.
    output : {"auto", "margin", "log_odds", "probability", "predict"}, default="auto"
        What ``explain`` explains (see :class:`PermutationShapExplainer`).
    target : label, int or None, default=None
        For a model with several outputs, the one ``explain`` explains: a class label of a
        multiclass classifier, else an output index; None takes each row's predicted class.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where ``explain``'s masked rows are built (numba on cpu, cupy on cuda).
    batch_size : int or "auto", default="auto"
        Most model rows per model call in ``explain`` and the "marginal" game.
    n_jobs : int or None, default=None
        Coalitions of the "retrain" game cross-validated in parallel (joblib).
    random_state : None, int, Generator or RandomState, default=None
    progress : bool, default=False
        Show a progress bar over evaluations.

    Attributes
    ----------
    estimator_ : estimator
        The fitted model (``estimator`` itself when ``prefit``).
    top_k_ : ndarray of int
        After ``fit``: (k,) indices of the selected features, best first. After ``explain``:
        (n_rows, k), each row's top k by magnitude.
    support_ : ndarray of bool, shape (d,)
    shapley_values_, stderr_ : ndarray of shape (d,)
        Estimated Shapley values of the global game and their standard errors (the adaptive
        methods are only asymptotically unbiased).
    n_evals_ : int or ndarray of shape (n_rows,)
        Evaluations used by ``fit``'s game, or per row by the last ``explain``.
    pac_satisfied_ : bool or ndarray of shape (n_rows,)
        Whether the confidence bounds of the top k and the rest are separated by at most
        ``epsilon`` (0 in fixed-budget mode) at the end.
    empty_value_, full_value_ : float
        v(∅) and v(N) of the global game.
    background_ : ndarray of shape (N, d)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X is a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 8))
    >>> y = 3 * X[:, 0] + 2 * X[:, 3] - 2 * X[:, 5] + 0.1 * rng.normal(size=300)
    >>> selector = TopKShapley(LinearRegression(), k=2, cv=3, max_evals=400, random_state=0)
    >>> sorted(selector.fit(X, y).get_support(indices=True).tolist())
    [0, 3]
    >>> explanation = selector.explain(X[:2])
    >>> explanation.values.shape, selector.top_k_.shape
    ((2, 8), (2, 2))
    """

    def __init__(
        self,
        estimator: Any = None,
        *,
        k: int = 5,
        method: str = "greedy_cmcs",
        max_evals: int | str = "auto",
        epsilon: float | None = None,
        delta: float = 0.01,
        t_min: int = 30,
        game: str = "retrain",
        cv: Any = 5,
        scoring: Any = None,
        background_size: int | None = 100,
        prefit: bool = False,
        ranking: str = "auto",
        output: str = "auto",
        target: Any = None,
        device: str = "cpu",
        batch_size: int | str = "auto",
        n_jobs: int | None = None,
        random_state: Any = None,
        progress: bool = False,
    ) -> None:
        self.estimator = estimator
        self.k = k
        self.method = method
        self.max_evals = max_evals
        self.epsilon = epsilon
        self.delta = delta
        self.t_min = t_min
        self.game = game
        self.cv = cv
        self.scoring = scoring
        self.background_size = background_size
        self.prefit = prefit
        self.ranking = ranking
        self.output = output
        self.target = target
        self.device = device
        self.batch_size = batch_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    def __sklearn_clone__(self) -> Any:
        """Clone the parameters; a prefit estimator is kept as is (it is what is explained)."""
        params = {key: clone(value, safe=False) for key, value in self.get_params(deep=False).items()}
        if self.prefit:
            params["estimator"] = self.estimator
        return type(self)(**params)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = not self.prefit
        tags.non_deterministic = self.random_state is None
        return tags

    # ------------------------------------------------------------------ validation

    def _check_params(self, d: int) -> None:
        if self.method not in TOPK_METHODS:
            raise ValueError(f"method must be one of {TOPK_METHODS}, got {self.method!r}.")
        if isinstance(self.k, bool) or not isinstance(self.k, Integral) or not 1 <= self.k <= d:
            raise ValueError(f"k must be an int between 1 and the number of features {d}, got {self.k!r}.")
        if self.game not in GAMES:
            raise ValueError(f"game must be one of {GAMES}, got {self.game!r}.")
        if self.ranking not in RANKINGS:
            raise ValueError(f"ranking must be one of {RANKINGS}, got {self.ranking!r}.")
        if self.epsilon is not None:
            if not (isinstance(self.epsilon, Real) and self.epsilon >= 0):
                raise ValueError(f"epsilon must be None or a number >= 0, got {self.epsilon!r}.")
            if self.method not in PAC_METHODS:
                raise ValueError(f"epsilon (PAC mode) needs one of the methods {PAC_METHODS}, got {self.method!r}.")
        if self.max_evals != "auto":
            check_positive_int(self.max_evals, "max_evals", minimum=2)
        if self.background_size is not None:
            check_positive_int(self.background_size, "background_size")
        if self.batch_size != "auto":
            check_positive_int(self.batch_size, "batch_size")

    def _budget(self, d: int) -> int:
        if self.max_evals != "auto":
            return int(self.max_evals)
        if self.epsilon is not None:
            return _PAC_BUDGET_PER_PLAYER * (d + 1)
        return 2 + (self.t_min + _BUDGET_PER_PLAYER) * (d + 1)

    def _ranking(self, local: bool) -> str:
        if self.ranking != "auto":
            return self.ranking
        return "absolute" if local else "signed"

    def _estimate(self, game: CoalitionGame, local: bool, rng: np.random.Generator) -> Any:
        budget = self._budget(game.n_players)
        with tqdm(total=budget * game.n_games, disable=not self.progress, desc="evaluating", unit="eval") as bar:
            return top_k_shapley(
                _ProgressGame(game, bar) if self.progress else game,
                self.k,
                self.method,
                max_evals=budget,
                epsilon=self.epsilon,
                delta=self.delta,
                t_min=self.t_min,
                ranking=self._ranking(local),
                random_state=rng,
            )

    # ------------------------------------------------------------------ fit: the global game

    def _default_estimator(self, y: Any) -> Any:
        if self.estimator is not None:
            return self.estimator
        if y is not None and type_of_target(y) in ("binary", "multiclass"):
            return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        return RidgeCV()

    def fit(self, X: Any, y: Any = None) -> TopKShapley:
        """Fit the estimator, keep a background and find the top k of the global game.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
        y : array-like of shape (n,), optional
            Needed unless ``prefit=True`` (which then only prepares ``explain``).

        Returns
        -------
        self
        """
        if y is None and not self.prefit:
            raise ValueError(
                "TopKShapley requires y to be passed: the estimator is trained and the features are "
                "scored against it. Pass y, or a fitted estimator with prefit=True to explain rows only."
            )
        if y is None:
            X = validate_data(self, X, dtype=np.float64)
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        self._check_params(X.shape[1])
        estimator = self._default_estimator(y)
        if self.prefit:
            check_is_fitted(estimator, msg="prefit=True, but %(name)s is not fitted: fit it first or set prefit=False.")
            self.estimator_ = estimator
        else:
            self.estimator_ = clone(estimator).fit(X, y)
        rng = make_generator(self.random_state, stream=0)
        keep = np.arange(X.shape[0])
        if self.background_size is not None and X.shape[0] > self.background_size:
            keep = np.sort(rng.choice(X.shape[0], self.background_size, replace=False))
        self.background_ = X[keep]
        self._drop_global_results()
        if y is None:
            return self
        game = self._global_game(estimator, X, y, keep)
        result = self._estimate(game, local=False, rng=make_generator(self.random_state, stream=1))
        self.top_k_ = result.top_k[0]
        self.support_ = np.zeros(X.shape[1], dtype=bool)
        self.support_[self.top_k_] = True
        self.shapley_values_, self.stderr_ = result.values[0], result.stderr[0]
        self.n_evals_ = int(result.n_evals[0])
        self.pac_satisfied_ = bool(result.pac_satisfied[0])
        corners = game.evaluate(np.array([[False] * X.shape[1], [True] * X.shape[1]]), np.zeros(2, np.intp))
        self.empty_value_, self.full_value_ = float(corners[0]), float(corners[1])
        return self

    def _drop_global_results(self) -> None:
        for name in ("top_k_", "support_", "shapley_values_", "stderr_", "n_evals_", "pac_satisfied_"):
            if hasattr(self, name):
                delattr(self, name)

    def _global_game(self, estimator: Any, X: np.ndarray, y: Any, keep: np.ndarray) -> CoalitionGame:
        if self.game == "retrain":
            return RetrainGame(estimator, X, y, self.cv, self.scoring, self.n_jobs)
        model = self.estimator_
        classes = getattr(model, "classes_", None) if is_classifier(model) else None
        if classes is not None and not hasattr(model, "predict_proba"):
            raise ValueError(
                "game='marginal' averages class probabilities over the background; "
                f"{type(model).__name__} has no predict_proba."
            )
        backend = resolve_backend("cpu")
        output = "predict" if classes is None else "probability"
        interventional = InterventionalGame(
            make_model_function(model, output, backend), self.background_, self.batch_size
        )
        return MarginalScoreGame(interventional, X[keep], np.asarray(y)[keep], self.scoring, classes)

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "background_")
        if not hasattr(self, "support_"):
            raise ValueError("TopKShapley was fitted without y (prefit=True): it explains rows, but selects nothing.")
        return self.support_

    # ------------------------------------------------------------------ explain: local games

    def _targets(self, full: np.ndarray) -> np.ndarray:
        """Model output explained for each row (full: the model outputs of the rows)."""
        n_rows, n_outputs = full.shape
        if n_outputs == 1:
            if self.target is not None:
                raise ValueError(
                    "The model has a single output (a binary classifier's positive class, or a regression): "
                    f"leave target=None, got {self.target!r}."
                )
            return np.zeros(n_rows, dtype=np.intp)
        labels = list(getattr(self.estimator_, "classes_", []))
        if self.target is None:
            if len(labels) != n_outputs:
                raise ValueError(f"The model has {n_outputs} outputs: choose one with target=<index>.")
            return full.argmax(axis=1)
        if len(labels) == n_outputs:  # a classifier: target is a class label
            if self.target not in labels:
                raise ValueError(f"target must be one of the classes {labels}, got {self.target!r}.")
            index = labels.index(self.target)
        elif isinstance(self.target, Integral) and 0 <= self.target < n_outputs:
            index = int(self.target)
        else:
            raise ValueError(f"target must be an output index in [0, {n_outputs}), got {self.target!r}.")
        return np.full(n_rows, index, dtype=np.intp)

    def explain(self, X: Any) -> Any:
        """Estimate every row's Shapley values and find its top k features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)

        Returns
        -------
        shap.Explanation
            ``values`` (n, d) of the explained output of each row, ``base_values`` (n,),
            ``error_std`` and 95% bounds. ``top_k_`` (n, k), ``n_evals_`` (n,) and
            ``pac_satisfied_`` (n,) describe the rows; ``targets_`` says which output was
            explained for each row.
        """
        check_is_fitted(self, "background_")
        start_time = time.perf_counter()
        array = validate_data(self, X, dtype=np.float64, reset=False)
        n_rows, d = array.shape
        self._check_params(d)
        backend = resolve_backend(self.device)
        rng = make_generator(self.random_state, stream=2)
        with backend.activate():
            model_fn = make_model_function(self.estimator_, self.output, backend)
            game = InterventionalGame(model_fn, backend.to_device(self.background_), self.batch_size)
            full = backend.to_numpy(game.full_values(backend.to_device(array)))
            targets = self._targets(full)
            base = backend.to_numpy(game.empty_value)[targets]
            pieces = []
            step = max(1, _PAIR_STATE_BYTES // (40 * d * d))  # bounds Greedy CMCS's pair statistics
            for start in range(0, n_rows, step):
                rows = slice(start, min(start + step, n_rows))
                pieces.append(self._estimate(LocalModelGame(game, array[rows], targets[rows]), True, rng))
        self.top_k_ = np.concatenate([p.top_k for p in pieces])
        self.n_evals_ = np.concatenate([p.n_evals for p in pieces])
        self.pac_satisfied_ = np.concatenate([p.pac_satisfied for p in pieces])
        self.targets_ = targets
        values = np.concatenate([p.values for p in pieces])
        stderr = np.concatenate([p.stderr for p in pieces])
        names = getattr(self, "feature_names_in_", None)
        return make_explanation(
            values[:, :, None],
            base[:, None],
            array,
            default_feature_names(d, names),
            error_std=stderr[:, :, None],
            compute_time=time.perf_counter() - start_time,
        )

    def __call__(self, X: Any) -> Any:
        """Explain rows of ``X`` (shap's calling convention): the same as ``explain(X)``."""
        return self.explain(X)

    def shap_values(self, X: Any) -> np.ndarray:
        """Estimated Shapley values of ``X`` as an array of shape (n, d)."""
        return self.explain(X).values
