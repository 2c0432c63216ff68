"""Budget rules of the permutation explainer: from ``max_evals`` to a sampler and a sample size.

A budget counts evaluations of the value function v per explained row. v(∅) and v(N) are cached,
so they count once (2 evaluations); each ordering then costs d − 1 evaluations:

* ``"exact"``: all 2^d coalitions → 2^d evaluations;
* ``"mc"``: n orderings → 2 + n (d − 1), at least one ordering (d + 1);
* ``"antithetic"``: p pairs → 2 + 2 p (d − 1), at least one pair (2 d). An odd remainder of the
  budget that does not fill a whole pair is left unused, so standard errors stay over whole pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

from sklearn_shapq.estimators._exact import MAX_EXACT_FEATURES

PERMUTATION_SAMPLERS = ("auto", "exact", "mc", "antithetic")
_UNIT_SIZE = {"mc": 1, "antithetic": 2}


@dataclass(frozen=True)
class BudgetPlan:
    """How one explained row's budget is spent.

    Attributes
    ----------
    sampler : str
        "exact", "mc" or "antithetic".
    n_units : int
        Independent units (orderings for mc, pairs for antithetic, 0 for exact).
    unit_size : int
        Orderings per unit.
    n_evals : int
        Evaluations of v per explained row, including v(∅) and v(N).
    """

    sampler: str
    n_units: int
    unit_size: int
    n_evals: int

    @property
    def n_orderings(self) -> int:
        """Orderings walked per explained row."""
        return self.n_units * self.unit_size


def auto_max_evals(d: int) -> int:
    """Default budget: max(500, 2 + 20 (d − 1)), i.e. shap's default 500 or ten antithetic pairs."""
    return max(500, 2 + 20 * (d - 1))


def minimum_evals(sampler: str, d: int) -> int:
    """Smallest budget ``sampler`` can run with on d features."""
    if sampler == "exact" or d == 1:
        return 2**d
    return 2 + _UNIT_SIZE[sampler] * (d - 1)


def plan_budget(sampler: str, max_evals: int | str, d: int) -> BudgetPlan:
    """Choose the sampler and sample size for ``max_evals`` evaluations per row on d features.

    ``max_evals="auto"`` is 2^d for ``sampler="exact"``, else :func:`auto_max_evals`.
    ``sampler="auto"`` is exact when 2^d fits the budget, else antithetic, else (a budget between
    d + 1 and 2 d − 1) plain Monte Carlo. With d = 1 every sampler is exact (2 evaluations).

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
        if d <= MAX_EXACT_FEATURES and 2**d <= budget:
            sampler = "exact"
        elif budget >= minimum_evals("antithetic", d):
            sampler = "antithetic"
        else:
            sampler = "mc"
    if sampler == "exact" and d > MAX_EXACT_FEATURES:
        raise ValueError(f"sampler='exact' enumerates 2^{d} coalitions; use it for d <= {MAX_EXACT_FEATURES}.")
    needed = minimum_evals(sampler, d)
    if budget < needed:
        raise ValueError(
            f"max_evals={budget} is below the minimum of sampler {sampler!r} for {d} features ({needed} "
            "evaluations of the value function per row)."
        )
    if sampler == "exact":
        return BudgetPlan("exact", 0, 1, 2**d)
    unit_size = _UNIT_SIZE[sampler]
    n_units = (budget - 2) // (unit_size * (d - 1))
    return BudgetPlan(sampler, n_units, unit_size, 2 + n_units * unit_size * (d - 1))
