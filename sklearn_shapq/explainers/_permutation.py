"""``PermutationShapExplainer``: interventional Shapley values of any model from permutations."""

from __future__ import annotations

import time
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

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
    missing_value_policy,
)
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS, ShapleyAlgorithm
from sklearn_shapq.algorithms._moments import satterthwaite_dof
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.dask import is_dask_collection, lazy_explain
from sklearn_shapq.explainers._auto_sampler import resolve_sampler
from sklearn_shapq.explainers._base import ModelExplainerMixin
from sklearn_shapq.games import OUTPUTS, GroupedGame, InterventionalGame, check_same_outputs, make_model_function
from sklearn_shapq.games._table_codec import keyed_content
from sklearn_shapq.samplers import DEFAULT_CANDIDATES, DEFAULT_LAMBDA, row_keys, split_keys
from sklearn_shapq.samplers._keyed import draw_seed

_MAX_GAMES_PER_BLOCK = 4096
_MIN_GAMES_PER_BLOCK = 8
"""Games a block holds at least, memory permitting, even when fewer fill the model's calls: the
estimators' kernels split a block's games among threads (Leverage SHAP's regressions at d = 200,
one game a block, ran on one thread)."""
_BLOCK_BYTES = 48 * 2**20
"""Working memory of the estimator for one block of games, in arrays of about a third of it each:
large temporaries (above glibc's 32 MiB mmap threshold) were page-faulted anew on every block."""


