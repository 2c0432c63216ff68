"""``PermutationShapExplainer``: interventional Shapley values of any model from permutations."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, nullcontext
from numbers import Integral, Real
from typing import Any, cast

import numba
import numpy as np
import sklearn
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_shapq._feature_groups import resolve_feature_groups
from sklearn_shapq._progress import progress_bar
from sklearn_shapq._row_explainer import ExplainedRows, background_subsample
from sklearn_shapq._validation import (
    BATCH_SIZE,
    DEVICE,
    MAX_EVALS,
    N_JOBS,
    PROGRESS,
    RANDOM_STATE,
    RENAMED,
    RegistryNames,
    check_table,
    default_feature_names,
    effective_n_jobs,
    missing_value_policy,
    renamed,
    renamed_parameter,
)
from sklearn_shapq.algorithms import (
    EXACT_ONLY_INDICES,
    SHAPLEY_ALGORITHMS,
    BackgroundPartsMerge,
    RowParts,
    ShapleyAlgorithm,
    ShapleyEstimate,
    border_evals,
    check_interaction_index,
    enumerated_interactions,
    interaction_matrix,
    minimum_pair_evals,
    pair_design,
    regression_adjusted,
    sampled_pair_bytes,
    sampled_pair_interactions,
)
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.dask import is_dask_collection, lazy_explain, lazy_interactions
from sklearn_shapq.explainers._auto_algorithm import REGRESSION_SPLIT_FEATURES, resolve_algorithm
from sklearn_shapq.explainers._base import ModelExplainerMixin
from sklearn_shapq.explainers._exact_paths import (
    EXACT_PATHS,
    LINKED_MAX_PLAYERS,
    ExactPath,
    exact_path,
    linked_structure,
)
from sklearn_shapq.explainers._model_fingerprint import model_fingerprint
from sklearn_shapq.explainers._overlapped_blocks import CallerThread, overlapped
from sklearn_shapq.explainers._top_players_control import TopPlayersControl
from sklearn_shapq.games import (
    MAX_ENUMERATED_PLAYERS,
    OUTPUTS,
    Game,
    GroupedGame,
    InterventionalGame,
    ResidualGame,
    check_same_outputs,
    make_model_function,
    takes_missing_values,
)
from sklearn_shapq.samplers import DEFAULT_CANDIDATES, DEFAULT_LAMBDA, split_keys

_MAX_GAMES_PER_BLOCK = 4096
OVERLAPPED_BLOCKS = 4
"""Blocks of whole rows the explained rows are cut into where blocks overlap (more where memory or batches
ask for smaller ones): the estimator's work on the last block is what stays after the model's last call."""
OVERLAPPED_MIN_ROWS = 2**15
"""Fewest model rows of a block cut for overlap (about): smaller explanations keep their blocks and model calls."""
_MIN_GAMES_PER_BLOCK = 8
"""Games a block holds at least, memory permitting, so that the estimators' kernels have games for their threads."""
_BLOCK_BYTES = 48 * 2**20
"""Working memory of the estimator for one block of games: each array stays below glibc's 32 MiB mmap threshold."""
_INTERACTION_STREAM = 4
"""The stream of ``random_state`` that keys the draws of ``explain_interactions`` (``explain`` keys stream 1)."""

MIN_REGRESSION_PARTS = 20
"""``explain_interactions`` keeps at least this many background parts under "auto" when the regression
adjustment runs (the parts measured in ``benchmarks/bench_interactions.py``); N · 10 / p above. On
breast cancer (p = 30, 100 background rows, a logistic pipeline, the default 1500 evaluations) one
part per row spent 3.7 s a row on the regression against 0.1 s of model calls."""


def _interaction_budget(max_evals: Any, n_players: int) -> int:
    """Return the evaluations per row of ``explain_interactions``: ``max_evals`` checked; "auto" is max(1024, 50 p).

    Examples
    --------
    >>> _interaction_budget("auto", 10), _interaction_budget(64, 6)
    (1024, 64)
    """
    if isinstance(max_evals, str) and max_evals == "auto":
        return max(1024, 50 * n_players)
    if not isinstance(max_evals, Integral) or isinstance(max_evals, bool):
        raise ValueError(f"The 'max_evals' parameter must be an int or 'auto'; got {max_evals!r}.")
    least = min(2**n_players, minimum_pair_evals(n_players))
    if max_evals < least:
        raise ValueError(
            f"max_evals={max_evals} is too small for the interactions of {n_players} players: at least {least} "
            f"(2^p to enumerate, else 2p + 6)."
        )
    return int(max_evals)


def _checked_budget(index: str, max_evals: Any, n_players: int) -> int:
    """Return the evaluations per row of ``explain_interactions`` (:func:`_interaction_budget`).

    Refuses a bad ``max_evals``, and an index given only by enumeration whose 2^p coalitions it does
    not reach.

    Examples
    --------
    >>> _checked_budget("FSII", 64, 6)
    64
    >>> _checked_budget("FSII", 63, 6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: index='FSII' is computed from all 2^p coalitions: max_evals must reach 2^6 = 64 (got 63). Use ...
    """
    budget = _interaction_budget(max_evals, n_players)
    if index in EXACT_ONLY_INDICES and (n_players > MAX_ENUMERATED_PLAYERS or budget < 2**n_players):
        too_many = n_players > MAX_ENUMERATED_PLAYERS
        most = f" At most {MAX_ENUMERATED_PLAYERS} players are enumerated." if too_many else ""
        given = f"max_evals={max_evals!r} gave {budget}" if isinstance(max_evals, str) else f"got {budget}"
        raise ValueError(
            f"index={index!r} is computed from all 2^p coalitions: max_evals must reach 2^{n_players} = "
            f"{2**n_players} ({given}).{most} Use 'shap', 'k-SII', 'SII' or 'STII' (estimated at any p), or "
            "feature_groups= to explain fewer players."
        )
    return budget


