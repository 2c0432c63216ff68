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

from sklearn_shapq._feature_groups import resolve_feature_groups
from sklearn_shapq._progress import progress_bar
from sklearn_shapq._random import make_generator
from sklearn_shapq._row_explainer import RowExplainerMixin, background_subsample
from sklearn_shapq._validation import (
    BATCH_SIZE,
    DEVICE,
    MAX_EVALS,
    N_FEATURES_TO_SELECT,
    N_JOBS,
    PROGRESS,
    RANDOM_STATE,
    RENAMED,
    RegistryNames,
    check_table,
    default_feature_names,
    effective_n_jobs,
    has_non_numeric_columns,
    is_class_target,
    missing_value_policy,
    refuse_missing_values,
    renamed,
    renamed_parameter,
    selected_count,
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
    takes_missing_values,
)
from sklearn_shapq.samplers import draw_seed, row_keys

_PAC_BUDGET_PER_PLAYER = 2000
_BUDGET_PER_PLAYER = 20
"""Rounds of d + 1 evaluations that "auto" adds to the warm-up's t_min."""
_BLOCK_BYTES = 2**28
"""Working memory of the top-k state of one block of explained rows."""
SELECTOR_PARAMETERS = {"game": "retrain", "cv": 5, "scoring": None, "memory": None}
"""The parameters only the selector (``fit`` with y) reads, with their defaults: refused when ``fit`` gets no y."""


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


