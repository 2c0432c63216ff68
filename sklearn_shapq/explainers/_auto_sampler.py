"""The permutation explainer's defaults: which estimator ``sampler="auto"`` means, and ``max_evals="auto"``.

Every rule about a particular estimator's budget (minimum, sample sizes, limits) lives in that
estimator's class (:data:`~sklearn_shapq.algorithms.SHAPLEY_ALGORITHMS`); this module holds only the
explainer's policy for choosing one.
"""

from __future__ import annotations

from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS, LeverageAlgorithm, PermutationWalkAlgorithm
from sklearn_shapq.games._enumeration import MAX_ENUMERATED_PLAYERS

LEVERAGE_MAX_FEATURES = 100
"""``sampler="auto"`` uses Leverage SHAP on shared coalitions up to this d, the largest d of
``benchmarks/bench_accuracy.py``: there, shared, it had the lowest error of our estimators
(0.80-0.91x orthogonal codes' at d = 100) at every budget from 5d to 50d on xgboost models at
d = 8, 30, 60 and 100, and the lowest of our defaults on an SVR at d = 10 (paired KernelSHAP's
sizes did better there at 5d-10d)."""

LEVERAGE_MIN_EVALS_PER_FEATURE = 3
"""``sampler="auto"`` uses Leverage SHAP from 3d evaluations per row: at d = 16 it had 0.80x
orthogonal's error at 3d, but 7x at 2d, where its regression has about as many pairs as unknowns
(``benchmarks/bench_permutation.py --quick --sampler ... --budgets 33 48 64 80``)."""


SPLIT_MAX_SHARE = 0.4
"""``sampler="auto"`` takes Leverage SHAP split by background parts below this share of the 2^d
coalitions, and the shared coalitions' control variate ("leverage_cv") from it.

There the shared coalitions cover much of the game and the control variate fits it nearly whole.
Split Leverage SHAP's error over shared "leverage_cv"'s (8 rows, 50 background rows, 3 seeds): at
d = 8, 0.63x at 80 evaluations (31% of 2^8) and 1.85x at 160 (62%); on the SVR at d = 10, 0.58x
at 200 (20%) and 1.12x at 500 (49%)."""


REGRESSION_SPLIT_FEATURES = 10
"""``background_parts="auto"`` gives the regressions one part per background row up to this d, and
N · this / d parts above (the largest divisor of N at most that): each part solves its own
regression, whose normal matrices cost about 2 d² operations per coalition.

Time over xgboost alone (200 trees of depth 6, 100 background rows, 5 rows; Leverage SHAP at 5d;
``/tmp`` script, medians of 3): 100 parts 1.25x at d = 16, 1.34x at d = 30, 2.4x at d = 60 and 2.8x
at d = 100; at d = 60, 50 parts 1.5x, 25 1.25x, 10 1.13x; at d = 100, 25 parts 1.38x, 10 0.97x.
Error over shared "leverage_cv"'s (correlated xgboost models, 50 background rows, 8 rows, 3
seeds, 5d / 10d): 5 parts 0.58 / 0.65x at d = 60 and 0.58x at d = 100 (5d), 10 parts 0.48 /
0.54x and 0.47x."""


SPLIT_LEVERAGE_MAX_FEATURES = 24
"""Split by background parts, ``sampler="auto"`` takes Leverage SHAP up to this d and orthogonal
codes above: the walks cost O(d) per coalition and get one part per background row, the
regressions O(d²) and fewer parts (:data:`REGRESSION_SPLIT_FEATURES`). Orthogonal codes' error
over Leverage SHAP's, both split (``benchmarks/bench_accuracy.py``, 50 background rows, 3 seeds,
5d / 10d / 20d): 1.05 / 1.34 / 1.22 at d = 12, 1.01 / 1.26 / 1.20 at d = 16, 1.13 / 1.16 / 1.32
at d = 20, but 0.72 / 0.79 / 0.86 at d = 30, 0.80 / 0.87 / 0.90 at d = 60 and 0.79 / 0.85 / 0.92
at d = 100."""


def auto_max_evals(d: int) -> int:
    """Default budget: max(500, 2 + 20 (d − 1)), i.e. shap's default 500 or ten antithetic pairs."""
    return max(500, 2 + 20 * (d - 1))


