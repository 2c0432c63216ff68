"""The permutation explainer's policy: ``algorithm="auto"``, ``max_evals="auto"``, ``background_parts="auto"``.

Each estimator's own budget rules live in its class; the figures behind these constants are in ``doc/benchmarks.md``.
"""

from __future__ import annotations

from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS, LeverageAlgorithm
from sklearn_shapq.games import MAX_ENUMERATED_PLAYERS

LEVERAGE_MAX_FEATURES = 100
"""``algorithm="auto"`` uses Leverage SHAP on shared coalitions up to this d, the largest measured where it
had the lowest error of ours (``benchmarks/bench_accuracy.py``)."""

LEVERAGE_MIN_EVALS_PER_FEATURE = 3
"""``algorithm="auto"`` uses Leverage SHAP from 3d evaluations per row; below, its regression is barely
determined (``benchmarks/bench_permutation.py --quick --budgets 33 48 64 80``)."""


REGRESSION_SPLIT_FEATURES = 10
"""``background_parts="auto"`` gives the regressions one part per background row up to this d, and
N · this / d parts above: each part's regression costs about 2 d² operations per coalition
(``benchmarks/bench_leverage_parts.py``)."""


CONTROL_VARIATE_COALITIONS = 6000
"""``background_parts="auto"`` gives an explicit ``algorithm="leverage_cv"`` the most parts whose
surrogates see at most this many coalitions per row in all (user guide, "A surrogate per background
part")."""

CONTROL_VARIATE_MIN_EVALS_PER_FEATURE = 20
"""Split by background parts, ``algorithm="auto"`` fits a surrogate per part from 20d evaluations per row;
below, the parts are many and small and the fits cost more than the model's calls hide (at d = 20 and
10d, 1.23-1.27x the model's time; with half the coalitions, no gain over split Leverage SHAP; user guide)."""


SPLIT_LEVERAGE_MAX_FEATURES = 24
"""Split by background parts, ``algorithm="auto"`` takes Leverage SHAP (with a surrogate per part from 20d) up to
this d and orthogonal codes above, whose walks get more parts at O(d) a coalition (``benchmarks/bench_accuracy.py``)."""


def auto_max_evals(d: int) -> int:
    """Default budget: max(500, 2 + 20 (d − 1)), i.e. shap's default 500 or ten antithetic pairs."""
    return max(500, 2 + 20 * (d - 1))


def resolve_algorithm(
    algorithm: str,
    max_evals: int | str,
    d: int,
    background_parts: int | str = "auto",
    tol: float | None = None,
    n_background: int = 1,
) -> tuple[str, int, int]:
    """Choose the estimator, budget per row and background parts for ``algorithm`` and ``max_evals`` on d features.

    ``max_evals="auto"`` is 2^d for "exact", else :func:`auto_max_evals`. ``algorithm="auto"``:
    exact when 2^d fits the budget; with ``tol``, orthogonal codes (walks stop early; "mc" below their minimum); else,
    split by background parts, up to
    :data:`SPLIT_LEVERAGE_MAX_FEATURES`, Leverage SHAP from 3d evaluations and "leverage_cv" (a
    surrogate per part) from :data:`CONTROL_VARIATE_MIN_EVALS_PER_FEATURE` d, orthogonal codes above; on
    shared coalitions (nothing split) "leverage_cv" up to :data:`LEVERAGE_MAX_FEATURES`, on one
    part; "leverage" where a row's surrogates would not fit in
    memory; else orthogonal codes, or "mc" when the budget cannot pay one pair of orderings. Parts:
    :func:`resolve_parts`.

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
    >>> resolve_algorithm("auto", "auto", 5), resolve_algorithm("auto", 2000, 120)
    (('exact', 500, 1), ('orthogonal', 2000, 1))
    >>> resolve_algorithm("auto", 300, 20, n_background=100), resolve_algorithm("auto", 500, 30, n_background=100)
    (('leverage', 300, 50), ('orthogonal', 500, 100))
    >>> resolve_algorithm("auto", 400, 20, n_background=100)
    ('leverage_cv', 400, 10)
    >>> resolve_algorithm("auto", 500, 30, 1, n_background=100)
    ('leverage_cv', 500, 1)
    """
    if max_evals == "auto":
        budget = 2**d if algorithm == "exact" and d <= MAX_ENUMERATED_PLAYERS else auto_max_evals(d)
    else:
        budget = int(max_evals)
    chosen_by_auto = algorithm == "auto" and d > 1
    if d == 1:
        algorithm = "exact"
    elif chosen_by_auto:
        split = background_parts != 1 and tol is None and n_background > 1
        algorithm = _auto_algorithm(budget, d, split, tol is not None)
        if split and resolve_parts(background_parts, algorithm, d, tol, n_background, budget) == 1:
            split = False  # no divisor of N gives the regression parts
            algorithm = _auto_algorithm(budget, d, split)
        if algorithm == "leverage_cv" and background_parts == "auto" and not split:
            return algorithm, budget, 1  # the shared control variate: one surrogate per row, on the whole background
    reason = SHAPLEY_ALGORITHMS[algorithm].refusal(budget, d)
    if reason is not None:
        raise ValueError(
            (
                f'algorithm="auto" has no algorithm for this budget; even the cheapest, {algorithm!r}, refuses: '
                if chosen_by_auto
                else ""
            )
            + reason
        )
    return algorithm, budget, resolve_parts(background_parts, algorithm, d, tol, n_background, budget)