class TopKShapley(RowExplainerMixin, SelectorMixin, BaseEstimator):
    """Find the k features with the largest Shapley values in few evaluations (CMCS).

    Comparable Marginal Contributions Sampling (Kolpaczki, Nielen & Hüllermeier 2025) compares
    features on the same coalitions. As a selector (``fit(X, y)``, ``transform``) the game is
    global: a cross-validated refit on S (``game="retrain"``) or the fitted model with the other
    features marginalised (``game="marginal"``). As a local explainer (``explain(X)``) each row's
    game is interventional over the background from ``fit``.

    Parameters
    ----------
    estimator : estimator or None, default=None
        None: a standardised ``LogisticRegression`` for class labels (not floats), else ``RidgeCV``.
    n_features_to_select : int or float, default=5
        The k of the top k: the number of players sought (1 <= k <= d), or a fraction of them in
        (0, 1] (at least 1), as in ``HSICAttribution`` and scikit-learn's ``RFE``.
    algorithm : str, default="greedy_cmcs"
        "greedy_cmcs", "cmcs", "cmcs_at_k", or a baseline: "permutation" (ApproShapley),
        "sampling_shap_at_k", "svarm", "stratified_svarm"; or "leverage" (Leverage SHAP's
        regression on the whole budget, exactly efficient values; no PAC mode).
    max_evals : int or "auto", default="auto"
        Evaluations of the game (per row for ``explain``), v(∅) and v(N) included; at least the
        algorithm's minimum. "auto": 2 + (t_min + 20) (d + 1) (PAC mode: a cap of 2000 (d + 1)).
    epsilon : float or None, default=None
        PAC mode: stop once max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i <= epsilon, in the units of the
        game; for "cmcs", "greedy_cmcs", "cmcs_at_k" and "sampling_shap_at_k".
    delta : float, default=0.01
        Error probability of the confidence bounds.
    t_min : int, default=30
        Warm-up rounds before bounds are trusted and adaptive sampling starts.
    rounds_per_decision : int or "auto", default="auto"
        Rounds the adaptive methods run on one choice of features; 1 is the paper's algorithm.
        "auto": a tenth of the rounds so far in ``explain``, 1 in ``fit``.
    game : {"retrain", "marginal"}, default="retrain"
        The selector's global game.
    cv : int, splitter or iterable, default=5
        Folds of the "retrain" game, drawn once.
    scoring : str, callable or None, default=None
        None: accuracy for classifiers, R² for regressors; a NaN or infinite score is an error.
    background_size : int or None, default=100
        Rows of ``fit``'s X kept as background (None keeps all); the "marginal" game scores on them.
    prefit : bool, default=False
        ``estimator`` is fitted and used as is; ``fit`` then accepts y=None and only prepares ``explain``.
    ranking : {"auto", "signed", "absolute"}, default="auto"
        "auto": signed for the selector's global game, absolute for local explanations.
    output : {"auto", "margin", "log_odds", "probability", "predict"}, default="auto"
        What ``explain`` explains (see :class:`PermutationShapExplainer`).
    target : label, int or None, default=None
        The output ``explain`` explains (a class label or an index); None: each row's predicted class.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where ``explain``'s masked rows are built; checked by ``fit`` in either mode (a GPU asked
        for and absent raises :class:`~sklearn_shapq.DeviceUnavailableError` there).
    batch_size : int or "auto", default="auto"
        Most model rows per model call in ``explain`` and the "marginal" game.
    n_jobs : int or None, default=None
        Joblib workers of the "retrain" game's refits and threads of ``explain``'s model calls;
        results do not depend on it.
    feature_groups : dict or None, default=None
        {group name: [columns by name or index]}: columns kept or dropped as one player.
    allow_nan : "auto" or bool, default="auto"
        Whether NaN reaches the model ("auto": when the estimator's ``allow_nan`` tag says so).
    memory : None, str or joblib.Memory, default=None
        Where the "retrain" game's scores are cached across fits (e.g. a grid search over
        ``n_features_to_select``); shared only under an int ``random_state``.
    random_state : None, int, Generator or RandomState, default=None
        Seed of the background subsample, of every draw and of the refits' ``random_state``
        (a hash of it and the coalition, see :class:`RetrainGame`).
    progress : bool, default=True
        Show a progress bar once the work has run 3 s.
    k : int or float
        Deprecated: renamed ``n_features_to_select`` in 1.0; removed in 1.1.
    method : str
        Deprecated: renamed ``algorithm`` in 1.0; removed in 1.1.

    Attributes
    ----------
    estimator_ : estimator
    n_features_to_select_ : int
        The k of the top k (``n_features_to_select`` resolved for the players).
    algorithm_ : str
        The top-k algorithm ``fit`` and ``explain`` run.
    top_k_ : ndarray of int of shape (``n_features_to_select_``,)
        The selected players, best first.
    top_k_names_ : ndarray of str of shape (``n_features_to_select_``,)
        Their names (columns, or groups of ``feature_groups``).
    support_ : ndarray of bool, shape (d,)
    feature_groups_ : FeatureGroups
    shapley_values_, stderr_ : ndarray of shape (n_players,)
        The global game's estimates (NaN errors below two samples).
    n_evals_ : int
    pac_satisfied_ : bool
        Whether the top k's bounds are separated from the rest's (up to ``epsilon``) at the end.
    empty_value_, full_value_ : float
        v(∅) and v(N) of the global game.
    background_ : ndarray of shape (N, d)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X is a DataFrame.

    Notes
    -----
    ``explain`` changes no attribute; ``explanation.diagnostics`` holds "top_k" (n, k) and its
    players' names "top_k_names" (n, k), "n_evals", "pac_satisfied" and "targets" (n,).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 8))
    >>> y = 3 * X[:, 0] + 2 * X[:, 3] - 2 * X[:, 5] + 0.1 * rng.normal(size=300)
    >>> selector = TopKShapley(LinearRegression(), n_features_to_select=2, cv=3, max_evals=400, random_state=0)
    >>> sorted(selector.fit(X, y).get_support(indices=True).tolist())
    [0, 3]
    >>> explanation = selector.explain(X[:2])
    >>> explanation.values.shape, explanation.diagnostics["top_k"].shape
    ((2, 8), (2, 2))
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "algorithm": [RegistryNames(TOPK_ALGORITHMS)],
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
        "k": renamed(N_FEATURES_TO_SELECT),
        "method": renamed([RegistryNames(TOPK_ALGORITHMS)]),
    }

    def __init__(
        self,
        estimator: Any = None,
        *,
        n_features_to_select: int | float = 5,
        algorithm: str = "greedy_cmcs",
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
        k: int | float | str = RENAMED,
        method: str = RENAMED,
    ) -> None:
        self.estimator = estimator
        self.n_features_to_select = n_features_to_select
        self.algorithm = algorithm
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
        self.k = k
        self.method = method

    def _explained_model(self) -> Any:
        """Return the fitted model ``explain`` explains: ``estimator_``."""
        return self.estimator_

    def __sklearn_clone__(self) -> Any:
        """Clone as scikit-learn does (``set_output`` survives); a prefit estimator is kept as is."""
        copy = super().__sklearn_clone__()
        if self.prefit:
            copy.estimator = self.estimator
        return copy

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = not self.prefit
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

    def _check_params(self, d: int, selects: bool) -> tuple[int, str]:
        """Check what the constraints cannot and return the top-k size and the algorithm for d players."""
        if not selects:
            unread = [
                name for name in SELECTOR_PARAMETERS if self.get_params(deep=False)[name] != SELECTOR_PARAMETERS[name]
            ]
            if unread:
                raise ValueError(
                    f"{', '.join(unread)} only apply to the selector (fit with y), but fit got y=None (prefit=True: "
                    "explain only): leave them at their defaults, or pass y."
                )
        n_selected = selected_count(renamed_parameter(self, "k", "n_features_to_select"), d)
        algorithm = renamed_parameter(self, "method", "algorithm")
        if self.epsilon is not None and not TOPK_ALGORITHMS[algorithm].pac:
            pac = tuple(name for name, cls in TOPK_ALGORITHMS.items() if cls.pac)
            raise ValueError(f"epsilon (PAC mode) needs one of the algorithms {pac}, got {algorithm!r}.")
        family = TOPK_ALGORITHMS[algorithm]
        reason = family.refusal(d, self._budget(d), self.t_min, self.epsilon is not None) if d > 1 else None
        if reason is not None:
            raise ValueError(
                reason if self.max_evals != "auto" else f"max_evals='auto' chose {self._budget(d)}: {reason}"
            )
        return n_selected, algorithm

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
            self.n_features_to_select_,
            self.algorithm_,
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
        resolve_backend(self.device)  # validated in either mode: a GPU asked for and absent fails here, not in explain
        estimator = self._default_estimator(y)
        if y is None:  # explain only: raw tables and missing values as in PermutationShapExplainer
            array, names, self._codec = check_table(X, name="X", **missing_value_policy(self.allow_nan, estimator))
            # n_features_in_, feature_names_in_ (a DataFrame's string names), without converting a raw table
            validate_data(self, X if names is not None else array, reset=True, skip_check_array=True)
            X = array
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
        self.n_features_to_select_, self.algorithm_ = self._check_params(self.feature_groups_.n_players, y is not None)
        if self.prefit:
            check_is_fitted(estimator, msg="prefit=True, but %(name)s is not fitted: fit it first or set prefit=False.")
            self.estimator_ = estimator
        else:
            self.estimator_ = clone(estimator).fit(X, y)
        keep = background_subsample(X.shape[0], self.background_size, self.random_state)
        if keep is None:
            keep = np.arange(X.shape[0])
        self.background_ = X[keep]
        self._drop_global_results()
        if y is None:
            return self
        keys = row_keys(draw_seed(make_generator(self.random_state, stream=1)), np.zeros((1, 1)))
        game = self._grouped(self._global_game(estimator, X, y, keep))
        with progress_bar(self.progress, self._budget(game.n_players), "evaluating", "eval") as bar:
            result = self._estimate(_ProgressGame(game, bar), False, keys)
        self.top_k_ = result.top_k[0]
        self.top_k_names_ = np.asarray(self.feature_groups_.names, dtype=object)[self.top_k_]
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
        for name in ("top_k_", "top_k_names_", "support_", "shapley_values_", "stderr_", "n_evals_", "pac_satisfied_"):
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
        elif isinstance(self.target, Integral) and 0 <= self.target < n_outputs:  # type: ignore[operator]
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
            ``values`` (n, n_players) of each row's explained output, ``base_values`` (n,),
            ``error_std``, ``diagnostics``; estimates to rank players, not exactly efficient.
        dask Array or dask DataFrame
            For a dask collection ``X``, lazily.
        """
        check_is_fitted(self, "background_")
        if is_dask_collection(X):
            return lazy_explain(self, X)
        start_time = time.perf_counter()
        explained = self._explained_rows(X)
        array, background = explained.array, explained.background
        n_rows = array.shape[0]
        players = self.feature_groups_
        _, keys = self._row_keys(explained, stream=2)
        backend = resolve_backend(self.device)
        family = TOPK_ALGORITHMS[self.algorithm_]
        d = players.n_players
        step = max(1, _BLOCK_BYTES // family.bytes_per_game(d, self._budget(d)))
        results, targets, base = [], np.empty(n_rows, dtype=np.intp), np.empty(n_rows)
        model_rows = n_rows * self._budget(d) * background.shape[0]  # an evaluation: N model rows
        with backend.activate(), progress_bar(self.progress, model_rows, "explaining", " model rows") as bar:
            model_fn = make_model_function(self.estimator_, self.output, backend, explained.codec).counted(bar)
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
        top_k = np.concatenate([r.top_k for r in results])
        stderr = np.concatenate([r.stderr for r in results])
        return self._explanation(
            array,
            explained.codec,
            values[:, :, None],
            base[:, None],
            error_std=stderr[:, :, None],
            compute_time=time.perf_counter() - start_time,
            diagnostics={
                "top_k": top_k,
                "top_k_names": np.asarray(players.names, dtype=object)[top_k],
                "n_evals": np.concatenate([r.n_evals for r in results]),
                "pac_satisfied": np.concatenate([r.pac_satisfied for r in results]),
                "targets": targets,
            },
        )
