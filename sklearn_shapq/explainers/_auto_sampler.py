"""The permutation explainer's defaults: which estimator ``sampler="auto"`` means, and ``max_evals="auto"``.

Every rule about a particular estimator's budget (minimum, sample sizes, limits) lives in that
estimator's class (:data:`~sklearn_shapq.estimators.SHAPLEY_ESTIMATORS`); this module holds only the
explainer's policy for choosing one.
"""

from __future__ import annotations

from sklearn_shapq.estimators import SHAPLEY_ESTIMATORS, PermutationWalkEstimator
from sklearn_shapq.games._enumeration import MAX_ENUMERATED_PLAYERS

KERNEL_METHOD_MAX_FEATURES = 16
"""``sampler="auto"`` uses a kernel design up to this d (they win at low d), orthogonal codes above."""

AUTO_SBQ_MAX_ORDERINGS = 1000
"""``sampler="auto"`` uses SBQ up to this many orderings (about 1 s to build), herding beyond."""


def auto_max_evals(d: int) -> int:
    """Default budget: max(500, 2 + 20 (d − 1)), i.e. shap's default 500 or ten antithetic pairs."""
    return max(500, 2 + 20 * (d - 1))


def resolve_sampler(sampler: str, max_evals: int | str, d: int) -> tuple[str, int]:
    """Choose the estimator and budget per row for ``sampler`` and ``max_evals`` on d features.

    ``max_evals="auto"`` is 2^d for ``sampler="exact"``, else :func:`auto_max_evals`.
    ``sampler="auto"``: exact when 2^d fits the budget; else for d <= 16 SBQ (herding beyond 1000
    orderings; at d <= 16 a budget of 4400 orderings pays for exact), since the kernel methods
    have the lowest error at low d (spec §5.4; at d = 10 in ``benchmarks/bench_convergence.py`` SBQ's RMSE is 0.46x
    antithetic's at 180 orderings); above d = 16 orthogonal codes, which are never worse than
    antithetic and better as the budget grows; plain Monte Carlo when the budget cannot pay for
    one pair of orderings. With d = 1 every sampler is exact (2 evaluations).

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
    >>> resolve_sampler("auto", "auto", 5), resolve_sampler("auto", 500, 30)
    (('exact', 500), ('orthogonal', 500))
    """
    if max_evals == "auto":
        budget = 2**d if sampler == "exact" and d <= MAX_ENUMERATED_PLAYERS else auto_max_evals(d)
    else:
        budget = int(max_evals)
    if d == 1:
        sampler = "exact"
    elif sampler == "auto":
        sampler = _auto_sampler(budget, d)
    reason = SHAPLEY_ESTIMATORS[sampler].refusal(sampler, budget, d)
    if reason is not None:
        raise ValueError(reason)
    return sampler, budget


def _auto_sampler(budget: int, d: int) -> str:
    if d <= MAX_ENUMERATED_PLAYERS and 2**d <= budget:
        return "exact"
    if budget < PermutationWalkEstimator.minimum_evals("orthogonal", d):
        return "mc"
    if d > KERNEL_METHOD_MAX_FEATURES:
        return "orthogonal"
    orderings = PermutationWalkEstimator.orderings_within("sbq", budget, d)
    return "sbq" if orderings <= AUTO_SBQ_MAX_ORDERINGS else "herding"
