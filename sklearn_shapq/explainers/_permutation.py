"""``PermutationShapExplainer``: interventional Shapley values of any model from permutations."""

from __future__ import annotations

import os
import time
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from sklearn_shapq._explanation import make_explanation
from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import check_data, check_positive_int, default_feature_names
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.estimators import (
    combine_units,
    exact_shapley,
    owen_shapley,
    stratified_shapley,
    walk_source,
)
from sklearn_shapq.estimators._permutation_walk import DEFAULT_MASK_BYTES
from sklearn_shapq.explainers._base import ModelExplainerMixin
from sklearn_shapq.explainers._budget import BASELINE_SAMPLERS, BudgetPlan, plan_budget
from sklearn_shapq.games import InterventionalGame, make_model_function
from sklearn_shapq.samplers import DEFAULT_CANDIDATES, DEFAULT_LAMBDA, make_source
from sklearn_shapq.samplers._mallows import check_lambda

_MAX_ROWS_PER_BLOCK = 4096


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
        ``device="cuda"`` a callable receives cupy arrays.
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
        - Baselines: "owen", "owen_halved" (Owen's multilinear extension on a q-grid, plain or
          antithetic) and "stratified" (Castro et al. 2017, strata of feature × coalition size
          with variance-proportional reallocation). They are not exactly efficient.
        - "auto": exact when 2^d <= ``max_evals``; else "sbq" for d <= 16 and "orthogonal" above
          (plain "mc" when the budget cannot pay for a pair of orderings).
    max_evals : int or "auto", default="auto"
        Evaluations of the value function per explained row. Walks count v(∅) and v(N) once and
        d − 1 per ordering (antithetic and orthogonal spend whole pairs); exact costs 2^d;
        Owen 2 n_q (d + 1) for a q-grid of n_q points (at least 4 (d + 1)); stratified 2 per
        marginal sample (at least 8 d²). "auto" is max(500, 2 + 20 (d − 1)).
    tol : float or None, default=None
        Early stopping for permutation walks: an explained row stops adding sampling units once
        every standard error of it is below ``tol`` (checked about 10 times over the budget).
        ``n_evals_per_row_`` records what each row used.
    lam : float, default=4.0
        Mallows kernel bandwidth λ of "herding" and "sbq".
    n_candidates : int, default=25
        Uniform candidate orderings per greedy step of "herding" and "sbq".
    background_size : int or None, default=100
        Background rows kept from ``fit`` data (a reproducible random subsample); None keeps all.
    output : {"auto", "margin", "log_odds", "probability", "predict"}, default="auto"
        What is explained. "auto": a classifier's margin (``decision_function`` or xgboost's
        margin) where it has one, else its log-odds; a regressor's prediction. A binary classifier
        gives one output (the positive class), a multiclass one gives one output per class.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where masked rows are built and averaged (numba on cpu, cupy on cuda). xgboost models
        predict on the same device.
    batch_size : int or "auto", default="auto"
        Most model rows per model call; "auto" fills 128 MiB of float64 rows (shared by the calls in
        flight when ``n_jobs > 1``). Calls hold whole coalitions, so at least N background rows.
    random_state : None, int, numpy Generator or RandomState, default=None
        Seed of the background subsample and the orderings. An int gives identical results on
        every call. numpy's global random state is never used.
    progress : bool, default=False
        Show a tqdm progress bar over explained rows.
    n_jobs : int or None, default=None
        Model calls run at once in threads (None: 1; -1: all cores). Worth it for models that
        predict in a single thread (most scikit-learn models, xgboost with ``n_jobs=1``); leave it
        at 1 for models that already use every core. Results do not depend on it.

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
        Names used in explanations (DataFrame columns, the model's ``feature_names_in_``, or
        "x0" … "x{d-1}").
    n_outputs_ : int
    output_names_ : list of str or None
    sampler_ : str
        Sampler used by the last ``explain`` call.
    n_evals_ : int
        Value-function evaluations per explained row used by the last ``explain`` call (with
        ``tol``, the most any row used).
    n_evals_per_row_ : ndarray of shape (n,)
        Evaluations used by each explained row of the last ``explain`` call.
    n_model_rows_ : int
        Rows the model received during the last ``explain`` call (``fit`` additionally evaluates
        the N background rows once for the base value).

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
        output: str = "auto",
        device: str = "cpu",
        batch_size: int | str = "auto",
        random_state: Any = None,
        progress: bool = False,
        n_jobs: int | None = None,
    ) -> None:
        self.model = model
        self.sampler = sampler
        self.max_evals = max_evals
        self.tol = tol
        self.lam = lam
        self.n_candidates = n_candidates
        self.background_size = background_size
        self.output = output
        self.device = device
        self.batch_size = batch_size
        self.random_state = random_state
        self.progress = progress
        self.n_jobs = n_jobs

    def _check_params(self, n_features: int) -> None:
        if self.max_evals != "auto":
            check_positive_int(self.max_evals, "max_evals")
        if self.batch_size != "auto":
            check_positive_int(self.batch_size, "batch_size")
        if self.background_size is not None:
            check_positive_int(self.background_size, "background_size")
        if self.n_jobs is not None and self.n_jobs != -1:
            check_positive_int(self.n_jobs, "n_jobs")
        check_positive_int(self.n_candidates, "n_candidates")
        if self.tol is not None and not (isinstance(self.tol, Real) and self.tol > 0):
            raise ValueError(f"tol must be None or a positive number, got {self.tol!r}.")
        if self.tol is not None and self.sampler in BASELINE_SAMPLERS:
            raise ValueError(f"tol stops permutation walks early; sampler {self.sampler!r} has no early stopping.")
        check_lambda(self.lam)
        plan_budget(self.sampler, self.max_evals, n_features)

    def fit(self, X: Any, y: Any = None) -> PermutationShapExplainer:
        """Store the background set and compute the base value.

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
        array, names = check_data(X, name="X_background", feature_names=model_names)
        self._check_params(array.shape[1])
        rng = make_generator(self.random_state, stream=0)
        if self.background_size is not None and array.shape[0] > self.background_size:
            keep = np.sort(rng.choice(array.shape[0], self.background_size, replace=False))
            array = array[keep]
        backend = resolve_backend(self.device)
        with backend.activate():
            game = InterventionalGame(
                make_model_function(self.model, self.output, backend), backend.to_device(array), self.batch_size
            )
            empty = backend.to_numpy(game.empty_value)
        self.background_ = array
        self.n_features_in_ = array.shape[1]
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.feature_names_ = default_feature_names(
            array.shape[1], names, getattr(self.model, "feature_names_in_", None)
        )
        self.n_outputs_ = game.n_outputs
        names_out = game.model_fn.output_names
        self.output_names_ = names_out if names_out is not None and len(names_out) == self.n_outputs_ else None
        self.expected_value_ = float(empty[0]) if self.n_outputs_ == 1 else empty
        self._empty_value = empty
        self._fitted_model, self._fitted_output = self.model, self.output
        return self

    def _game(self, backend: Any) -> InterventionalGame:
        if self.model is not self._fitted_model or self.output != self._fitted_output:
            raise ValueError("model or output changed since fit: call fit again so the base value matches.")
        threads = 1 if self.n_jobs is None else (os.cpu_count() or 1) if self.n_jobs == -1 else self.n_jobs
        return InterventionalGame(
            make_model_function(self.model, self.output, backend),
            backend.to_device(self.background_),
            self.batch_size,
            empty_value=backend.to_device(self._empty_value),
            n_jobs=threads,
        )

    def explain(self, X: Any) -> Any:
        """Explain rows of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)

        Returns
        -------
        shap.Explanation
            ``values`` (n, d) or (n, d, k), ``base_values`` (n,) or (n, k), ``data`` (n, d),
            ``feature_names``; estimates carry ``error_std`` and 95% ``lower_bounds`` /
            ``upper_bounds`` (zero width for exact values; NaN with a single sampling unit).
        """
        check_is_fitted(self, "background_")
        self._check_params(self.n_features_in_)
        start_time = time.perf_counter()
        array, _ = check_data(X, n_features=self.n_features_in_, feature_names=self._expected_names())
        n_rows, d = array.shape
        plan = plan_budget(self.sampler, self.max_evals, d)
        rng = make_generator(self.random_state, stream=1)
        backend = resolve_backend(self.device)
        with backend.activate(), self._game(backend) as game:
            values, stderr, n_evals, dof = self._estimate(game, array, plan, rng)
        self.sampler_ = plan.sampler
        self.n_evals_per_row_ = n_evals
        self.n_evals_ = int(n_evals.max()) if n_rows else plan.n_evals
        self.n_model_rows_ = game.n_model_rows
        return make_explanation(
            values,
            np.broadcast_to(self._empty_value, (n_rows, self.n_outputs_)).copy(),
            array,
            self.feature_names_,
            output_names=self.output_names_,
            error_std=stderr,
            error_dof=dof,
            compute_time=time.perf_counter() - start_time,
        )

    def _rows_per_block(self, game: InterventionalGame, plan: BudgetPlan, d: int) -> int:
        """Explained rows per block: enough to fill a model batch, few enough to bound masks."""
        coalitions = max(1, plan.n_evals - 2)
        by_batch = game.n_jobs * game.batch_rows // max(1, coalitions * game.background.shape[0])
        by_masks = DEFAULT_MASK_BYTES // max(1, coalitions * d)
        by_units = DEFAULT_MASK_BYTES // max(1, (plan.size + 1) * d * game.n_outputs * 8)
        return int(np.clip(min(by_batch, by_masks, by_units), 1, _MAX_ROWS_PER_BLOCK))

    def _estimate(
        self, game: InterventionalGame, array: np.ndarray, plan: BudgetPlan, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        backend = game.backend
        n_rows, d = array.shape
        values = np.empty((n_rows, d, game.n_outputs))
        stderr = np.zeros((n_rows, d, game.n_outputs))
        n_evals = np.full(n_rows, plan.n_evals)
        dof = np.full(n_rows, np.inf)  # degrees of freedom of each row's standard errors
        # Blocks depend on the budget only for samplers drawing from ``rng`` block by block, so
        # their values do not depend on batch_size or n_jobs; walks address orderings by row.
        if plan.sampler in ("owen", "owen_halved", "stratified"):
            step = max(1, min(_MAX_ROWS_PER_BLOCK, DEFAULT_MASK_BYTES // max(1, plan.n_evals * d)))
        else:
            step = self._rows_per_block(game, plan, d)
        source = None
        if plan.sampler not in ("exact", "owen", "owen_halved", "stratified"):
            source = make_source(plan.sampler, plan.size, d, rng, lam=self.lam, n_candidates=self.n_candidates)
        full_values = game.full_values(backend.to_device(array))  # v(N) = f(x): one model call
        with tqdm(total=n_rows, disable=not self.progress, desc="explaining", unit="row") as bar:
            for start in range(0, n_rows, step):
                rows = slice(start, min(start + step, n_rows))
                x = backend.to_device(array[rows])
                if plan.sampler == "exact":
                    estimate, error = exact_shapley(game, x, full_values[rows]), None
                elif plan.sampler == "stratified":
                    estimate, error = stratified_shapley(game, x, plan.size, rng)
                elif plan.sampler in ("owen", "owen_halved"):
                    runs = owen_shapley(game, x, plan.size, rng, halved=plan.sampler == "owen_halved")
                    estimate, error = combine_units(runs, backend.xp)
                    dof[rows] = runs.values.shape[1] - 1
                else:
                    indices = np.arange(rows.start, rows.stop)
                    estimate, error, units = walk_source(game, x, full_values[rows], source, indices, tol=self.tol)
                    n_evals[rows] = 2 + source.unit_bounds[units] * (d - 1)
                    dof[rows] = units - 1
                values[rows] = backend.to_numpy(estimate)
                if error is not None:
                    stderr[rows] = backend.to_numpy(error)
                bar.update(rows.stop - rows.start)
        return values, stderr, n_evals, dof