class PermutationShapExplainer(ModelExplainerMixin, BaseEstimator):
    """Interventional Shapley values of any model, estimated from sampled permutations.

    The game of an explained row x is v_x(S) = mean over background rows z of f(x_S, z_{N∖S}).
    Its Shapley values are estimated by walking orderings of the features (every walk telescopes,
    so values plus base value equal the model output exactly), or computed exactly by enumerating
    all 2^d coalitions when that fits the budget. Rows, orderings and coalitions are batched into
    large model calls; Python loops run only over blocks of them.

    Parameters
    ----------
    model : estimator, xgboost model or callable
        A fitted scikit-learn regressor, classifier or Pipeline, an xgboost sklearn model or
        Booster, or a callable mapping an (n, d) array to (n,) or (n, k) outputs. With
        ``device="cuda"`` a callable receives cupy arrays. A callable gets a new array on every
        call, which it may keep; an estimator's input may share memory with buffers that later
        calls overwrite, so a ``predict`` that keeps its input must copy it. A model that raises
        makes ``explain`` raise its error once the model calls in flight have returned; the
        explainer stays usable. Data may be a raw DataFrame with
        string, category, bool and number columns (e.g. for a Pipeline that encodes them): the
        model then gets DataFrames with the same columns and dtypes, whose cells are taken whole
        from the explained and background rows.
    sampler : str, default="auto"
        How coalitions are chosen (see the user guide for the evidence behind each):

        - "exact": all 2^d coalitions (d <= 30).
        - Permutation walks, all unbiased and exactly efficient: "mc" (i.i.d. uniform orderings),
          "antithetic" (an ordering and its reverse: exact for games with at most pairwise
          interactions), "orthogonal" (orthogonal spherical codes: blocks of 2 (d − 1) orderings
          from an orthonormal basis and its antipodes), "sobol" (scrambled Sobol points on the
          sphere), "herding" (kernel herding) and "sbq" (sequential Bayesian quadrature, weighted),
          both with the Mallows kernel. mc, antithetic and orthogonal draw independent orderings
          for every row; sobol, herding and sbq build one design per ``explain`` call that every
          row walks.
        - "leverage": Leverage SHAP (Musco & Witter 2025), a regression on complementary pairs of
          coalitions with the same number of coalitions of every size, drawn without replacement
          (sizes listed whole when the budget covers them); exactly efficient, exact for games
          with at most pairwise interactions; jackknife standard errors. Measured here 1.2-3x
          lower error than the permutation samplers at 5d-20d evaluations (d = 8 and 30).
        - "leverage_cv": Leverage SHAP on the game minus a cross-fitted surrogate (boosted
          oblivious trees fitted on the evaluated coalitions, 10 folds) plus the surrogate's exact
          Shapley values, with a finite-population correction for the draws without replacement;
          no extra model evaluations, still exactly efficient. From 10 sampled pairs; with fewer it
          is Leverage SHAP. Measured 0.2-1.0x Leverage SHAP's error (benchmarks/bench_accuracy.py);
          the fit costs about 300 · 2P · d additions per row for P pairs, which shows next to
          cheap models at large d.
        - "kernel": paired KernelSHAP, Leverage SHAP's regression with sizes drawn by the Shapley
          kernel (the baseline users know from shap).
        - Baselines: "owen", "owen_halved" (Owen's multilinear extension on a q-grid, plain or
          antithetic) and "stratified" (Castro et al. 2017, strata of feature × coalition size
          with variance-proportional reallocation). They are not exactly efficient.
        - "auto", by measurement (user guide, "Samplers and budget"): exact when 2^d <=
          ``max_evals``; else on the game split by ``background_parts``, "leverage" for d <= 24
          and ``max_evals`` >= 3d, "orthogonal" otherwise; "leverage_cv" for d <= 100 (and
          ``max_evals`` >= 3d) where ``max_evals`` is 40% of 2^d or more or nothing is split (one
          background row, ``tol``, ``background_parts=1``); else "orthogonal" (plain "mc" when
          the budget cannot pay for a pair of orderings).
    max_evals : int or "auto", default="auto"
        Evaluations of the value function per explained row. Walks count v(∅) and v(N) once and
        d − 1 per ordering (antithetic and orthogonal spend whole pairs); exact costs 2^d;
        Owen 2 n_q (d + 1) for a q-grid of n_q points (at least 4 (d + 1)); stratified 2 per
        marginal sample (at least 8 d²). "auto" is max(500, 2 + 20 (d − 1)).
    tol : float or None, default=None
        Early stopping for permutation walks: an explained row stops adding sampling units once
        every standard error of it is below ``tol`` (checked about 10 times over the budget).
        ``explanation.diagnostics["n_evals"]`` records what each row used.
    lam : float, default=4.0
        Mallows kernel bandwidth λ of "herding" and "sbq".
    n_candidates : int, default=25
        Uniform candidate orderings per greedy step of "herding" and "sbq".
    background_size : int or None, default=100
        Background rows kept from ``fit`` data (a reproducible random subsample); None keeps all.
    feature_groups : dict or None, default=None
        Columns explained together, as one player: {group name: [columns by name or index]}.
        A group's columns are kept or replaced by background cells together, and the group gets
        one value, under its name (e.g. the one-hot columns of one variable, a sensor's channels).
        A column may be in one group only; a column no group names stays a player of its own.
        Players are ordered by their first column. With groups, ``data`` holds a group's cells
        as NaN and ``display_data`` as its cells joined by ", ".
    allow_nan : "auto" or bool, default="auto"
        Whether missing values (NaN in number and category columns) in the data reach the model
        (a missing cell of a string column is passed as it was, None or NaN, like any string).
        "auto": yes for estimators and xgboost models (one that cannot take them fails with an
        error naming it), no for a plain callable (say ``allow_nan=True`` if it takes NaN). A
        model that returns NaN or infinity is always an error.
    output : {"auto", "margin", "log_odds", "probability", "predict"}, default="auto"
        What is explained. "auto": a classifier's margin (``decision_function`` or xgboost's
        margin) where it has one, else its log-odds; a regressor's prediction. A binary classifier
        gives one output (the positive class), a multiclass one gives one output per class.
    background_parts : "auto" or int, default="auto"
        Split each row's game into this many games, one per equal part of the background, each
        estimated with its own draws at the budget of ``max_evals`` evaluations; the row's values
        are their mean. The game of a row x is the mean over background rows z of
        f(x_S, z_{N∖S}), so the parts' games average to it; a part's coalition costs N / parts
        model rows, so the model gets the same rows as with one part (``max_evals`` · N per
        explained row) but the estimate sees ``parts`` times as many distinct coalitions. Measured
        with one part per background row: 0.2-0.6x the error of shared coalitions at 5d-10d
        evaluations on xgboost, random forest, MLP, SVR, logistic, k-NN and polynomial models
        (user guide, "Background parts", where a constructed model on which it loses is shown
        too). 1 is shap's way (every coalition against the whole background). An int must divide
        the number of background rows. "auto": one part per background row where the sampler
        draws for every row (not "exact", "sobol", "herding", "sbq" or "leverage_cv", whose
        surrogates would be fitted per part) and without ``tol``; for the regressions above d = 10
        about N · 10 / d parts, as each part solves its own regression
        (:func:`~sklearn_shapq.explainers._auto_sampler.resolve_parts`). Exact values do not
        depend on it. Standard errors combine the parts' (Welch-Satterthwaite degrees of freedom).
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where masked rows are built and averaged (numba on cpu, cupy on cuda). xgboost models
        predict on the same device.
    batch_size : int or "auto", default="auto"
        Most model rows per model call; "auto" fills 31 MiB of float64 rows on the CPU, 128 MiB on a
        GPU (shared by the calls in flight when ``n_jobs > 1``). Calls hold whole coalitions, so at
        least N / ``background_parts_`` rows.
    random_state : None, int, numpy Generator or RandomState, default=None
        Seed of the background subsample and of every draw. A row's orderings or coalitions are
        keyed by (seed, the row's values, the settings): a row gets bit-identical values alone,
        at any position of any batch, and duplicate rows get identical values. An int gives
        identical results on every call. numpy's global random state is never used.
    progress : bool, default=True
        Show a progress bar over the model rows of ``explain`` once it has run 3 s.
    n_jobs : int or None, default=None
        Model calls run at once in threads, with joblib's meaning (None: 1; -1: all cores; -2:
        all but one). Worth it for models that predict in a single thread (most scikit-learn
        models, xgboost with ``n_jobs=1``); leave it at 1 for models that already use every core.
        Results do not depend on it.

    Attributes
    ----------
    background_ : ndarray of shape (N, d)
        The background rows used.
    expected_value_ : float or ndarray of shape (k,)
        v(∅): the mean model output over the background.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``fit`` got a DataFrame.
    feature_names_ : list of str
        Column names (DataFrame columns, the model's ``feature_names_in_``, or "x0" … "x{d-1}").
    feature_groups_ : FeatureGroups
        The players: their names (used in explanations; the column names without groups) and
        the player of each column.
    n_outputs_ : int
    output_names_ : list of str or None
    sampler_ : str
        The estimator ``explain`` uses ("auto" resolved for d and the budget).
    max_evals_ : int
        The budget per explained row (``max_evals`` resolved).
    background_parts_ : int
        The games each row's game is split into (``background_parts`` resolved; 1: not split).

    Notes
    -----
    ``explain`` changes no attribute, so it may run from several threads at once. What one call
    measured is on the returned Explanation, as ``explanation.diagnostics``: a dict with
    "sampler", "background_parts", "n_evals" (evaluations each row used, v(∅) and v(N)
    included; fewer than ``max_evals_`` with ``tol``; split, those of each part, whose
    evaluations cost N / parts model rows), "n_model_rows" and "n_model_calls" (with the N
    background rows that the first model call predicts again, to check that the model is the one
    of ``fit``; ``fit`` evaluated them too, for the base value).

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
        "sampler": [RegistryNames(SHAPLEY_ALGORITHMS, extra=("auto",))],
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
    }

    def __init__(
        self,
        model: Any,
        *,
        sampler: str = "auto",
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
    ) -> None:
        self.model = model
        self.sampler = sampler
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

    def _resolve(self, d: int, n_background: int) -> tuple[str, int, int]:
        """Return the estimator, budget and parts for d features; refuse what cannot run, before any work."""
        sampler, budget, parts = resolve_sampler(
            self.sampler, self.max_evals, d, self.background_parts, self.tol, n_background
        )
        if self.tol is not None and not SHAPLEY_ALGORITHMS[sampler].supports_tol:
            raise ValueError(f"tol stops permutation walks early; sampler {sampler!r} has no early stopping.")
        return sampler, budget, parts

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> PermutationShapExplainer:
        """Store the background set, compute the base value and plan the budget.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, d)
            Background data; subsampled to ``background_size`` rows.
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
        rng = make_generator(self.random_state, stream=0)
        if self.background_size is not None and array.shape[0] > self.background_size:
            keep = np.sort(rng.choice(array.shape[0], self.background_size, replace=False))
            array = array[keep]
        plan = self._resolve(groups.n_players, array.shape[0])
        backend = resolve_backend(self.device)
        with backend.activate():
            model_fn = make_model_function(self.model, self.output, backend, codec)
            game = InterventionalGame(model_fn, backend.to_device(array), backend.to_device(array[:1]))
            empty = backend.to_numpy(game.base_value)
            self._background_outputs = backend.to_numpy(game.background_outputs)
        self.sampler_, self.max_evals_, self.background_parts_ = plan  # set once nothing can fail: a refit
        self.background_ = array  # that raises leaves the previous fit whole
        self._codec = codec
        self.n_features_in_ = array.shape[1]
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.feature_names_ = feature_names
        self.feature_groups_ = groups
        self.n_outputs_ = game.n_outputs
        names_out = model_fn.output_names
        self.output_names_ = names_out if names_out is not None and len(names_out) == self.n_outputs_ else None
        self.expected_value_ = float(empty[0]) if self.n_outputs_ == 1 else empty
        self._fitted_model, self._fitted_plan = self.model, self._plan_settings()
        self._fitted_model_features = getattr(self.model, "n_features_in_", None)
        return self

    def _plan_settings(self) -> tuple:
        """Return the parameters ``fit`` planned with (``explain`` refuses to run after they change)."""
        return (self.output, self.sampler, self.max_evals, self.tol, self.feature_groups, self.background_parts)

    def explain(self, X: Any) -> Any:
        """Explain rows of ``X``.

        Parameters
        ----------
        X : array-like, DataFrame, dask Array or dask DataFrame of shape (n, d)
            A dask collection is explained lazily, block by block (see :mod:`sklearn_shapq.dask`).

        Returns
        -------
        shap.Explanation
            ``values`` (n, d) or (n, d, k), ``base_values`` (n,) or (n, k), ``data`` (n, d),
            ``feature_names``; for a DataFrame with string or category columns ``data`` holds
            their codes (a level's index, NaN if missing) and ``display_data`` the cells;
            estimates carry ``error_std`` and 95% ``lower_bounds`` / ``upper_bounds`` (zero width
            for exact values; NaN with a single sampling unit);
            ``diagnostics`` (see the class notes).
        dask Array or dask DataFrame
            For a dask collection ``X``: the values, lazily (:mod:`sklearn_shapq.dask`).
        """
        check_is_fitted(self, "background_")
        self._validate_params()  # parameters set after fit (batch_size, n_jobs, device, …)
        if self.model is not self._fitted_model or self._plan_settings() != self._fitted_plan:
            raise ValueError(
                "model, output, sampler, max_evals, tol, feature_groups or background_parts changed since fit: call "
                "fit again so that the base value, the players and the plan of the budget match."
            )
        if is_dask_collection(X):
            return lazy_explain(self, X)
        start_time = time.perf_counter()
        codec, background = (
            (None, self.background_) if self._codec is None else self._codec.aligned(X, self.background_)
        )
        array, _, codec = check_table(
            X,
            n_features=self.n_features_in_,
            feature_names=self._expected_names(),
            codec=codec,
            tables=codec is not None,
            **missing_value_policy(self.allow_nan, self.model),
        )
        n_rows = array.shape[0]
        seed = draw_seed(make_generator(self.random_state, stream=1))
        keys = row_keys(seed, keyed_content(array, codec))
        groups = self.feature_groups_
        backend = resolve_backend(self.device)
        model_rows = (n_rows * self.max_evals_ + 1) * background.shape[0]  # an evaluation: N rows; the check
        with backend.activate(), progress_bar(self.progress, model_rows, "explaining", " model rows") as bar:
            model_fn = make_model_function(self.model, self.output, backend, codec)
            background_outputs, checked, checks = self._current_background_outputs(backend, model_fn, background)
            background_outputs = backend.to_device(background_outputs)
            model_fn = model_fn.counted(bar)
            background = backend.to_device(background)

            def game_of(rows: slice) -> InterventionalGame:
                return InterventionalGame(
                    model_fn,
                    background,
                    backend.to_device(array[rows]),
                    self.batch_size,
                    background_outputs=background_outputs,
                    check_background=checked and rows.start == 0,
                    n_jobs=effective_n_jobs(self.n_jobs),
                    parts=self.background_parts_,
                )

            estimator = SHAPLEY_ALGORITHMS[self.sampler_](
                self.sampler_,
                self.max_evals_,
                groups.n_players,
                seed,
                tol=self.tol,
                lam=self.lam,
                n_candidates=self.n_candidates,
            )
            values, stderr, dof, n_evals, model_use = self._estimate(game_of, n_rows, estimator, keys)
            empty = backend.to_numpy(background_outputs.mean(axis=0))
        data, display_data = explanation_data(array, codec, None if self.feature_groups is None else groups)
        return make_explanation(
            values,
            np.broadcast_to(empty, (n_rows, self.n_outputs_)).copy(),
            data,
            groups.names,
            output_names=self.output_names_,
            display_data=display_data,
            error_std=stderr,
            error_dof=dof,
            compute_time=time.perf_counter() - start_time,
            diagnostics={
                "sampler": self.sampler_,
                "background_parts": self.background_parts_,
                "n_evals": n_evals,
                "n_model_rows": model_use[0] + checks[0],
                "n_model_calls": model_use[1] + checks[1],
            },
        )

    def _current_background_outputs(
        self, backend: Any, model_fn: Any, background: np.ndarray
    ) -> tuple[np.ndarray, bool, tuple[int, int]]:
        """Return the model's outputs on ``background`` (host (N, k)) and whether the first game must check them.

        The model must still be the one of ``fit``: a new ``n_features_in_`` is refused here, and
        the fitted background's outputs are checked against ``fit``'s, in the first block's v(N)
        call (``check_background``) where ``background`` is the fitted one. Where the explained
        table has other dtypes, ``background`` holds the background's cells in them
        (:meth:`~sklearn_shapq.games.TableCodec.aligned`): the fitted background is checked in a
        call of its own and ``background`` predicted in another. Also returns the model rows and
        calls this took.
        """
        model_features = getattr(self.model, "n_features_in_", None)
        if model_features is not None and model_features != self._fitted_model_features:
            raise ValueError(
                f"The model now takes {model_features} features, but {self._fitted_model_features} when the "
                "explainer was fitted: it was refitted; call fit again."
            )
        if background is self.background_:
            return self._background_outputs, True, (0, 0)
        fitted_fn = make_model_function(self.model, self.output, backend, self._codec)
        check_same_outputs(backend.to_numpy(fitted_fn(backend.to_device(self.background_))), self._background_outputs)
        n_rows = background.shape[0]
        return backend.to_numpy(model_fn(backend.to_device(background))), False, (2 * n_rows, 2)

    def _games_per_block(self, game: InterventionalGame, estimator: ShapleyAlgorithm) -> int:
        """Games per block: enough to fill the model calls and the kernels' threads, few enough to bound memory."""
        coalitions = max(1, estimator.n_evals - 2)
        by_batch = game.n_jobs * game.batch_rows // max(1, coalitions * game.rows_per_coalition)
        by_batch = max(by_batch, _MIN_GAMES_PER_BLOCK)
        by_memory = _BLOCK_BYTES // max(1, estimator.bytes_per_game(game.n_outputs))
        return int(np.clip(min(by_batch, by_memory), 1, _MAX_GAMES_PER_BLOCK))

    def _estimate(
        self, game_of: Callable[[slice], InterventionalGame], n_rows: int, estimator: ShapleyAlgorithm, keys: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
        """Estimate every row block by block, on the game ``game_of(rows)`` of each block of rows.

        Split by parts of the background, the games of a row are its parts' (keyed by the row's
        key and the part): the row's values are their mean, its variances the sum of theirs over
        parts², its degrees of freedom Welch-Satterthwaite's; what a block holds is bounded by its
        rows, whatever the parts. A row's values do not depend on its block.

        Returns
        -------
        values, stderr : (n, d, k); dof, n_evals : (n,); (model rows, model calls)
        """
        parts, d, k = self.background_parts_, self.feature_groups_.n_players, self.n_outputs_
        with game_of(slice(0, 1)) as probe:  # the block sizes (no model call)
            games_step = self._games_per_block(probe, estimator)
        rows_step = max(1, games_step // parts)
        values, variance = np.zeros((n_rows, d, k)), np.zeros((n_rows, d, k))
        spread, n_evals = np.zeros(n_rows), np.zeros(n_rows, dtype=np.int64)
        model_rows = model_calls = 0
        for start in range(0, n_rows, rows_step):
            rows = slice(start, min(start + rows_step, n_rows))
            block_keys = split_keys(keys[rows], parts) if parts > 1 else keys[rows]
            with game_of(rows) as game:
                players = game if self.feature_groups is None else GroupedGame(game, self.feature_groups_)
                players.full_value  # v(N) = f(x) of the block's rows: one model call  # noqa: B018
                for first in range(0, players.n_games, games_step):
                    games = np.arange(first, min(first + games_step, players.n_games))
                    estimate = estimator.estimate(players, games, block_keys[games])
                    part_variance = game.backend.to_numpy(estimate.stderr) ** 2
                    row_of = start + games // parts
                    np.add.at(values, row_of, game.backend.to_numpy(estimate.values))
                    np.add.at(variance, row_of, part_variance)
                    with np.errstate(divide="ignore", invalid="ignore"):  # inf dof: exact parts
                        np.add.at(spread, row_of, part_variance.reshape(len(games), -1).sum(axis=1) ** 2 / estimate.dof)
                    np.maximum.at(n_evals, row_of, estimate.n_evals)
                model_rows, model_calls = model_rows + game.n_model_rows, model_calls + game.n_model_calls
        dof = satterthwaite_dof(variance.reshape(n_rows, -1).sum(axis=1), spread)
        return values / parts, np.sqrt(variance) / parts, dof, n_evals, (model_rows, model_calls)
