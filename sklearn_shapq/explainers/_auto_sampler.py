"""The permutation explainer's defaults: which estimator ``sampler="auto"`` means, and ``max_evals="auto"``.

Every rule about a particular estimator's budget (minimum, sample sizes, limits) lives in that
estimator's class (:data:`~sklearn_shapq.estimators.SHAPLEY_ESTIMATORS`); this module holds only the
explainer's policy for choosing one.
"""

from __future__ import annotations

from sklearn_shapq.estimators import SHAPLEY_ESTIMATORS, PermutationWalkEstimator
from sklearn_shapq.games._enumeration import MAX_ENUMERATED_PLAYERS

LEVERAGE_MAX_FEATURES = 100
"""``sampler="auto"`` uses Leverage SHAP up to this d, the largest d of ``benchmarks/bench_accuracy.py``:
there it had the lowest error of our estimators (0.80-0.91x orthogonal codes' at d = 100) at every
budget from 5d to 50d on xgboost models at d = 8, 30, 60 and 100, and the lowest of our defaults
on an SVR at d = 10 (paired KernelSHAP's sizes did better there at 5d-10d)."""

LEVERAGE_MIN_EVALS_PER_FEATURE = 3
"""``sampler="auto"`` uses Leverage SHAP from 3d evaluations per row: at d = 16 it had 0.80x
orthogonal's error at 3d, but 7x at 2d, where its regression has about as many pairs as unknowns
(``benchmarks/bench_permutation.py --quick --sampler ... --budgets 33 48 64 80``)."""


def auto_max_evals(d: int) -> int:
    """Default budget: max(500, 2 + 20 (d − 1)), i.e. shap's default 500 or ten antithetic pairs."""
    return max(500, 2 + 20 * (d - 1))


def resolve_sampler(sampler: str, max_evals: int | str, d: int) -> tuple[str, int]:
    """Choose the estimator and budget per row for ``sampler`` and ``max_evals`` on d features.

    ``max_evals="auto"`` is 2^d for ``sampler="exact"``, else :func:`auto_max_evals`.
    ``sampler="auto"``, by measurement (``benchmarks/bench_accuracy.py`` and
    ``benchmarks/bench_permutation.py``; the table is in the user guide): exact when 2^d fits the
    budget; else Leverage SHAP with the cross-fitted tree control variate ("leverage_cv") for
    d <= 100 and budgets from 3d (Leverage SHAP had 1.1-6x lower error than our best permutation
    sampler at every measured d and budget; the control variate 0.2-1.0x Leverage SHAP's) when its
    per-row regression fits in memory (Leverage SHAP alone where only its regression fits);
    else orthogonal codes (never worse than antithetic pairs), or plain Monte Carlo when the
    budget cannot pay for one pair of orderings. The kernel designs (sobol, herding, sbq) are
    never chosen: at these budgets they measured worse than both. With d = 1 every sampler is
    exact (2 evaluations).

    Returns
    -------
    name : str
        A registered estimator name (never "auto").
    budget : int

    Raises
    ------
    ValueError
        A budget the estimator cannot run, with the reason (before any work).

    Examples
    --------
    >>> resolve_sampler("auto", "auto", 5), resolve_sampler("auto", 500, 30), resolve_sampler("auto", 2000, 120)
    (('exact', 500), ('leverage_cv', 500), ('orthogonal', 2000))
    """
    if max_evals == "auto":
        budget = 2**d if sampler == "exact" and d <= MAX_ENUMERATED_PLAYERS else auto_max_evals(d)
    else:
        budget = int(max_evals)
    chosen_by_auto = sampler == "auto" and d > 1
    if d == 1:
        sampler = "exact"
    elif chosen_by_auto:
        sampler = _auto_sampler(budget, d)
    reason = SHAPLEY_ESTIMATORS[sampler].refusal(sampler, budget, d)
    if reason is not None:
        raise ValueError(
            (f'sampler="auto" chose {sampler!r} for the smallest budgets: ' if chosen_by_auto else "") + reason
        )
    return sampler, budget


def _auto_sampler(budget: int, d: int) -> str:
    if d <= MAX_ENUMERATED_PLAYERS and 2**d <= budget:
        return "exact"
    if d <= LEVERAGE_MAX_FEATURES and budget >= LEVERAGE_MIN_EVALS_PER_FEATURE * d:
        for name in ("leverage_cv", "leverage"):  # the control variate's surrogates need more memory per row
            if SHAPLEY_ESTIMATORS[name].refusal(name, budget, d) is None:
                return name
    if budget < PermutationWalkEstimator.minimum_evals("orthogonal", d):
        return "mc"
    return "orthogonal"