def resolve_parts(
    background_parts: int | str,
    algorithm: str,
    d: int,
    tol: float | None,
    n_background: int,
    budget: int | None = None,
) -> int:
    """Games each row's game is split into, by equal parts of the background (``background_parts``).

    "auto": one part per background row for sampled algorithms that draw per game, without
    ``tol``; for the regressions above :data:`REGRESSION_SPLIT_FEATURES` features, the largest
    divisor of N at most N · :data:`REGRESSION_SPLIT_FEATURES` / d; for "leverage_cv", also at most
    :data:`CONTROL_VARIATE_COALITIONS` / ``budget`` (one part without a budget).

    Raises
    ------
    ValueError
        An int that does not divide N, or above 1 with a shared design or with ``tol``.

    Examples
    --------
    >>> resolve_parts("auto", "leverage", 30, None, 100), resolve_parts("auto", "leverage", 80, None, 100)
    (25, 10)
    >>> resolve_parts("auto", "orthogonal", 80, None, 100), resolve_parts("auto", "leverage_cv", 8, None, 100, 200)
    (100, 25)
    """
    estimator = SHAPLEY_ALGORITHMS[algorithm]
    if background_parts == "auto":
        if not estimator.draws_per_game() or tol is not None:
            return 1
        target: float = n_background
        if issubclass(estimator, LeverageAlgorithm):
            target = n_background * min(1.0, REGRESSION_SPLIT_FEATURES / d)
        if algorithm == "leverage_cv":
            target = min(target, CONTROL_VARIATE_COALITIONS / budget) if budget else 1
        return max(p for p in range(1, n_background + 1) if n_background % p == 0 and p <= max(target, 1))
    parts = int(background_parts)
    if parts == 1 or algorithm == "exact":
        return 1
    if n_background % parts:
        raise ValueError(f"background_parts={parts} must divide the {n_background} background rows (background_size).")
    if not estimator.draws_per_game():
        raise ValueError(
            f"background_parts={parts} gives every part of the background its own coalitions; algorithm {algorithm!r} "
            "walks one design shared by every game. Use one that draws for every row ('leverage', 'orthogonal')."
        )
    if tol is not None:
        raise ValueError(f"background_parts={parts} has no early stopping: set tol=None or background_parts=1.")
    return parts


def _auto_algorithm(budget: int, d: int, split: bool, stops_early: bool = False) -> str:
    if d <= MAX_ENUMERATED_PLAYERS and 2**d <= budget:
        return "exact"
    if stops_early:  # tol: the walks stop early, the regressions cannot
        return "mc" if budget < SHAPLEY_ALGORITHMS["orthogonal"].minimum_evals(d) else "orthogonal"
    max_features = SPLIT_LEVERAGE_MAX_FEATURES if split else LEVERAGE_MAX_FEATURES
    if d <= max_features and budget >= LEVERAGE_MIN_EVALS_PER_FEATURE * d:
        surrogates = not split or budget >= CONTROL_VARIATE_MIN_EVALS_PER_FEATURE * d
        for name in ("leverage_cv", "leverage") if surrogates else ("leverage",):  # the surrogates need more memory
            if SHAPLEY_ALGORITHMS[name].refusal(budget, d) is None:
                return name
    if budget < SHAPLEY_ALGORITHMS["orthogonal"].minimum_evals(d):
        return "mc"
    return "orthogonal"
