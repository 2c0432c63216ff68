"""Budget rules of the permutation explainer: from ``max_evals`` to a sampler and a sample size.

A budget counts evaluations of the value function v per explained row (each costs one model row
per background row).

* Walks (``"mc"``, ``"sobol"``, ``"herding"``, ``"sbq"``): v(∅) and v(N) are cached, so they count
  once (2 evaluations); each ordering then costs d − 1: n orderings cost 2 + n (d − 1).
  ``"antithetic"`` and ``"orthogonal"`` spend whole pairs of reversed orderings, 2 (d − 1) each;
  an odd remainder of the budget is left unused.
* ``"exact"``: all 2^d coalitions.
* ``"owen"`` / ``"owen_halved"``: 2 runs of a q-grid of n_q points; one mask costs d + 1 (v of the
  mask and of its d one-feature flips), so 2 n_q (d + 1); n_q >= 2 (even for the halved variant).
* ``"stratified"``: n marginal samples of 2 evaluations each, 2 n; the first half fills all d²
  strata with at least 2 samples, so at least 8 d².
"""

from __future__ import annotations

from dataclasses import dataclass

from sklearn_shapq.estimators._exact import MAX_EXACT_FEATURES
from sklearn_shapq.estimators._owen import owen_plan
from sklearn_shapq.estimators._stratified import stratified_plan
from sklearn_shapq.samplers._api import SBQ_MAX_PERMUTATIONS, is_enumerated

WALK_SAMPLERS = ("mc", "antithetic", "orthogonal", "sobol", "herding", "sbq")
BASELINE_SAMPLERS = ("owen", "owen_halved", "stratified")
PERMUTATION_SAMPLERS = ("auto", "exact", *WALK_SAMPLERS, *BASELINE_SAMPLERS)
_ORDERINGS_PER_STEP = {"antithetic": 2, "orthogonal": 2}
_OWEN_RUNS = 2

KERNEL_METHOD_MAX_FEATURES = 16
"""``sampler="auto"`` uses a kernel design up to this d (they win at low d), orthogonal codes above."""

AUTO_SBQ_MAX_ORDERINGS = 1000
"""``sampler="auto"`` uses SBQ up to this many orderings (about 1 s to build), herding beyond."""


@dataclass(frozen=True)
class BudgetPlan:
    """How one explained row's budget is spent.

    Attributes
    ----------
    sampler : str
        A concrete sampler (never "auto").
    size : int
        Orderings per row for walks, q-grid points per run for Owen, marginal samples for
        stratified, 0 for exact.
    n_evals : int
        Evaluations of v per explained row.
    """

    sampler: str
    size: int
    n_evals: int


def auto_max_evals(d: int) -> int:
    """Default budget: max(500, 2 + 20 (d − 1)), i.e. shap's default 500 or ten antithetic pairs."""
    return max(500, 2 + 20 * (d - 1))


def minimum_evals(sampler: str, d: int) -> int:
    """Smallest budget ``sampler`` can run with on d features."""
    if sampler == "exact" or d == 1:
        return 2**d
    if sampler in ("owen", "owen_halved"):
        return _OWEN_RUNS * 2 * (d + 1)
    if sampler == "stratified":
        return 8 * d * d
    return 2 + _ORDERINGS_PER_STEP.get(sampler, 1) * (d - 1)


def plan_budget(sampler: str, max_evals: int | str, d: int) -> BudgetPlan:
    """Choose the sampler and sample size for ``max_evals`` evaluations per row on d features.

    ``max_evals="auto"`` is 2^d for ``sampler="exact"``, else :func:`auto_max_evals`.
    ``sampler="auto"``: exact when 2^d fits the budget; else for d <= 16 SBQ (herding beyond 1000
    orderings), since the kernel methods have the lowest error at low d (spec §5.4; at d = 10 in
    ``benchmarks/bench_convergence.py`` SBQ's RMSE is 0.46x antithetic's at 180 orderings); above
    d = 16 orthogonal codes, which are never worse than antithetic and better as the budget grows
    (the kernel methods fall behind antithetic at d = 30 there); plain Monte Carlo when the budget
    cannot pay for one pair of orderings. With d = 1 every sampler is exact (2 evaluations).

    Raises
    ------
    ValueError
        For an unknown sampler or a budget below its minimum.
    """
    if sampler not in PERMUTATION_SAMPLERS:
        raise ValueError(f"Unknown sampler {sampler!r}; choose one of {PERMUTATION_SAMPLERS}.")
    if max_evals == "auto":
        budget = 2**d if sampler == "exact" and d <= MAX_EXACT_FEATURES else auto_max_evals(d)
    else:
        budget = max_evals
    if d == 1:
        sampler = "exact"
    elif sampler == "auto":
        sampler = _auto_sampler(budget, d)
    if sampler == "exact" and d > MAX_EXACT_FEATURES:
        raise ValueError(f"sampler='exact' enumerates 2^{d} coalitions; use it for d <= {MAX_EXACT_FEATURES}.")
    needed = minimum_evals(sampler, d)
    if budget < needed:
        raise ValueError(
            f"max_evals={budget} is below the minimum of sampler {sampler!r} for {d} features ({needed} "
            "evaluations of the value function per row)."
        )
    if sampler == "exact":
        return BudgetPlan("exact", 0, 2**d)
    if sampler in ("owen", "owen_halved"):
        n_q = owen_plan(budget, d, halved=sampler == "owen_halved", runs=_OWEN_RUNS)
        return BudgetPlan(sampler, n_q, _OWEN_RUNS * n_q * (d + 1))
    if sampler == "stratified":
        n_samples = stratified_plan(budget, d)
        return BudgetPlan(sampler, n_samples, 2 * n_samples)
    n_orderings = _orderings_within(sampler, budget, d)
    if sampler == "sbq" and n_orderings > SBQ_MAX_PERMUTATIONS and not is_enumerated(n_orderings, d):
        raise ValueError(
            f"max_evals={budget} buys {n_orderings} orderings, more than sbq builds ({SBQ_MAX_PERMUTATIONS}; "
            "its cost grows as n³): lower max_evals or use sampler='herding'."
        )
    return BudgetPlan(sampler, n_orderings, 2 + n_orderings * (d - 1))


def _orderings_within(sampler: str, budget: int, d: int) -> int:
    step = _ORDERINGS_PER_STEP.get(sampler, 1)
    return step * ((budget - 2) // (step * (d - 1)))


def _auto_sampler(budget: int, d: int) -> str:
    if d <= MAX_EXACT_FEATURES and 2**d <= budget:
        return "exact"
    if budget < minimum_evals("orthogonal", d):
        return "mc"
    if d > KERNEL_METHOD_MAX_FEATURES:
        return "orthogonal"
    return "sbq" if _orderings_within("sbq", budget, d) <= AUTO_SBQ_MAX_ORDERINGS else "herding"