def resolve_sampler(
    sampler: str,
    max_evals: int | str,
    d: int,
    background_parts: int | str = "auto",
    tol: float | None = None,
    n_background: int = 1,
) -> tuple[str, int, int]:
    """Choose the estimator, budget per row and background parts for ``sampler`` and ``max_evals`` on d features.

    ``max_evals="auto"`` is 2^d for ``sampler="exact"``, else :func:`auto_max_evals`.
    ``sampler="auto"``, by measurement (``benchmarks/bench_accuracy.py`` and
    ``benchmarks/bench_permutation.py``; the table is in the user guide): exact when 2^d fits the
    budget; else, on games split by background parts, Leverage SHAP for d <= 24
    (:data:`SPLIT_LEVERAGE_MAX_FEATURES`) and budgets from 3d, orthogonal codes above (the
    parts gained more than the control variate: 0.2-0.6x the error of shared "leverage_cv" at
    5d-20d, whose surrogates would be fitted for every part); on shared coalitions (nothing
    split, or a budget of 40% of 2^d or more) Leverage SHAP with the cross-fitted tree control
    variate ("leverage_cv", 0.2-1.0x Leverage SHAP's error) for d <= 100 and budgets from 3d
    while its per-row regression fits in memory; else orthogonal codes (never worse than
    antithetic pairs), or plain Monte Carlo when the budget cannot pay for one pair of orderings. The kernel designs
    (sobol, herding, sbq) are never chosen: at these budgets they measured worse than both. With
    d = 1 every sampler is exact (2 evaluations). The parts: :func:`resolve_parts`.

    Returns
    -------
    name : str
        A registered estimator name (never "auto").
    budget : int
    parts : int
        Games each row's game is split into, by equal parts of the background (1: none).

    Raises
    ------
    ValueError
        A budget the estimator cannot run, with the reason (before any work).

    Examples
    --------
    >>> resolve_sampler("auto", "auto", 5), resolve_sampler("auto", 2000, 120)
    (('exact', 500, 1), ('orthogonal', 2000, 1))
    >>> resolve_sampler("auto", 300, 20, n_background=100), resolve_sampler("auto", 500, 30, n_background=100)
    (('leverage', 300, 50), ('orthogonal', 500, 100))
    >>> resolve_sampler("auto", 500, 30, 1, n_background=100)
    ('leverage_cv', 500, 1)
    """
    if max_evals == "auto":
        budget = 2**d if sampler == "exact" and d <= MAX_ENUMERATED_PLAYERS else auto_max_evals(d)
    else:
        budget = int(max_evals)
    chosen_by_auto = sampler == "auto" and d > 1
    if d == 1:
        sampler = "exact"
    elif chosen_by_auto:
        split = background_parts != 1 and tol is None and n_background > 1
        split = split and (background_parts != "auto" or d > MAX_ENUMERATED_PLAYERS or budget < SPLIT_MAX_SHARE * 2**d)
        sampler = _auto_sampler(budget, d, split)
        if split and resolve_parts(background_parts, sampler, d, tol, n_background) == 1:
            sampler = _auto_sampler(budget, d, False)  # no divisor of N gives the regression parts
    reason = SHAPLEY_ALGORITHMS[sampler].refusal(sampler, budget, d)
    if reason is not None:
        raise ValueError(
            (f'sampler="auto" chose {sampler!r} for the smallest budgets: ' if chosen_by_auto else "") + reason
        )
    return sampler, budget, resolve_parts(background_parts, sampler, d, tol, n_background)


def resolve_parts(background_parts: int | str, sampler: str, d: int, tol: float | None, n_background: int) -> int:
    """Games each row's game is split into, by equal parts of the background (the explainer's ``background_parts``).

    "auto": one part per background row where the estimate is sampled and the sampler draws for
    every game, without ``tol``, and not for "leverage_cv" (its surrogates would be fitted per
    part); for the regressions above :data:`REGRESSION_SPLIT_FEATURES` features, the largest
    divisor of N at most N · :data:`REGRESSION_SPLIT_FEATURES` / d. An int is taken as it is
    ("exact" ignores it).

    Raises
    ------
    ValueError
        An int that does not divide N, or above 1 with a shared design or with ``tol``.

    Examples
    --------
    >>> resolve_parts("auto", "leverage", 30, None, 100), resolve_parts("auto", "leverage", 80, None, 100)
    (25, 10)
    >>> resolve_parts("auto", "orthogonal", 80, None, 100), resolve_parts("auto", "leverage_cv", 8, None, 100)
    (100, 1)
    """
    estimator = SHAPLEY_ALGORITHMS[sampler]
    if background_parts == "auto":
        if not estimator.draws_per_game(sampler) or sampler == "leverage_cv" or tol is not None:
            return 1
        target = n_background
        if issubclass(estimator, LeverageAlgorithm):
            target = n_background * min(1.0, REGRESSION_SPLIT_FEATURES / d)
        return max(p for p in range(1, n_background + 1) if n_background % p == 0 and p <= max(target, 1))
    parts = int(background_parts)
    if parts == 1 or sampler == "exact":
        return 1
    if n_background % parts:
        raise ValueError(f"background_parts={parts} must divide the {n_background} background rows (background_size).")
    if not estimator.draws_per_game(sampler):
        raise ValueError(
            f"background_parts={parts} gives every part of the background its own coalitions; sampler {sampler!r} "
            "walks one design shared by every game. Use a sampler that draws for every row ('leverage', 'orthogonal')."
        )
    if tol is not None:
        raise ValueError(f"background_parts={parts} has no early stopping: set tol=None or background_parts=1.")
    return parts


def _auto_sampler(budget: int, d: int, split: bool) -> str:
    if d <= MAX_ENUMERATED_PLAYERS and 2**d <= budget:
        return "exact"
    max_features = SPLIT_LEVERAGE_MAX_FEATURES if split else LEVERAGE_MAX_FEATURES
    if d <= max_features and budget >= LEVERAGE_MIN_EVALS_PER_FEATURE * d:
        for name in ("leverage",) if split else ("leverage_cv", "leverage"):  # the surrogates need more memory
            if SHAPLEY_ALGORITHMS[name].refusal(name, budget, d) is None:
                return name
    if budget < PermutationWalkAlgorithm.minimum_evals("orthogonal", d):
        return "mc"
    return "orthogonal"