class PermutationShapExplainer(ModelExplainerMixin, BaseEstimator):
    """Interventional Shapley values of any model, estimated from sampled permutations.

    The game of a row x is v_x(S) = mean over background rows z of f(x_S, z_{N∖S}); rows,
    orderings and coalitions are batched into large model calls.

    Parameters
    ----------
    model : estimator, xgboost model or callable
        A fitted scikit-learn regressor, classifier or Pipeline, an xgboost model or Booster, or a
        callable mapping (n, d) rows to (n,) or (n, n_outputs) outputs (cupy arrays on CUDA). A
        raw DataFrame reaches the model as DataFrames with the same columns and dtypes.
    algorithm : str, default="auto"
        Which algorithm estimates the values: a name in ``SHAPLEY_ALGORITHMS`` (the user guide,
        "Algorithms and budget", compares them):

        - "exact": all 2^d coalitions (d <= 30).
        - Permutation walks, unbiased and exactly efficient, over the orderings of a sampler:
          "mc" (i.i.d.), "antithetic" (an ordering and its reverse), "orthogonal" (orthogonal
          spherical codes), drawn for every row; "sobol", "herding", "sbq" (Mallows kernel),
          one design per call.
        - "leverage": Leverage SHAP (Musco & Witter 2025), a regression on complementary pairs of
          coalitions, exactly efficient, jackknife standard errors; "leverage_cv": the same on
          the game minus a cross-fitted surrogate, no extra model calls; "kernel": paired
          KernelSHAP.
        - Baselines, not exactly efficient: "owen", "owen_halved", "stratified".
        - The exact path, read from the model's structure, no sampling (``max_evals`` unused):
          "product_kernel" (SVR, KernelRidge, Gaussian processes, SVC margins, scaler Pipelines:
          PKeX-Shapley of the interventional game, features or groups, exact pairs); "tree"
          (scikit-learn's decision trees, random forests, extra trees, baggings of trees, gradient
          boosting and histogram gradient boosting, xgboost gbtree and dart models, LightGBM models, Pipelines of
          column-wise steps ending in one: every leaf an explained row and a background row
          reach, features or groups, exact pairs; computed on the CPU; a link of the trees' sum,
          a boosted classifier's probability or a Poisson loss's prediction, by enumerating the
          2^p coalitions, p <= 16); "linear" (scikit-learn's linear models and linear
          discriminants: closed form; a logistic or discriminant probability, a naive Bayes or a
          log link by enumeration, p <= 16); "neighbors" (k-NN
          regressors and classifiers' probabilities, uniform or distance weights, Minkowski distances: the
          2^p coalitions of each pair of rows from the training rows, p <= 16, near ties decided
          by the model); "network" (MLPRegressor and MLPClassifier's probability or log-odds: their
          layers on the 2^p coalitions of each pair of rows, p <= 16 and 2^p times the work per
          coalition <= 2^25; and kernel machines whose kernel is not a product, a Gaussian process
          with a Matern, RationalQuadratic or DotProduct kernel, kernel ridge and SVMs with a
          polynomial or sigmoid kernel: a unit per anchor, p <= 12 for an exp per unit, 14 for a
          polynomial); "quadratic" (a quadratic discriminant, a linear model on degree-2
          polynomial features: the 2^p coalitions of the quadratic margin, p <= 16); "ensemble" (a
          VotingRegressor, a soft VotingClassifier's probability, a StackingRegressor with a linear
          final estimator: the weighted sum of its members' exact paths; a binary
          CalibratedClassifierCV's sigmoid or isotonic calibration: its folds' paths through their
          calibrations, p <= 16;
          a TransformedTargetRegressor with a scaler or a log: its regressor's path, rescaled or
          through exp).
          Taken where the structure
          gives the explained ``output`` on the background; every explain checks it on the
          explained rows (one model call) and the model's state against fit's (a hash).
        - "auto": the exact path where it applies; else exact when 2^d <= ``max_evals``; else
          "leverage_cv", "leverage" or "orthogonal" by d, budget and ``background_parts``
          (``algorithm_`` says which).
    max_evals : int or "auto", default="auto"
        Evaluations of the value function per explained row (walks: 2 + d − 1 per ordering;
        exact: 2^d). "auto" is max(500, 2 + 20 (d − 1)).
    tol : float or None, default=None
        Early stopping for permutation walks: a row stops once all its standard errors are below it.
    lam : float, default=4.0
        Mallows kernel bandwidth λ of "herding" and "sbq".
    n_candidates : int, default=25
        Candidate orderings per greedy step of "herding" and "sbq".
    background_size : int or None, default=100
        Background rows kept from ``fit`` data (a reproducible subsample); None keeps all.
    feature_groups : dict or None, default=None
        {group name: [columns by name or index]}: columns kept or replaced together, one value per
        group; players are ordered by their first column.
    allow_nan : "auto" or bool, default="auto"
        Whether NaN in the data reaches the model; "auto": yes for estimators and xgboost, no for
        a plain callable.
    output : {"auto", "margin", "log_odds", "probability", "predict"}, default="auto"
        What is explained. "auto": a classifier's margin where it has one (its
        ``decision_function``, xgboost's or LightGBM's raw score), else its log-odds; an outlier
        detector's ``decision_function`` (its score, not its ±1 label); a regressor's prediction.
    background_parts : "auto" or int, default="auto"
        Games each row's game is split into, one per equal part of the background (an int must
        divide N), each with its own draws at the same model rows; the row's values are their
        mean. 1 is shap's way. "auto": see
        :func:`~sklearn_shapq.explainers._auto_algorithm.resolve_parts` and the user guide.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where masked rows are built (numba on cpu, cupy on cuda); xgboost predicts there too.
    batch_size : int or "auto", default="auto"
        Most model rows per model call, at least one coalition's; "auto": 31 MiB of float64 rows
        on the CPU, 128 MiB on a GPU.
    random_state : None, int, numpy Generator or RandomState, default=None
        Seed of the background subsample and of every draw; a row's draws are keyed by its values,
        so it gets the same values alone or in any batch.
    progress : bool, default=True
        Show a progress bar once ``explain`` has run 3 s.
    n_jobs : int or None, default=None
        Model calls run at once in threads (joblib's meaning); results do not depend on it.
    sampler : str
        Deprecated: renamed ``algorithm`` in 1.0 (it names algorithms that sample no orderings);
        removed in 1.1.

    Attributes
    ----------
    background_ : ndarray of shape (N, d)
    expected_value_ : float or ndarray of shape (n_outputs,)
        v(∅): the mean model output over the background.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``fit`` got a DataFrame.
    feature_names_ : list of str
    feature_groups_ : FeatureGroups
        The players' names and the player of each column.
    n_outputs_ : int
    output_names_ : list of str or None
    algorithm_ : str
        The algorithm ``explain`` uses ("auto" resolved for the model, d and the budget).
    max_evals_ : int
        Evaluations per row; 0 on an exact path.
    background_parts_ : int
    exact_refusals_ : list of str
        Why ``"auto"`` sampled a model whose kind an exact path reads: "path: reason" for each such path
        (a boosted classifier's probability past 16 players, say); empty where a path was taken or none
        reads the model's kind.

    Notes
    -----
    ``explain`` changes no attribute (threads may share an explainer); ``explanation.diagnostics``
    holds "algorithm", "background_parts", "n_evals" per row, "n_model_rows", "n_model_calls" and
    "control_players" (K where "auto" sampled a linked tree ensemble past 16 players less the exact game of each
    row's top K players, else 0).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> explainer = PermutationShapExplainer(model, background_size=50, random_state=0).fit(X)
    >>> explanation = explainer.explain(X.iloc[:5])
    >>> explanation.values.shape, explanation.feature_names[:2]
    ((5, 10), ['age', 'sex'])
    >>> import numpy as np
    >>> bool(np.allclose(explanation.values.sum(1) + explanation.base_values, model.predict(X.iloc[:5])))
    True
    """

    _parameter_constraints: dict = {
        "model": "no_validation",
        "algorithm": [RegistryNames(SHAPLEY_ALGORITHMS, extra=("auto", *EXACT_PATHS))],
        "max_evals": MAX_EVALS,
        "tol": [Interval(Real, 0, None, closed="neither"), None],
        "lam": [Interval(Real, 0, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "background_size": [Interval(Integral, 1, None, closed="left"), None],
        "feature_groups": [dict, None],
        "background_parts": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "allow_nan": [StrOptions({"auto"}), "boolean"],
        "output": [StrOptions(set(OUTPUTS))],
        "device": DEVICE,
        "batch_size": BATCH_SIZE,
        "random_state": RANDOM_STATE,
        "progress": PROGRESS,
        "n_jobs": N_JOBS,
        "sampler": renamed([RegistryNames(SHAPLEY_ALGORITHMS, extra=("auto", *EXACT_PATHS))]),
    }

    def __init__(
        self,
        model: Any,
        *,
        algorithm: str = "auto",
        max_evals: int | str = "auto",
        tol: float | None = None,
        lam: float = DEFAULT_LAMBDA,
        n_candidates: int = DEFAULT_CANDIDATES,
        background_size: int | None = 100,
        feature_groups: dict | None = None,
        background_parts: str | int = "auto",
        allow_nan: str | bool = "auto",
        output: str = "auto",
        device: str = "cpu",
        batch_size: int | str = "auto",
        random_state: Any = None,
        progress: bool = True,
        n_jobs: int | None = None,
        sampler: str = RENAMED,
    ) -> None:
        self.model = model
        self.algorithm = algorithm
        self.max_evals = max_evals
        self.tol = tol
        self.lam = lam
        self.n_candidates = n_candidates
        self.background_size = background_size
        self.feature_groups = feature_groups
        self.background_parts = background_parts
        self.allow_nan = allow_nan
        self.output = output
        self.device = device
        self.batch_size = batch_size
        self.random_state = random_state
        self.progress = progress
        self.n_jobs = n_jobs
        self.sampler = sampler

    def _resolve(self, d: int, n_background: int) -> tuple[str, int, int]:
        """Return the estimator, budget and parts for d features; refuse what cannot run, before any work."""
        requested = renamed_parameter(self, "sampler", "algorithm")
        if requested in EXACT_PATHS:
            return requested, 0, 1
        algorithm, budget, parts = resolve_algorithm(
            requested,
            self.max_evals,
            d,
            self.background_parts,
            self.tol,
            n_background,
        )
        exact_by_auto = requested == "auto" and algorithm == "exact"  # nothing to stop early
        if self.tol is not None and not exact_by_auto and not SHAPLEY_ALGORITHMS[algorithm].supports_tol:
            raise ValueError(f"tol stops permutation walks early; algorithm {algorithm!r} has no early stopping.")
        return algorithm, budget, parts

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # NaN is taken where it reaches a model that takes it (allow_nan), not merely passed on to one that fails
        allow_nan = self.allow_nan if self.allow_nan != "auto" else takes_missing_values(self.model)
        tags.input_tags.allow_nan = bool(allow_nan)
        tags.input_tags.categorical = True  # raw tables: category and string columns reach the model as they are
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> PermutationShapExplainer:
        """Store the background set, compute the base value and plan the budget.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, d)
            Background data.
        y : ignored

        Returns
        -------
        self
        """
        model_names = getattr(self.model, "feature_names_in_", None)
        nan_policy = missing_value_policy(self.allow_nan, self.model)
        array, names, codec = check_table(X, name="X", feature_names=model_names, **nan_policy)
        feature_names = default_feature_names(array.shape[1], names, model_names)
        groups = resolve_feature_groups(self.feature_groups, feature_names)
        keep = background_subsample(array.shape[0], self.background_size, self.random_state)
        if keep is not None:
            array = array[keep]
        plan = self._resolve(groups.n_players, array.shape[0])
        backend = resolve_backend(self.device)
        with backend.activate():
            model_fn = make_model_function(self.model, self.output, backend, codec)
            game = InterventionalGame(model_fn, backend.to_device(array), backend.to_device(array[:1]))
            empty = backend.to_numpy(game.base_value)
            self._background_outputs = backend.to_numpy(game.background_outputs)
        refusals: list[str] = []
        self._exact_path = self._fitted_exact_path(array, codec, groups, model_fn.output, refusals)
        if self._exact_path is not None:
            plan = (self._exact_path.name, 0, 1)
        self._control = self._fitted_control(array, codec, groups, model_fn.output) if plan[1] else None
        # what the exact path read stays valid while the model's state does (checked at every explain)
        self._model_fingerprint = model_fingerprint(self.model) if self._exact_path is not None else None
        self.algorithm_, self.max_evals_, self.background_parts_ = plan  # set once nothing can fail: a refit
        self.exact_refusals_ = refusals
        self.background_ = array  # that raises leaves the previous fit whole
        self._codec = codec
        # n_features_in_, feature_names_in_ (a DataFrame's string names), without converting a raw table
        validate_data(self, X if names is not None else array, reset=True, skip_check_array=True)
        self.feature_names_ = feature_names
        self.feature_groups_ = groups
        self.n_outputs_ = game.n_outputs
        names_out = model_fn.output_names
        self.output_names_ = names_out if names_out is not None and len(names_out) == self.n_outputs_ else None
        self.expected_value_ = float(empty[0]) if self.n_outputs_ == 1 else empty
        self._fitted_model, self._fitted_plan = self.model, self._plan_settings()
        self._fitted_model_features = getattr(self.model, "n_features_in_", None)
        return self

    def _fitted_exact_path(
        self, background: np.ndarray, codec: Any, groups: Any, output: str, refusals: list[str]
    ) -> ExactPath | None:
        """Return the exact path ``algorithm`` takes (:func:`exact_path`), else None; ``refusals`` gets the reasons."""
        algorithm = renamed_parameter(self, "sampler", "algorithm")
        return exact_path(
            algorithm,
            self.model,
            output,
            background,
            self._background_outputs,
            groups,
            self.device,
            self.progress,
            codec,
            refusals,
        )

    def _fitted_control(self, background: np.ndarray, codec: Any, groups: Any, output: str) -> TopPlayersControl | None:
        """Return the control variate "auto" samples with, else None.

        Trees or weights through a link past the players their exact path enumerates: :class:`TopPlayersControl`.
        """
        if renamed_parameter(self, "sampler", "algorithm") != "auto" or groups.n_players <= LINKED_MAX_PLAYERS:
            return None
        try:
            path = linked_structure(self.model, output, background, self._background_outputs, groups, codec)
        except (TypeError, ValueError):
            return None
        return TopPlayersControl(path)

    def _exact_values(self, explained: ExplainedRows) -> tuple:
        """:meth:`_shapley_estimates` on an exact path: values, zero errors, dof, base values, diagnostics.

        The model's outputs on the rows are compared with the path's first (one model call, and the dual form's
        own check on its anchors) and its state with fit's. On a path that ``shares_rounding``,
        what the values miss of the model's outputs minus the base value, the model's own rounding (xgboost's
        float32 sums; at most the check's tolerance), is shared equally by the players: the least change that
        makes them efficient to the model.
        """
        n_rows, k = explained.array.shape[0], self.n_outputs_
        path, rows_in, outputs = self._checked_exact_path(explained)
        values = path.values(rows_in)
        empty = np.broadcast_to(self._background_outputs.mean(axis=0), (n_rows, k)).copy()
        if path.shares_rounding:
            values += (outputs.reshape(n_rows, k) - empty - values.sum(axis=1))[:, None, :] / values.shape[1]
        rows, calls = path.checked_model_use
        diagnostics = {
            "algorithm": self.algorithm_,
            "background_parts": 1,
            "n_evals": np.zeros(n_rows, dtype=np.int64),
            "n_model_rows": n_rows + rows,  # our check and the path's own
            "n_model_calls": 1 + calls,
            "control_players": 0,
        }
        return values, np.zeros_like(values), np.full(n_rows, np.inf), empty, diagnostics

    def _checked_exact_path(self, explained: ExplainedRows) -> tuple[ExactPath, Any, np.ndarray]:
        """Return the exact path, the rows as it takes them and the model's outputs (n, k) on them.

        A model whose outputs on the rows are not the path's (one model call), or whose state changed since fit
        (:func:`model_fingerprint`), is refused; a raw table's rows are decoded once (:func:`_path_rows`).
        """
        path = cast(ExactPath, self._exact_path)
        self._check_model_features()
        model_fn = make_model_function(self.model, self.output, resolve_backend("cpu"), explained.codec)
        outputs = np.asarray(model_fn(explained.array), dtype=np.float64)
        rows = _path_rows(explained)
        path.check(rows, outputs)
        # the model's state: a model refitted in place may still give those outputs, and the background's
        if model_fingerprint(self.model) != self._model_fingerprint:
            raise ValueError(
                f"The model's state differs from what the {path.name} path read from it in fit: it was refitted or "
                "changed in place since fit. Call fit again."
            )
        return path, rows, outputs

    def _plan_settings(self) -> tuple:
        """Return the parameters ``fit`` planned with (``explain`` refuses to run after they change)."""
        return (
            self.output,
            self.algorithm,
            self.sampler,
            self.max_evals,
            self.tol,
            self.feature_groups,
            self.background_parts,
        )

    def explain(self, X: Any) -> Any:
        """Explain rows of ``X``.

        Parameters
        ----------
        X : array-like, DataFrame, dask Array or dask DataFrame of shape (n, d)
            A dask collection is explained lazily, block by block (see :mod:`sklearn_shapq.dask`).

        Returns
        -------
        shap.Explanation
            ``values`` (n, n_players) or (n, n_players, n_outputs), ``base_values``, ``data`` (codes
            for a raw table, cells in ``display_data``), ``error_std`` and 95% bounds, ``diagnostics``.
        dask Array or dask DataFrame
            For a dask collection ``X``, lazily.
        """
        self._check_unchanged()
        if is_dask_collection(X):
            return lazy_explain(self, X)
        start_time = time.perf_counter()
        explained = self._explained_rows(X)
        if self._exact_path is not None:
            values, stderr, dof, empty, diagnostics = self._exact_values(explained)
        else:
            values, stderr, dof, empty, diagnostics = self._shapley_estimates(explained, self._shapley_plan(explained))
        return self._explanation(
            explained.array,
            explained.codec,
            values,
            empty,
            output_names=self.output_names_,
            error_std=stderr,
            error_dof=dof,
            compute_time=time.perf_counter() - start_time,
            diagnostics=diagnostics,
        )

    def explain_interactions(self, X: Any, *, index: str = "shap", max_evals: int | str = "auto") -> Any:
        """Pairwise interactions of rows of ``X``: enumerated when 2^p fits the budget, else unbiased estimates.

        The game of a row is the one :meth:`explain` explains (the interventional game over the
        background, of the players: features or groups). When 2^p ≤ ``max_evals`` every coalition
        is evaluated and the indices follow from the Möbius transform, exactly. Otherwise the pair
        index is estimated without bias on the row's background parts' games
        (``background_parts``; "auto": one part per background row, as for permutation walks), each
        with its own draws at N / parts model rows an evaluation, and averaged. The coalitions of
        the border sizes 0 … k and p − k … p are enumerated, k as large as the budget allows
        (:func:`~sklearn_shapq.algorithms.pair_design`): their share of the index is exact, and
        they fix a surrogate game (additive, or of order 2 from k = 2) whose pairs are known in
        closed form. The residual's middle sizes are sampled as complementary pairs of uniform
        size, and every sampled coalition serves every pair
        (:func:`~sklearn_shapq.algorithms.sampled_pair_interactions`); from 16 units they are
        regression-adjusted (an order-2 ridge fit with every pair up to 32 players, above with the
        pairs of the players of the largest slopes, a pair's prior growing with its players'
        slopes; each unit corrected by the fit without it, whose pairs are exact, the residual
        sampled: still unbiased; the errors widened 1.3x for the fits' dependence on the other
        units). The units are i.i.d.,
        so standard errors come with the estimates; the row sums Σ_j SII_ij come out exact. Draws
        are keyed by a row's content: a row gets the same interactions alone or in any batch. On the
        exact path (``algorithm_ == "product_kernel"``) the pairs are exact whatever ``max_evals``.

        Parameters
        ----------
        X : array-like, DataFrame, dask Array or dask DataFrame of shape (n, d)
            A dask collection gives the values lazily, block by block, as a dask Array
            (:func:`~sklearn_shapq.dask.lazy_interactions`).
        index : {"shap", "k-SII", "SII", "STII", "FSII"}, default="shap"
            What the (p, p) matrix of a row holds, with SII the Shapley interaction index and φ the
            Shapley values:

            - "shap": shap's ``shap_interaction_values`` convention, Φ_ij = SII_ij / 2 off the
              diagonal and Φ_ii = φ_i − Σ_{j≠i} Φ_ij; symmetric, row i sums to φ_i, the matrix to
              the output minus the base value.
            - "k-SII": SII_ij off the diagonal, the order-2 k-SII singletons φ_i − ½ Σ_{j≠i} SII_ij
              on it; the diagonal and the upper triangle sum to the output minus the base value.
            - "SII": SII_ij off the diagonal, φ_i on it; not efficient.
            - "STII": Shapley–Taylor of order 2, STII_ij off the diagonal and v({i}) − v(∅) on
              it; the diagonal and the upper triangle sum to the output minus the base value.
            - "FSII": Faith-Shap of order 2, the pairs and singletons of the order-2 polynomial
              closest to the game in the Shapley kernel's weights; the diagonal and the upper
              triangle sum to the output minus the base value. Enumerated only: ``max_evals``
              must reach 2^p (no unbiased estimator of it is known).

            φ are the exact Shapley values when the pairs are enumerated, else those of
            :meth:`explain` (computed in the same call, with its own budget and draws): the rows of
            "shap" sum to :meth:`explain`'s values exactly when the pairs are sampled, and to the
            exact values when they are enumerated (which :meth:`explain` samples unless its own
            ``max_evals`` reaches 2^p).
        max_evals : int or "auto", default="auto"
            Evaluations of the value function per row (each costs N model rows, as for
            :meth:`explain`) spent on the pairs: 2^p when that fits, else 2 + 2 Σ_{s≤k} C(p, s)
            for the enumerated sizes and two per sampled unit. "auto": max(1024, 50 p).

        Returns
        -------
        shap.Explanation or dask Array
            ``values`` (n, n_players, n_players) or (n, n_players, n_players, n_outputs);
            ``base_values``, ``data`` and ``feature_names`` as :meth:`explain` gives them;
            ``error_std`` and 95% bounds (zero when enumerated); ``diagnostics`` with "exact",
            "background_parts", "n_evals" per row, "n_model_rows" and "n_model_calls" (those of
            :meth:`explain`'s values included), and "control_players" (:meth:`explain`'s values').

        Raises
        ------
        ValueError
            An ``index`` not listed above, a ``max_evals`` below min(2^p, 2p + 6), or "FSII"
            with ``max_evals`` below 2^p.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.neighbors import KNeighborsRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 5))
        >>> model = KNeighborsRegressor(metric="cosine").fit(X, X[:, 0] * X[:, 1] + X[:, 2])  # sampled
        >>> explainer = PermutationShapExplainer(model, background_size=20, random_state=0).fit(X)
        >>> interactions = explainer.explain_interactions(X[:3])
        >>> interactions.values.shape, interactions.diagnostics["exact"]
        ((3, 5, 5), True)
        >>> bool(np.allclose(interactions.values.sum(axis=2), explainer.explain(X[:3]).values))
        True
        >>> bool(np.allclose(interactions.values.sum(axis=(1, 2)) + interactions.base_values, model.predict(X[:3])))
        True
        >>> sampled = explainer.explain_interactions(X[:3], max_evals=30)
        >>> sampled.diagnostics["exact"], sampled.error_std.shape
        (False, (3, 5, 5))
        """
        check_interaction_index(index)
        self._check_unchanged()
        if self.algorithm_ in EXACT_PATHS:  # exact pairs, whatever the budget
            budget = _interaction_budget(max_evals, self.feature_groups_.n_players)
        else:
            budget = _checked_budget(index, max_evals, self.feature_groups_.n_players)  # refused now, not on workers
        if is_dask_collection(X):
            return lazy_interactions(self, X, index=index, max_evals=max_evals)
        start_time = time.perf_counter()
        explained = self._explained_rows(X)
        if self.algorithm_ in EXACT_PATHS:
            return self._exact_interactions(explained, index, start_time)
        n_rows = explained.array.shape[0]
        p, k = self.feature_groups_.n_players, self.n_outputs_
        exact = p <= MAX_ENUMERATED_PLAYERS and 2**p <= budget
        border, n_units = (0, 0) if exact else pair_design(budget, p)
        parts = 1 if exact else self._interaction_parts(explained.background.shape[0], p, n_units)
        _, keys = self._row_keys(explained, stream=_INTERACTION_STREAM)
        evals = 2**p if exact else border_evals(border, p) + 2 * n_units
        backend = resolve_backend(self.device)
        model_rows = (n_rows * evals + 1) * explained.background.shape[0]
        shapley_plan = None if exact or index == "STII" else self._shapley_plan(explained)
        if shapley_plan is not None:  # φ from explain's plan, counted on the same bar
            model_rows += shapley_plan[2]
        with (
            backend.activate(),
            progress_bar(self.progress, model_rows, "explaining interactions", " model rows") as bar,
        ):
            game_of, background_outputs, checks = self._games_of(explained, backend, bar, parts)
            pairs, stderr, singles, dof, model_use = self._pair_blocks(
                game_of,
                n_rows,
                keys,
                index if exact else None,
                (border, n_units),
                "STII" if index == "STII" else "SII",
                parts,
            )
            empty = backend.to_numpy(background_outputs.mean(axis=0))
            shapley_estimates = None if shapley_plan is None else self._shapley_estimates(explained, shapley_plan, bar)
        diagnostics = {
            "exact": exact,
            "background_parts": parts,
            "n_evals": np.full(n_rows, evals),
            "n_model_rows": model_use[0] + checks[0],
            "n_model_calls": model_use[1] + checks[1],
            "control_players": 0,
        }
        if exact:  # pairs is the matrix of ``index`` already
            values, stderr = pairs, np.zeros_like(pairs)
        else:
            diagonal = np.arange(p)
            if shapley_estimates is None:  # STII: the Möbius singletons are exact
                diagonal_stderr = np.zeros_like(singles)
            else:
                row_sums_stderr, (singles, singles_stderr, singles_dof, _, shapley) = singles, shapley_estimates
                factor = 0.0 if index == "SII" else 0.25  # Var(φ_i − c Σ_j SII_ij), φ drawn apart: c = ½
                diagonal_stderr = np.sqrt(singles_stderr**2 + factor * row_sums_stderr**2)
                dof = np.minimum(dof, singles_dof)
                for key in ("n_model_rows", "n_model_calls"):
                    diagnostics[key] += shapley[key]
                diagnostics["control_players"] = shapley["control_players"]  # the values' (the pairs: none)
            values = interaction_matrix(pairs, singles, index)
            if index == "shap":
                stderr = stderr / 2.0
            stderr[:, diagonal, diagonal] = diagonal_stderr
        return self._explanation(
            explained.array,
            explained.codec,
            values,
            np.broadcast_to(empty, (n_rows, k)).copy(),
            output_names=self.output_names_,
            error_std=stderr,
            error_dof=dof,
            compute_time=time.perf_counter() - start_time,
            diagnostics=diagnostics,
        )

    def _exact_interactions(self, explained: ExplainedRows, index: str, start_time: float) -> Any:
        """:meth:`explain_interactions` on the exact path: the game's exact pairs."""
        n_rows, k = explained.array.shape[0], self.n_outputs_
        path, rows_in, _ = self._checked_exact_path(explained)
        values = path.interactions(rows_in, index)
        rows, calls = path.checked_model_use
        diagnostics = {
            "exact": True,
            "background_parts": 1,
            "n_evals": np.zeros(n_rows, dtype=np.int64),
            "n_model_rows": n_rows + rows,  # our check and the path's own
            "n_model_calls": 1 + calls,
            "control_players": 0,
        }
        return self._explanation(
            explained.array,
            explained.codec,
            values,
            np.broadcast_to(self._background_outputs.mean(axis=0), (n_rows, k)).copy(),
            output_names=self.output_names_,
            error_std=np.zeros_like(values),
            error_dof=np.full(n_rows, np.inf),
            compute_time=time.perf_counter() - start_time,
            diagnostics=diagnostics,
        )

    def _interaction_parts(self, n_background: int, n_players: int, n_units: int) -> int:
        """Background parts of the sampled pairs: ``background_parts``; "auto" one per background row.

        Where the middle sizes are regression-adjusted (a fit of O(p²) coefficients per part), "auto"
        gives at most max(:data:`MIN_REGRESSION_PARTS`, N · 10 / p) parts, a divisor of N.
        """
        if self.background_parts == "auto":
            if not regression_adjusted(n_players, n_units):
                return n_background
            most = max(MIN_REGRESSION_PARTS, n_background * REGRESSION_SPLIT_FEATURES / n_players)
            return max(q for q in range(1, n_background + 1) if n_background % q == 0 and q <= most)
        parts = int(self.background_parts)
        if n_background % parts:
            raise ValueError(
                f"background_parts={parts} must divide the {n_background} background rows (background_size)."
            )
        return parts

    def _pair_blocks(
        self,
        game_of: Callable[[slice], InterventionalGame],
        n_rows: int,
        keys: np.ndarray,
        exact_index: str | None,
        design: tuple[int, int],
        pair_index: str,
        parts: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
        """Pairs of every row, block by block: the matrix of ``exact_index`` by enumeration, else sampled estimates.

        Returns
        -------
        pairs, stderr : (n, p, p, k)
            The matrix of ``exact_index`` (zero errors); sampled: the pair index ``pair_index`` (zero
            diagonal), merged over the ``parts`` games of each row, and its standard errors.
        singles : (n, p, k)
            Sampled: the standard errors of the pairs' row sums for SII, v({i}) − v(∅) for STII.
        dof : (n,); (model rows, model calls)
        """
        p, k = self.feature_groups_.n_players, self.n_outputs_
        border, n_units = design
        if exact_index is not None:
            per_game = 8 * 2**p * (2 * p + 4 * k + p * k) + 64 * p * p * k
        else:
            per_game = sampled_pair_bytes(p, border, n_units, k)
        games_step = int(np.clip(_BLOCK_BYTES // per_game, 1, _MAX_GAMES_PER_BLOCK))
        rows_step = max(1, games_step // parts)
        pairs = np.zeros((n_rows, p, p, k))
        merge = BackgroundPartsMerge(n_rows, p * p + 2 * p, k, parts)
        model_rows = model_calls = 0
        for start in range(0, n_rows, rows_step):
            rows = slice(start, min(start + rows_step, n_rows))
            with game_of(rows) as game:
                players = game if self.feature_groups is None else GroupedGame(game, self.feature_groups_)
                games = np.arange(players.n_games)
                backend = game.backend
                if exact_index is not None:
                    block_pairs, block_singles = enumerated_interactions(players, games, exact_index)
                    pairs[rows] = backend.to_numpy(
                        interaction_matrix(block_pairs, block_singles, exact_index, backend.xp)
                    )
                else:
                    block_keys = split_keys(keys[rows], parts) if parts > 1 else keys[rows]
                    estimate = sampled_pair_interactions(players, games, block_keys, n_units, pair_index, border)
                    xp, n_games = backend.xp, len(games)
                    last = estimate.singles if pair_index == "STII" else estimate.row_sums_stderr
                    flat = xp.concatenate(
                        [estimate.pairs.reshape(n_games, p * p, k), last, xp.zeros_like(last)], axis=1
                    )
                    flat_stderr = xp.concatenate(
                        [estimate.pairs_stderr.reshape(n_games, p * p, k), xp.zeros_like(last), last], axis=1
                    )
                    merge.add(
                        start + games // parts,
                        ShapleyEstimate(flat, flat_stderr, estimate.dof, estimate.n_evals),
                        backend,
                    )
                model_rows, model_calls = model_rows + game.n_model_rows, model_calls + game.n_model_calls
        if exact_index is not None:
            return (
                pairs,
                np.zeros_like(pairs),
                np.zeros((n_rows, p, k)),
                np.full(n_rows, np.inf),
                (model_rows, model_calls),
            )
        merged = merge.result()
        merged_pairs = merged.values[:, : p * p].reshape(n_rows, p, p, k)
        merged_stderr = merged.stderr[:, : p * p].reshape(n_rows, p, p, k)
        # STII: the merged singletons (mean over parts); SII: the merged row sums' standard errors
        last = merged.values[:, p * p : p * p + p] if pair_index == "STII" else merged.stderr[:, p * p + p :]
        return merged_pairs, merged_stderr, last, merged.dof, (model_rows, model_calls)

    def _check_unchanged(self) -> None:
        """Refuse to explain before ``fit`` or after the model or the planned parameters changed."""
        check_is_fitted(self, "background_")
        self._validate_params()  # parameters set after fit (batch_size, n_jobs, device, …)
        if self.model is not self._fitted_model or self._plan_settings() != self._fitted_plan:
            raise ValueError(
                "model, output, algorithm, max_evals, tol, feature_groups or background_parts changed since fit: call "
                "fit again so that the base value, the players and the plan of the budget match."
            )

    def _shapley_plan(self, explained: ExplainedRows) -> tuple[Any, np.ndarray, int]:
        """Return the fitted plan's estimator for checked rows, the rows' keys and the model rows it will spend."""
        seed, keys = self._row_keys(explained, stream=1)
        estimator = SHAPLEY_ALGORITHMS[self.algorithm_](
            self.max_evals_,
            self.feature_groups_.n_players,
            seed,
            tol=self.tol,
            lam=self.lam,
            n_candidates=self.n_candidates,
        )
        # an evaluation: N rows, as many as the estimator spends (2^d for "exact"); one more for the check
        return estimator, keys, (explained.array.shape[0] * estimator.n_evals + 1) * explained.background.shape[0]

    def _shapley_estimates(
        self, explained: ExplainedRows, plan: tuple[Any, np.ndarray, int], bar: Any = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Return Shapley values of checked rows, their errors (n, p, k), dof (n,), base values (n, k), diagnostics.

        ``plan``: :meth:`_shapley_plan`'s. ``bar``: a progress bar whose total includes these model rows,
        else a bar of their own.
        """
        n_rows = explained.array.shape[0]
        estimator, keys, model_rows = plan
        backend = resolve_backend(self.device)
        counting = (
            nullcontext(bar)
            if bar is not None
            else progress_bar(self.progress, model_rows, "explaining", " model rows")
        )
        with backend.activate(), counting as counted:
            game_of, background_outputs, checks = self._games_of(explained, backend, counted, self.background_parts_)
            control_of = None
            if self._control is not None:
                control, path_rows = self._control, _path_rows(explained)

                def control_of(rows: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                    return control.tables(path_rows[rows], self.background_parts_)

            values, stderr, dof, n_evals, model_use = self._estimate(game_of, n_rows, estimator, keys, control_of)
            empty = backend.to_numpy(background_outputs.mean(axis=0))
        diagnostics = {
            "algorithm": self.algorithm_,
            "background_parts": self.background_parts_,
            "n_evals": n_evals,
            "n_model_rows": model_use[0] + checks[0],
            "n_model_calls": model_use[1] + checks[1],
            "control_players": 0 if self._control is None else self._control.n_top,
        }
        return values, stderr, dof, np.broadcast_to(empty, (n_rows, self.n_outputs_)).copy(), diagnostics

    def _games_of(
        self, explained: ExplainedRows, backend: Any, bar: Any, parts: int
    ) -> tuple[Callable[[slice], InterventionalGame], Any, tuple[int, int]]:
        """Return the games of blocks of explained rows, the background's outputs (device), the cost of checking them.

        ``game_of(rows, model_caller=None)`` is the interventional game of rows ``rows`` split into
        ``parts`` games each; its model calls count on ``bar`` and run through ``model_caller``; the
        first block's v(N) call checks the background's outputs.
        """
        array = explained.array
        model_fn = make_model_function(self.model, self.output, backend, explained.codec)
        background_outputs, checked, checks = self._current_background_outputs(backend, model_fn, explained.background)
        background_outputs = backend.to_device(background_outputs)
        model_fn = model_fn.counted(bar)
        background = backend.to_device(explained.background)

        def game_of(rows: slice, model_caller: Any = None) -> InterventionalGame:
            return InterventionalGame(
                model_fn,
                background,
                backend.to_device(array[rows]),
                self.batch_size,
                background_outputs=background_outputs,
                check_background=checked and rows.start == 0,
                n_jobs=effective_n_jobs(self.n_jobs),
                parts=parts,
                model_caller=model_caller,
            )

        return game_of, background_outputs, checks

    def _current_background_outputs(
        self, backend: Any, model_fn: Any, background: np.ndarray
    ) -> tuple[np.ndarray, bool, tuple[int, int]]:
        """Return the model's outputs on ``background`` (N, n_outputs), whether the first game checks them, the cost.

        A model changed since ``fit`` is refused; a background recast to other dtypes is checked in a call of its own.
        """
        self._check_model_features()
        if background is self.background_:
            return self._background_outputs, True, (0, 0)
        fitted_fn = make_model_function(self.model, self.output, backend, self._codec)
        check_same_outputs(backend.to_numpy(fitted_fn(backend.to_device(self.background_))), self._background_outputs)
        n_rows = background.shape[0]
        return backend.to_numpy(model_fn(backend.to_device(background))), False, (2 * n_rows, 2)

    def _check_model_features(self) -> None:
        """Refuse a model that now takes another number of features than at ``fit`` (it was refitted)."""
        model_features = getattr(self.model, "n_features_in_", None)
        if model_features is not None and model_features != self._fitted_model_features:
            raise ValueError(
                f"The model now takes {model_features} features, but {self._fitted_model_features} when the "
                "explainer was fitted: it was refitted; call fit again."
            )

    def _games_per_block(self, game: InterventionalGame, estimator: ShapleyAlgorithm, control_bytes: int = 0) -> int:
        """Games per block: enough to fill the model calls and the kernels' threads, few enough to bound memory.

        ``control_bytes``: a control variate's memory per game (:meth:`TopPlayersControl.bytes_per_game`).
        """
        coalitions = max(1, estimator.n_evals - 2)
        by_batch = game.n_jobs * game.batch_rows // max(1, coalitions * game.rows_per_coalition)
        by_batch = max(by_batch, _MIN_GAMES_PER_BLOCK)
        by_memory = _BLOCK_BYTES // max(1, estimator.bytes_per_game(game.n_outputs) + control_bytes)
        return int(np.clip(min(by_batch, by_memory), 1, _MAX_GAMES_PER_BLOCK))

    @staticmethod
    def _overlaps(game: InterventionalGame) -> bool:
        """Whether blocks overlap: on the CPU, with two numba threads or more, model calls on one thread.

        A GPU's kernels queue on its stream; with ``n_jobs`` the model calls already run on threads.
        """
        return not game.backend.is_gpu and numba.get_num_threads() > 1 and game.n_jobs == 1

    def _estimate(
        self,
        game_of: Callable[..., InterventionalGame],
        n_rows: int,
        estimator: ShapleyAlgorithm,
        keys: np.ndarray,
        control_of: Callable[[slice], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
        """Estimate every row block by block on ``game_of(rows)``, merging a split row's parts.

        ``control_of(rows)``: the control variate of a block's games, their players and tables, and the rows' exact
        control values (:meth:`TopPlayersControl.tables`): the games estimated are the residuals
        (:class:`ResidualGame`), and each row's values get its control's back.

        Blocks overlap (:func:`overlapped`, where :meth:`_overlaps`): the rows are cut into
        :data:`OVERLAPPED_BLOCKS` blocks, fewer where a block would hold under :data:`OVERLAPPED_MIN_ROWS`
        model rows, and one block's model calls run (on this thread) beside the previous block's
        estimator; the values are those of block after block.

        Returns
        -------
        values, stderr : (n, d, n_outputs); dof, n_evals : (n,); (model rows, model calls)
        """
        parts = self.background_parts_
        with game_of(slice(0, 1)) as probe:  # the block sizes (no model call)
            # the control's tables: three blocks' alive where the blocks' bound counts two (one is asked ahead)
            control_bytes = 0 if control_of is None or self._control is None else self._control.bytes_per_game(probe)
            control_bytes = 3 * control_bytes // 2
            games_step = self._games_per_block(probe, estimator, control_bytes)
            overlap = self._overlaps(probe)
            model_rows_per_row = parts * max(1, estimator.n_evals - 2) * probe.rows_per_coalition
        rows_step = max(1, games_step // parts)
        if overlap:
            rows_step = min(
                rows_step, max(-(-n_rows // OVERLAPPED_BLOCKS), -(-OVERLAPPED_MIN_ROWS // model_rows_per_row))
            )
        merge = BackgroundPartsMerge(n_rows, self.feature_groups_.n_players, self.n_outputs_, parts)

        def block_estimates(
            block: tuple[slice, Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]] | None], caller: CallerThread
        ) -> tuple[list, Any, int, int, tuple[slice, np.ndarray] | None]:
            rows, control = block
            block_keys = split_keys(keys[rows], parts) if parts > 1 else keys[rows]
            with game_of(rows, caller.call if overlap else None) as game:
                players: Game = game if self.feature_groups is None else GroupedGame(game, self.feature_groups_)
                if control is not None:  # asked for after the block's model calls
                    players = ResidualGame(players, lambda: control()[:2])
                game.full_value  # v(N) = f(x) of the block's rows: one model call  # noqa: B018
                estimates = []
                for first in range(0, players.n_games, games_step):
                    games = np.arange(first, min(first + games_step, players.n_games))
                    if parts > 1:
                        split = RowParts(keys[rows][games // parts], games % parts, parts)
                        estimate = estimator.estimate_parts(players, games, block_keys[games], split)
                    else:
                        estimate = estimator.estimate(players, games, block_keys[games])
                    estimates.append((rows.start + games // parts, estimate))
                exact = None if control is None else (rows, control()[2])
                return estimates, game.backend, game.n_model_rows, game.n_model_calls, exact

        blocks = [slice(start, min(start + rows_step, n_rows)) for start in range(0, n_rows, rows_step)]
        config = sklearn.get_config()  # the caller's scikit-learn settings, for the preprocessing the control runs
        controls_pool = None
        if control_of is not None and overlap:  # one core fewer: the tables are made beside the model's calls
            controls_pool = ThreadPoolExecutor(
                1,
                thread_name_prefix="sklearn_shapq-control",
                initializer=numba.set_num_threads,
                initargs=(max(1, numba.get_num_threads() - 1),),
            )

        def control_tables(rows: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            with sklearn.config_context(**config):
                return cast(Callable, control_of)(rows)

        def blocks_and_controls() -> Iterator[tuple[slice, Callable[[], tuple] | None]]:
            """Each block and its control's tables (a function, called where needed).

            Where blocks overlap, the tables are computed on a thread of their own, block after block, asked one
            block ahead, so that they are ready when the block's model calls end; else on the block's thread.
            """
            if control_of is None:
                yield from ((rows, None) for rows in blocks)
            elif controls_pool is None:
                yield from ((rows, functools.cache(functools.partial(control_of, rows))) for rows in blocks)
            else:
                ahead = [controls_pool.submit(control_tables, rows) for rows in blocks[:1]]
                for index, rows in enumerate(blocks):
                    ahead += [controls_pool.submit(control_tables, later) for later in blocks[index + 1 : index + 2]]
                    yield rows, ahead.pop(0).result

        model_rows = model_calls = 0
        controls = []
        try:
            with closing(overlapped(block_estimates, blocks_and_controls(), overlap and len(blocks) > 1)) as results:
                for estimates, backend, block_rows, block_calls, exact in results:
                    for row_of, estimate in estimates:
                        merge.add(row_of, estimate, backend)
                    model_rows, model_calls = model_rows + block_rows, model_calls + block_calls
                    controls += [] if exact is None else [exact]
        finally:
            if controls_pool is not None:
                controls_pool.shutdown(wait=True, cancel_futures=True)
        rows_estimate = merge.result()
        for rows, control_values in controls:  # the control's exact values, which the residuals' estimates lack
            rows_estimate.values[rows] += control_values
        return (
            rows_estimate.values,
            rows_estimate.stderr,
            rows_estimate.dof,
            rows_estimate.n_evals,
            (model_rows, model_calls),
        )


def _path_rows(explained: ExplainedRows) -> Any:
    """Return the explained rows as an exact path takes them: the array, or a raw table decoded by its own codes."""
    return explained.array if explained.codec is None else explained.codec.decode(explained.array)
