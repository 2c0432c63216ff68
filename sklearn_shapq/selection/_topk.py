"""``TopKShapley``: the k features with the largest Shapley values, as a selector and an explainer."""

from __future__ import annotations

import time
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, clone, is_classifier
from sklearn.feature_selection import SelectorMixin
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, check_memory, validate_data

from sklearn_shapq._explanation import explanation_data, make_explanation
from sklearn_shapq._feature_groups import resolve_feature_groups
from sklearn_shapq._progress import progress_bar
from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import (
    BATCH_SIZE,
    DEVICE,
    MAX_EVALS,
    N_JOBS,
    PROGRESS,
    RANDOM_STATE,
    RegistryNames,
    check_table,
    default_feature_names,
    effective_n_jobs,
    has_non_numeric_columns,
    is_class_target,
    missing_value_policy,
    refuse_missing_values,
)
from sklearn_shapq.algorithms import TOPK_ALGORITHMS, TopKResult, top_k_shapley
from sklearn_shapq.backends import CpuBackend, resolve_backend
from sklearn_shapq.dask import is_dask_collection, lazy_explain
from sklearn_shapq.games import (
    OUTPUTS,
    Game,
    GroupedGame,
    InterventionalGame,
    MarginalScoreGame,
    RetrainGame,
    make_model_function,
)
from sklearn_shapq.games._models import takes_missing_values
from sklearn_shapq.games._table_codec import keyed_content
from sklearn_shapq.samplers import row_keys
from sklearn_shapq.samplers._keyed import draw_seed

_PAC_BUDGET_PER_PLAYER = 2000
_BUDGET_PER_PLAYER = 20
"""Rounds of d + 1 evaluations that "auto" adds to the warm-up's t_min."""
_BLOCK_BYTES = 2**28
"""Working memory of the top-k state of one block of explained rows."""


class _ProgressGame(Game):
    """Delegates to a game and advances a progress bar by the coalitions evaluated."""

    def __init__(self, game: Game, bar: Any) -> None:
        super().__init__(game.n_players, game.n_games, game.n_outputs, game.backend)
        self.game, self.bar = game, bar

    def evaluate(self, masks: Any, games: Any) -> Any:
        """Evaluate through the wrapped game and advance the bar."""
        values = self.game(masks, games)
        self.bar.update(masks.shape[0])
        return values

    def corner_values(self) -> tuple[Any, Any]:
        """Return the wrapped game's cached v(∅) and v(N)."""
        return self.game.empty_value, self.game.full_value


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
        The model. None: a standardised ``LogisticRegression`` for class labels (integer, bool,
        string or categorical targets), else ``RidgeCV``: a float target is a regression target
        even when its values are whole numbers. Pass a classifier to treat float labels as classes.
    k : int, default=5
        Number of features sought (1 <= k <= d).
    method : str, default="greedy_cmcs"
        "greedy_cmcs", "cmcs", "cmcs_at_k", or a baseline: "permutation" (ApproShapley),
        "sampling_shap_at_k", "svarm", "stratified_svarm"; or "leverage" (Leverage SHAP's
        regression on the whole budget, exactly efficient values; no PAC mode).
    max_evals : int or "auto", default="auto"
        Evaluations of the game (per row for ``explain``), v(∅) and v(N) included; with
        ``game="retrain"`` each is one cross-validation. "auto": 2 + (t_min + 20) (d + 1), the
        CMCS warm-up of t_min rounds of d + 1 evaluations and 20 rounds' worth of adaptive
        sampling; in PAC mode a safety cap of 2000 (d + 1). ``fit`` refuses a budget below the
        method's minimum (``TOPK_ALGORITHMS[method].minimum_evals(d)``: a marginal contribution of
        every feature, or what the method needs instead), and in PAC mode one below the warm-up;
        otherwise a budget below the warm-up warns.
    epsilon : float or None, default=None
        PAC mode: stop once max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i <= epsilon, in the units of
        the game (score units for the selector). Methods "cmcs", "greedy_cmcs", "cmcs_at_k",
        "sampling_shap_at_k".
    delta : float, default=0.01
        Error probability of the confidence bounds.
    t_min : int, default=30
        Warm-up rounds before bounds are trusted and adaptive sampling starts.
    rounds_per_decision : int or "auto", default="auto"
        Rounds the adaptive methods run on one choice of features before choosing again (and
        between checks of the PAC rule). 1 is the paper's algorithm; more make fewer, larger
        model calls (faster for models with a per-call cost, and on a GPU), on choices a few
        rounds old. "auto": in ``explain`` (model calls), a tenth of the rounds run so far, so a
        choice misses at most a tenth of the rounds and the calls grow with the logarithm of the
        budget; in ``fit`` (each evaluation a refit, whose cost dwarfs a call's), 1.
    game : {"retrain", "marginal"}, default="retrain"
        The selector's global game (see above).
    cv : int, splitter or iterable, default=5
        Folds of the "retrain" game (drawn once; every coalition sees the same folds).
    scoring : str, callable or None, default=None
        Score of the global game (None: accuracy for classifiers, R² for regressors). A score
        that comes out NaN or infinite (R² on a single test row, as with ``LeaveOneOut``) is an
        error in ``fit``.
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
        Workers, with joblib's meaning (None: 1, or the workers of the active backend, e.g. of a
        dask cluster under ``joblib.parallel_config(backend="dask")``; -1: all cores; -2: all but
        one): coalitions of the "retrain" game cross-validated in parallel, a few tasks of several
        coalitions per worker, and model calls of ``explain`` run in threads. Results do not
        depend on it nor on the backend. When the "retrain" game runs several jobs, the refitted
        clones' ``n_jobs`` parameters left at None are set to 1 (no nested parallelism in the
        workers); ``estimator`` itself is not changed.
    feature_groups : dict or None, default=None
        Columns treated as one player: {group name: [columns by name or index]} (see
        :class:`PermutationShapExplainer`). ``k`` counts players; the selector keeps or drops a
        group whole (``support_`` marks every column of a selected group) and ``explain`` gives
        one value per group.
    allow_nan : "auto" or bool, default="auto"
        Whether missing values reach the model. The selector passes NaN to an estimator whose
        ``allow_nan`` tag says it takes them (e.g. HistGradientBoosting, xgboost) and refuses it
        otherwise; ``explain`` follows :class:`PermutationShapExplainer` ("auto": estimators yes,
        plain callables no).
    memory : None, str or joblib.Memory, default=None
        Where the "retrain" game's scores are cached across fits (a path or a ``joblib.Memory``,
        as Pipeline's ``memory``): refitting for another k in a grid search then reuses every
        coalition already scored. None: scores are kept within one fit only. The refits' seed
        is part of the cache key: for an estimator with a ``random_state`` parameter, scores are
        shared across fits only with an int ``random_state``.
    random_state : None, int, Generator or RandomState, default=None
        Seed of the background subsample and of every draw; ``explain`` keys a row's draws by
        its values, so a row gets identical values alone or in any batch. The "retrain" game
        draws one seed from it per fit and sets every ``random_state`` parameter of a
        coalition's refitted clones (nested ones, as a pipeline step's, included) to a hash of
        that seed and the coalition, so a coalition's score does not depend on the worker, the
        backend (loky, dask) or the order of evaluation (see :class:`RetrainGame`); estimators
        without ``random_state`` are refitted as they are. With None the seed is drawn afresh
        in every fit, and the refits differ between fits.
    progress : bool, default=True
        Show a progress bar (over evaluations in ``fit``, model rows in ``explain``) once the work
        has run 3 s.

    Attributes
    ----------
    estimator_ : estimator
        The fitted model (``estimator`` itself when ``prefit``).
    top_k_ : ndarray of int of shape (k,)
        Indices of the selected players (features, or groups and ungrouped features), best first.
    support_ : ndarray of bool, shape (d,)
    feature_groups_ : FeatureGroups
        The players: their names and the player of each column.
    shapley_values_, stderr_ : ndarray of shape (n_players,)
        Estimated Shapley values of the global game and their standard errors (the adaptive
        methods are only asymptotically unbiased; NaN where a feature has fewer than two samples).
    n_evals_ : int
        Evaluations used by ``fit``'s game.
    pac_satisfied_ : bool
        Whether the confidence bounds of the top k and the rest are separated by at most
        ``epsilon`` (0 in fixed-budget mode) at the end.
    empty_value_, full_value_ : float
        v(∅) and v(N) of the global game.
    background_ : ndarray of shape (N, d)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X is a DataFrame.

    Notes
    -----
    ``explain`` changes no attribute (it may run from several threads at once); each row's top k
    and what the call measured are on the returned Explanation's ``diagnostics`` dict: "top_k"
    (n, k), "n_evals" (n,), "pac_satisfied" (n,), "targets" (n,), the output explained per row.

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
    >>> explanation.values.shape, explanation.diagnostics["top_k"].shape
    ((2, 8), (2, 2))
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "method": [RegistryNames(TOPK_ALGORITHMS)],
        "max_evals": MAX_EVALS,
        "epsilon": [Interval(Real, 0, None, closed="left"), None],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "t_min": [Interval(Integral, 2, None, closed="left")],
        "rounds_per_decision": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "game": [StrOptions({"retrain", "marginal"})],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
        "background_size": [Interval(Integral, 1, None, closed="left"), None],
        "prefit": ["boolean"],
        "ranking": [StrOptions({"auto", "signed", "absolute"})],
        "output": [StrOptions(set(OUTPUTS))],
        "target": "no_validation",
        "device": DEVICE,
        "batch_size": BATCH_SIZE,
        "n_jobs": N_JOBS,
        "feature_groups": [dict, None],
        "allow_nan": [StrOptions({"auto"}), "boolean"],
        "memory": [None, str, HasMethods(["cache"])],
        "random_state": RANDOM_STATE,
        "progress": PROGRESS,
    }

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
        rounds_per_decision: int | str = "auto",
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
        feature_groups: dict | None = None,
        allow_nan: str | bool = "auto",
        memory: Any = None,
        random_state: Any = None,
        progress: bool = True,
    ) -> None:
        self.estimator = estimator
        self.k = k
        self.method = method
        self.max_evals = max_evals
        self.epsilon = epsilon
        self.delta = delta
        self.t_min = t_min
        self.rounds_per_decision = rounds_per_decision
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
        self.feature_groups = feature_groups
        self.allow_nan = allow_nan
        self.memory = memory
        self.random_state = random_state
        self.progress = progress

    def __sklearn_clone__(self) -> Any:
        """Clone as scikit-learn does (``set_output`` survives); a prefit estimator is kept as is."""
        copy = super().__sklearn_clone__()
        if self.prefit:
            copy.estimator = self.estimator
        return copy

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = not self.prefit
        tags.non_deterministic = self.random_state is None
        tags.input_tags.allow_nan = self._takes_missing_values(self.estimator)  # transform takes what fit took
        return tags

    def _takes_missing_values(self, estimator: Any) -> bool:
        """Whether the selector passes NaN to ``estimator`` (``allow_nan``, else its tag)."""
        if self.allow_nan != "auto":
            return bool(self.allow_nan)
        return estimator is not None and takes_missing_values(estimator)

    def transform(self, X: Any) -> Any:
        """Keep the selected columns of ``X`` (only after a fit with y: the local mode selects nothing)."""
        self._get_support_mask()
        return super().transform(X)

    # ------------------------------------------------------------------ validation

    def _check_params(self, d: int) -> None:
        """Check what the constraints cannot: k against d, and PAC mode against the method."""
        if self.k > d:
            players = "features" if self.feature_groups is None else "players (groups and ungrouped features)"
            raise ValueError(f"k must be an int between 1 and the number of {players} {d}, got {self.k!r}.")
        if self.epsilon is not None and not TOPK_ALGORITHMS[self.method].pac:
            pac = tuple(name for name, cls in TOPK_ALGORITHMS.items() if cls.pac)
            raise ValueError(f"epsilon (PAC mode) needs one of the methods {pac}, got {self.method!r}.")
        family = TOPK_ALGORITHMS[self.method]
        reason = family.refusal(d, self._budget(d), self.t_min, self.epsilon is not None) if d > 1 else None
        if reason is not None:
            raise ValueError(
                reason if self.max_evals != "auto" else f"max_evals='auto' chose {self._budget(d)}: {reason}"
            )

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

    def _estimate(self, game: Game, local: bool, keys: np.ndarray, outputs: np.ndarray | None = None) -> TopKResult:
        return top_k_shapley(
            game,
            self.k,
            self.method,
            max_evals=self._budget(game.n_players),
            epsilon=self.epsilon,
            delta=self.delta,
            t_min=self.t_min,
            ranking=self._ranking(local),
            rounds_per_decision=1 if self.rounds_per_decision == "auto" and not local else self.rounds_per_decision,
            keys=keys,
            outputs=outputs,
        )

    # ------------------------------------------------------------------ fit: the global game

    def _default_estimator(self, y: Any) -> Any:
        if self.estimator is not None:
            return self.estimator
        if y is not None and is_class_target(y):
            return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        return RidgeCV()

    @_fit_context(prefer_skip_nested_validation=False)
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
                "TopKShapley requires y to be passed, but the target y is None: the estimator is trained and the "
                "features are scored against it. Pass y, or a fitted estimator with prefit=True to explain rows only."
            )
        estimator = self._default_estimator(y)
        if y is None:  # explain only: raw tables and missing values as in PermutationShapExplainer
            X, names, self._codec = check_table(X, name="X", **missing_value_policy(self.allow_nan, estimator))
            self.n_features_in_ = X.shape[1]
            if names is not None:
                self.feature_names_in_ = np.asarray(names, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            if has_non_numeric_columns(X):
                raise TypeError(
                    "X has string or category columns, and the selector (fit with y, either game) takes numeric "
                    "columns only: encode them as numbers first (e.g. OrdinalEncoder). explain() takes raw tables: "
                    "fit a prefit estimator without y."
                )
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False, ensure_all_finite="allow-nan")
            if not self._takes_missing_values(estimator):
                refuse_missing_values(
                    X,
                    "X",
                    f"{type(estimator).__name__} does not take missing values (its allow_nan tag): impute them first "
                    "(e.g. a Pipeline starting with SimpleImputer), use an estimator that takes them "
                    "(HistGradientBoosting, xgboost), or say allow_nan=True.",
                    getattr(self, "feature_names_in_", None),
                )
            self._codec = None
        names = default_feature_names(X.shape[1], getattr(self, "feature_names_in_", None))
        self.feature_groups_ = resolve_feature_groups(self.feature_groups, names)
        self._check_params(self.feature_groups_.n_players)
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
        keys = row_keys(draw_seed(make_generator(self.random_state, stream=1)), np.zeros((1, 1)))
        game = self._grouped(self._global_game(estimator, X, y, keep))
        with progress_bar(self.progress, self._budget(game.n_players), "evaluating", "eval") as bar:
            result = self._estimate(_ProgressGame(game, bar), False, keys)
        self.top_k_ = result.top_k[0]
        self.support_ = np.isin(self.feature_groups_.player_of_column, self.top_k_)
        self.shapley_values_, self.stderr_ = result.values[0], result.stderr[0]
        self.n_evals_ = int(result.n_evals[0])
        self.pac_satisfied_ = bool(result.pac_satisfied[0])
        self.empty_value_, self.full_value_ = float(game.empty_value[0, 0]), float(game.full_value[0, 0])
        return self

    def _grouped(self, game: Game) -> Game:
        """Return the game over the players: ``game`` itself, or its feature groups."""
        return game if self.feature_groups is None else GroupedGame(game, self.feature_groups_)

    def _drop_global_results(self) -> None:
        for name in ("top_k_", "support_", "shapley_values_", "stderr_", "n_evals_", "pac_satisfied_"):
            if hasattr(self, name):
                delattr(self, name)

    def _global_game(self, estimator: Any, X: np.ndarray, y: Any, keep: np.ndarray) -> Game:
        if self.game == "retrain":
            memory = None if self.memory is None else check_memory(self.memory)
            seed = draw_seed(make_generator(self.random_state, stream=3))
            return RetrainGame(estimator, X, y, self.cv, self.scoring, self.n_jobs, memory, seed)
        model = self.estimator_
        classes = getattr(model, "classes_", None) if is_classifier(model) else None
        if classes is not None and not hasattr(model, "predict_proba"):
            raise ValueError(
                "game='marginal' averages class probabilities over the background; "
                f"{type(model).__name__} has no predict_proba."
            )
        backend = CpuBackend()
        output = "predict" if classes is None else "probability"
        interventional = InterventionalGame(
            make_model_function(model, output, backend), self.background_, X[keep], self.batch_size
        )
        return MarginalScoreGame(interventional, np.asarray(y)[keep], self.scoring, classes)

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
        X : array-like, DataFrame, dask Array or dask DataFrame of shape (n, d)
            A dask collection is explained lazily, block by block (see :mod:`sklearn_shapq.dask`).

        Returns
        -------
        shap.Explanation
            ``values`` (n, p) of the explained output of each row (p players: the features, or
            the groups of ``feature_groups``), ``base_values`` (n,), ``error_std`` and 95% bounds;
            ``diagnostics`` (see the class notes). The values are estimates made to rank the
            players, not exactly efficient: values plus base value need not sum to the model
            output (use PermutationShapExplainer for that).
        dask Array or dask DataFrame
            For a dask collection ``X``: the values, lazily (:mod:`sklearn_shapq.dask`).
        """
        check_is_fitted(self, "background_")
        if is_dask_collection(X):
            return lazy_explain(self, X)
        start_time = time.perf_counter()
        names_in = getattr(self, "feature_names_in_", None)
        codec, background = (
            (None, self.background_) if self._codec is None else self._codec.aligned(X, self.background_)
        )
        array, _, codec = check_table(
            X,
            n_features=self.n_features_in_,
            feature_names=None if names_in is None else list(names_in),
            codec=codec,
            tables=codec is not None,
            **missing_value_policy(self.allow_nan, self.estimator_),
        )
        n_rows = array.shape[0]
        players = self.feature_groups_
        keys = row_keys(draw_seed(make_generator(self.random_state, stream=2)), keyed_content(array, codec))
        backend = resolve_backend(self.device)
        family = TOPK_ALGORITHMS[self.method]
        d = players.n_players
        step = max(1, _BLOCK_BYTES // family.bytes_per_game(d, self._budget(d)))
        results, targets, base = [], np.empty(n_rows, dtype=np.intp), np.empty(n_rows)
        model_rows = n_rows * self._budget(d) * background.shape[0]  # an evaluation: N model rows
        with backend.activate(), progress_bar(self.progress, model_rows, "explaining", " model rows") as bar:
            model_fn = make_model_function(self.estimator_, self.output, backend, codec).counted(bar)
            background = backend.to_device(background)
            background_outputs = None
            for start in range(0, n_rows, step):
                rows = slice(start, min(start + step, n_rows))
                with InterventionalGame(
                    model_fn,
                    background,
                    backend.to_device(array[rows]),
                    self.batch_size,
                    background_outputs=background_outputs,
                    n_jobs=effective_n_jobs(self.n_jobs),
                ) as game:
                    background_outputs, empty = game.background_outputs, game.empty_value[0]
                    targets[rows] = self._targets(backend.to_numpy(game.full_value))
                    base[rows] = backend.to_numpy(empty)[targets[rows]]
                    results.append(self._estimate(self._grouped(game), True, keys[rows], targets[rows]))
        values = np.concatenate([r.values for r in results])
        stderr = np.concatenate([r.stderr for r in results])
        data, display_data = explanation_data(array, codec, None if self.feature_groups is None else players)
        return make_explanation(
            values[:, :, None],
            base[:, None],
            data,
            players.names,
            display_data=display_data,
            error_std=stderr[:, :, None],
            compute_time=time.perf_counter() - start_time,
            diagnostics={
                "top_k": np.concatenate([r.top_k for r in results]),
                "n_evals": np.concatenate([r.n_evals for r in results]),
                "pac_satisfied": np.concatenate([r.pac_satisfied for r in results]),
                "targets": targets,
            },
        )

    def __call__(self, X: Any) -> Any:
        """Explain rows of ``X`` (shap's calling convention): the same as ``explain(X)``."""
        return self.explain(X)

    def shap_values(self, X: Any) -> np.ndarray:
        """Estimated Shapley values of ``X`` as an array of shape (n, d)."""
        return self.explain(X).values
