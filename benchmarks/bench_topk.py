"""Benchmark: top-k Shapley identification, CMCS family against the paper's baselines.

What is measured
----------------
Games with exact ground truth (spec: topk_cmcs.md §8), built from data bundled with scikit-learn
or generated. The 2^d coalition values of every game are computed once, through the library's own
games, and cached under ``benchmarks/results/cache/`` (``--rebuild`` recomputes them); the exact
Shapley values come from the full table by enumeration (``TableGame.shapley_values``).

* **Global "retrain" games** (``RetrainGame``: v(S) = mean 3-fold CV score of a clone trained on the
  features in S; v(∅) = a constant predictor's score), each one game:

  - ``diabetes_ridge`` (d = 10): ``load_diabetes``, ``Ridge(alpha=1)``, R², ``KFold(3)``;
  - ``wine_nb`` (d = 13): ``load_wine``, ``GaussianNB()``, accuracy, ``StratifiedKFold(3)``;
  - ``breast_cancer12_nb`` (d = 12): the first 12 columns of ``load_breast_cancer``,
    ``GaussianNB()``, accuracy, ``StratifiedKFold(3)``;
  - ``classification12_knn`` (d = 12): ``make_classification(600, 12, n_informative=6,
    n_redundant=2, random_state=0)``, ``StandardScaler + KNeighborsClassifier(15)``, accuracy,
    ``StratifiedKFold(3)``.

  Folds are shuffled with ``random_state=0``.
* **Local games** (an ``InterventionalGame`` over the explained rows: v_x(S) = mean over 100
  background rows z of f(x_S, z_{N∖S})), one game per explained row, 10 rows per model
  (background = rows 0-99, explained = rows 100-109):

  - ``friedman12_xgb`` (d = 12): ``make_friedman1(1000, 12, noise=1, random_state=0)``,
    ``XGBRegressor(n_estimators=100, max_depth=4)``, prediction;
  - ``breast_cancer12_xgb`` (d = 12): the first 12 columns of ``load_breast_cancer``,
    ``XGBClassifier(n_estimators=100, max_depth=4)``, probability of the positive class.

  As a check of the game, the enumerated Shapley values are compared with
  ``shap.TreeExplainer(..., feature_perturbation="interventional")`` (regression model only; the
  probability output has no interventional TreeSHAP).

Players are ranked by signed value (the paper's convention). Every run is one game of a
``TableGame``: all runs of a setting go through one call of ``top_k_shapley`` in lockstep. For a
local model the runs are spread evenly over its explained rows, so run r explains row r mod 10.

**Fixed budget.** For k in ``--ks`` (3, 5), every method of ``TOPK_ALGORITHMS`` and every budget of
``--budgets`` (100, 200, 300, 500, 750, 1000, 1500, 2000, 3000 evaluations of v per run, v(∅) and
v(N) included), ``--runs`` runs (400) each: mean and standard error of binary precision, ratio
precision and the inclusion-exclusion error ε(K̂) (spec §2, tie-aware, against the exact values of
the run's game). Below their warm-up, about 30 (d + 1) = 330-420 evaluations here, Greedy CMCS and
CMCS@K are plain CMCS; below 30 (d − 1) + 2, SamplingSHAP@K is permutation sampling.

**PAC mode** (Table 1 of the paper): k = 5, δ = 0.01, ε = 0.0005 (units of v), T_min = 30, until
the SHAP@K rule holds, capped at ``--pac-cap`` evaluations per run (runs stopped by the cap are
counted and reported), ``--pac-runs`` runs (300), for SamplingSHAP@K, CMCS, CMCS@K and Greedy CMCS:
mean ± SE of the evaluations until stopping, accuracy (fraction of runs with ε(K̂) <= ε) and the
ratios of the mean evaluations to SamplingSHAP@K's, next to the paper's Table 1 ratios.

**Local explain time** (``--timing-rows`` rows, 10 with ``--quick``, 100 otherwise; skipped with 0):
on the friedman12_xgb model, background and explained rows (from row 100 on), the wall time of
``TopKShapley(model, prefit=True, k=5, max_evals=B, random_state=0, progress=False)
.fit(background).explain(rows)`` (Greedy CMCS, ranking by magnitude, ``rounds_per_decision="auto"``:
an adaptive step runs a tenth of the rounds run so far; also with ``rounds_per_decision=1``, the
paper's one round per decision, one small model call per round) against
``PermutationShapExplainer(model, max_evals=B, background_size=None, random_state=0,
progress=False).fit(background).explain(rows)`` (sampler "auto", and "antithetic") at the same
budget B = ``--timing-budget`` (500) evaluations per row; ``--timing-repeats`` (7) repeats,
interleaved, after a warm-up of each; medians and their ratio, plus the evaluations each used per
row (the explanations' ``diagnostics``). Target: TopKShapley / PermutationShapExplainer <= 1.1.

Standard errors of local games are stratified by explained row (Σ_r (n_r/n)² s_r²/n_r): they
measure the algorithms' randomness on these rows, not the choice of rows (the paper draws a
random row per run, hence its large local SEs). Seeds are fixed per setting (crc32 of its name).

Targets
-------
* Fixed budget: the CMCS family (cmcs, greedy_cmcs, cmcs_at_k) at least as precise as permutation
  sampling and SamplingSHAP@K at every budget. Checked per game, k and budget, for binary and ratio
  precision and for ε(K̂): the best family member, and each member, against each baseline; a
  violation is a mean worse than the baseline's by more than 2 standard errors of the difference.
  Cells where a mean is merely below (within noise) are counted too.
* PAC: CMCS@K / SamplingSHAP@K <= 0.85 on every game (paper: 0.75-0.91, 9-25 % fewer calls),
  with accuracy >= 1 - δ.

Rerun
-----
::

    python benchmarks/bench_topk.py            # full run (about 9 minutes on 2 shared cores, tables cached;
                                               # building the tables first takes about 3 minutes)
    python benchmarks/bench_topk.py --quick    # smoke run (under 2 minutes), bench_topk_quick.json

Options: ``--games``, ``--ks``, ``--budgets``, ``--methods``, ``--runs``, ``--pac-runs``, ``--pac-cap``,
``--n-jobs`` (parallel CV fits while building retrain tables), ``--rebuild``, ``--seed``, ``--output``,
``--timing-rows``, ``--timing-budget``, ``--timing-repeats``, ``--rounds-per-decision`` (fixed-budget
and PAC runs: an int or "auto"; default 1, the paper's methods).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import shap
import sklearn
import xgboost
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine, make_classification, make_friedman1
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

try:
    import sklearn_shapq
except ImportError:  # a checkout that is not installed: python benchmarks/bench_topk.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import sklearn_shapq
from sklearn_shapq import PermutationShapExplainer, TopKShapley
from sklearn_shapq.algorithms import (
    TOPK_ALGORITHMS,
    binary_precision,
    inclusion_exclusion_error,
    ratio_precision,
    top_k_shapley,
)
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.games import InterventionalGame, RetrainGame, TableGame, make_model_function

RESULTS = Path(__file__).resolve().parent / "results"
CACHE = RESULTS / "cache"
CMCS_FAMILY = ("cmcs", "greedy_cmcs", "cmcs_at_k")
BASELINES = ("permutation", "sampling_shap_at_k")
METRICS: dict[str, tuple[Callable, int]] = {  # name -> (metric(phi, top_k), +1 higher is better / -1 lower)
    "binary": (binary_precision, 1),
    "ratio": (ratio_precision, 1),
    "ie_error": (inclusion_exclusion_error, -1),
}
NOISE_SE = 2.0  # a difference counts beyond noise above this many standard errors
T_MIN = 30
PAC = {"k": 5, "delta": 0.01, "epsilon": 0.0005, "t_min": T_MIN}
PAC_ORDER = ("sampling_shap_at_k", "cmcs", "cmcs_at_k", "greedy_cmcs")
SHORT = {
    "cmcs": "CMCS",
    "greedy_cmcs": "Greedy",
    "cmcs_at_k": "CMCS@K",
    "permutation": "Perm",
    "sampling_shap_at_k": "SS@K",
    "svarm": "SVARM",
    "stratified_svarm": "StrSVARM",
    "leverage": "Lever",
}
# spec topk_cmcs.md §9.2 (the paper's Table 1): game -> (n, mean calls of SamplingSHAP@K, CMCS, CMCS@K, Greedy)
PAPER_TABLE1 = {
    "Adult (global)": (14, 38998, 137861, 30995, 39071),
    "German credit (global)": (20, 21939, 56738, 16437, 22327),
    "Bike sharing (global)": (15, 4850, 13053, 3982, 8894),
    "Bank marketing (global)": (16, 15124, 39144, 12000, 16260),
    "Diabetes (global)": (10, 3723, 7793, 2976, 4593),
    "Titanic (global)": (11, 4852, 11036, 3884, 5782),
    "Wine (global)": (13, 34953, 120859, 29913, 34265),
    "NLP sentiment (local)": (14, 626346, 3351274, 568261, 447252),
    "ImageNet (local)": (14, 135851, 578670, 108267, 261586),
    "Adult (local)": (14, 18464, 55779, 14406, 16160),
}
RATIOS = (("cmcs_at_k", "sampling_shap_at_k"), ("greedy_cmcs", "sampling_shap_at_k"), ("cmcs", "sampling_shap_at_k"))
EXTRA_RATIOS = (("greedy_cmcs", "cmcs"), ("cmcs_at_k", "cmcs"))


# --------------------------------------------------------------------------------------------------
# games


def _first_columns(loader: Callable, n_columns: int) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    def load() -> tuple[np.ndarray, np.ndarray]:
        X, y = loader(return_X_y=True)
        return X[:, :n_columns], y

    return load


@dataclass(frozen=True)
class GlobalSpec:
    """A retrain game: v(S) = mean CV score of ``estimator()`` trained on the features in S."""

    name: str
    description: str
    load: Callable[[], tuple[np.ndarray, np.ndarray]]
    estimator: Callable[[], Any]
    scoring: str
    classification: bool

    def build(self, n_jobs: int) -> tuple[np.ndarray, dict]:
        """Return the (1, 2^d) table of the game and build information."""
        X, y = self.load()
        splitter = StratifiedKFold if self.classification else KFold
        cv = splitter(3, shuffle=True, random_state=0)
        game = RetrainGame(self.estimator(), X, y, cv=cv, scoring=self.scoring, n_jobs=n_jobs)
        masks = all_coalitions(X.shape[1])
        table = game(masks, np.zeros(len(masks), dtype=np.intp))[:, 0]
        return table[None, :], {"n_fits": 3 * game.n_unique, "n_samples": len(y)}


@dataclass(frozen=True)
class LocalSpec:
    """Local interventional games of an xgboost model, one per explained row."""

    name: str
    description: str
    load: Callable[[], tuple[np.ndarray, np.ndarray]]
    model: Callable[[], Any]
    output: str
    n_background: int = 100
    n_rows: int = 10

    def build(self, n_jobs: int) -> tuple[np.ndarray, dict]:
        """Return the (n_rows, 2^d) tables (one per explained row) and build information.

        ``n_jobs`` is unused: xgboost predicts with its own threads.
        """
        X, y = self.load()
        model = self.model().fit(X, y)
        backend = resolve_backend("cpu")
        background = X[: self.n_background]
        rows = X[self.n_background : self.n_background + self.n_rows]
        d = X.shape[1]
        game = InterventionalGame(make_model_function(model, self.output, backend), background, rows)
        if game.n_outputs != 1:
            raise ValueError(f"{self.name}: the local game must have one output, got {game.n_outputs}.")
        masks = all_coalitions(d)
        tables = np.stack([game(masks, np.full(len(masks), row))[:, 0] for row in range(len(rows))])
        info: dict[str, Any] = {"n_model_rows": game.n_model_rows}
        if self.output == "predict":  # the game's exact values against interventional TreeSHAP
            explainer = shap.TreeExplainer(model, background, feature_perturbation="interventional")
            reference = np.asarray(explainer.shap_values(rows)).reshape(len(rows), d)
            exact = TableGame(tables).shapley_values()[:, :, 0]
            info["max_abs_diff_vs_treeshap"] = float(np.abs(exact - reference).max())
        return tables, info


GAME_SPECS: dict[str, GlobalSpec | LocalSpec] = {
    spec.name: spec
    for spec in (
        GlobalSpec(
            "diabetes_ridge",
            "load_diabetes (d=10), Ridge(alpha=1), 3-fold CV R^2",
            lambda: load_diabetes(return_X_y=True),
            lambda: Ridge(alpha=1.0),
            "r2",
            classification=False,
        ),
        GlobalSpec(
            "wine_nb",
            "load_wine (d=13), GaussianNB, 3-fold stratified CV accuracy",
            lambda: load_wine(return_X_y=True),
            GaussianNB,
            "accuracy",
            classification=True,
        ),
        GlobalSpec(
            "breast_cancer12_nb",
            "load_breast_cancer first 12 columns, GaussianNB, 3-fold stratified CV accuracy",
            _first_columns(load_breast_cancer, 12),
            GaussianNB,
            "accuracy",
            classification=True,
        ),
        GlobalSpec(
            "classification12_knn",
            "make_classification(600, 12, n_informative=6, n_redundant=2), scaler + 15-NN, 3-fold CV accuracy",
            lambda: make_classification(600, 12, n_informative=6, n_redundant=2, random_state=0),
            lambda: make_pipeline(StandardScaler(), KNeighborsClassifier(15)),
            "accuracy",
            classification=True,
        ),
        LocalSpec(
            "friedman12_xgb",
            "make_friedman1(1000, 12, noise=1), XGBRegressor(100 trees, depth 4), prediction; rows 100-109",
            lambda: make_friedman1(1000, 12, noise=1.0, random_state=0),
            lambda: xgboost.XGBRegressor(n_estimators=100, max_depth=4, n_jobs=2, random_state=0),
            "predict",
        ),
        LocalSpec(
            "breast_cancer12_xgb",
            "load_breast_cancer first 12 columns, XGBClassifier(100 trees, depth 4), probability; rows 100-109",
            _first_columns(load_breast_cancer, 12),
            lambda: xgboost.XGBClassifier(n_estimators=100, max_depth=4, n_jobs=2, random_state=0),
            "probability",
        ),
    )
}
QUICK_GAMES = ("diabetes_ridge", "friedman12_xgb")


def all_coalitions(d: int) -> np.ndarray:
    """All 2^d coalitions (2^d, d), bit j of the index <-> player j (the ``TableGame`` layout)."""
    return (np.arange(1 << d, dtype=np.int64)[:, None] >> np.arange(d)) & 1 == 1


@dataclass
class Problem:
    """A game family: one table per game (1 for a global game, one per explained row for a local one)."""

    name: str
    kind: str
    tables: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def d(self) -> int:
        """Number of players."""
        return self.tables.shape[1].bit_length() - 1

    @property
    def phi(self) -> np.ndarray:
        """Exact Shapley values (n_tables, d)."""
        return TableGame(self.tables).shapley_values()[:, :, 0]

    def runs(self, n_runs: int) -> tuple[TableGame, np.ndarray, np.ndarray]:
        """``n_runs`` repeated runs spread evenly over the tables.

        Returns
        -------
        game : TableGame
            One game per run.
        phi : ndarray of shape (n_runs, d)
            Exact values of each run's game.
        strata : int ndarray of shape (n_runs,)
            Table (explained row) of each run.
        """
        strata = np.arange(n_runs) % len(self.tables)
        if len(self.tables) == 1:
            return TableGame(self.tables[0], n_games=n_runs), np.repeat(self.phi, n_runs, axis=0), strata
        return TableGame(self.tables[strata]), self.phi[strata], strata


def load_problem(name: str, n_jobs: int, rebuild: bool) -> Problem:
    """Load a game's tables from the cache, or build and cache them (keyed by spec and versions)."""
    spec = GAME_SPECS[name]
    signature = f"{spec.description}|sklearn {sklearn.__version__}|xgboost {xgboost.__version__}"
    path = CACHE / f"{name}.npz"
    kind = "global" if isinstance(spec, GlobalSpec) else "local"
    if path.exists() and not rebuild:
        with np.load(path, allow_pickle=False) as cached:
            if str(cached["signature"]) == signature:
                info = json.loads(str(cached["info"]))
                return Problem(name, kind, cached["tables"], {**info, "cached": True})
    start = time.perf_counter()
    tables, info = spec.build(n_jobs)
    info.update(description=spec.description, build_seconds=time.perf_counter() - start)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, tables=tables, signature=signature, info=json.dumps(info))
    print(f"built {name}: {tables.shape[0]} x 2^{tables.shape[1].bit_length() - 1} in {info['build_seconds']:.1f} s")
    return Problem(name, kind, tables, {**info, "cached": False})


def describe(problem: Problem, ks: tuple[int, ...]) -> dict:
    """The game's exact values and the gaps at the top-k borders (per table)."""
    ordered = -np.sort(-problem.phi, axis=1)
    gaps = {f"gap_k{k}": (ordered[:, k - 1] - ordered[:, k]).tolist() for k in ks}
    return {
        "kind": problem.kind,
        "d": problem.d,
        "n_tables": len(problem.tables),
        "v_empty": problem.tables[:, 0].tolist(),
        "v_full": problem.tables[:, -1].tolist(),
        "phi": problem.phi.tolist(),
        **gaps,
        **problem.info,
    }


# --------------------------------------------------------------------------------------------------
# runs and statistics


def seed_of(*parts: Any) -> int:
    """A fixed seed per setting."""
    return zlib.crc32("|".join(map(str, parts)).encode())


def mean_se(values: np.ndarray, strata: np.ndarray) -> tuple[float, float]:
    """Mean and standard error, stratified by ``strata`` (plain SE for one stratum)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    groups = [values[strata == s] for s in np.unique(strata)]
    if min(g.size for g in groups) < 2:
        groups = [values]
    variance = sum((g.size / n) ** 2 * g.var(ddof=1) / g.size for g in groups)
    return float(values.mean()), float(np.sqrt(variance))


def run_fixed_budget(
    problem: Problem,
    ks: tuple[int, ...],
    budgets: list[int],
    methods: tuple[str, ...],
    n_runs: int,
    seed: int,
    rounds_per_decision: int | str,
) -> list[dict]:
    """Every (k, budget, method) setting, ``n_runs`` runs in lockstep; one row of statistics each."""
    rows = []
    for k in ks:
        for budget in budgets:
            for method in methods:
                game, phi, strata = problem.runs(n_runs)
                start = time.perf_counter()
                with warnings.catch_warnings():  # budgets below the warm-up are measured on purpose
                    warnings.filterwarnings("ignore", message="max_evals=.* does not cover", category=UserWarning)
                    result = top_k_shapley(
                        game,
                        k,
                        method,
                        max_evals=budget,
                        t_min=T_MIN,
                        rounds_per_decision=rounds_per_decision,
                        random_state=seed_of(seed, problem.name, k, method, budget),
                    )
                row = {"game": problem.name, "d": problem.d, "k": k, "budget": budget, "method": method}
                row["seconds"] = time.perf_counter() - start
                row["evals_mean"] = float(result.n_evals.mean())
                row["evals_max"] = int(result.n_evals.max())
                for name, (metric, _) in METRICS.items():
                    row[f"{name}_mean"], row[f"{name}_se"] = mean_se(metric(phi, result.top_k), strata)
                rows.append(row)
            line = "  ".join(f"{SHORT[r['method']]} {r['binary_mean']:.2f}" for r in rows[-len(methods) :])
            print(f"{problem.name:21s} k={k} B={budget:5d}  binary: {line}", flush=True)
    return rows


def run_pac(problem: Problem, n_runs: int, cap: int | None, seed: int, rounds_per_decision: int | str) -> list[dict]:
    """PAC mode (Table 1 settings) for the methods with confidence bounds; one row per method."""
    rows = []
    for method in PAC_ORDER:
        game, phi, strata = problem.runs(n_runs)
        start = time.perf_counter()
        result = top_k_shapley(
            game,
            PAC["k"],
            method,
            max_evals=cap,
            epsilon=PAC["epsilon"],
            delta=PAC["delta"],
            t_min=PAC["t_min"],
            rounds_per_decision=rounds_per_decision,
            random_state=seed_of(seed, problem.name, "pac", method),
        )
        evals = result.n_evals.astype(np.float64)
        error = inclusion_exclusion_error(phi, result.top_k)
        row = {"game": problem.name, "kind": problem.kind, "d": problem.d, "method": method}
        row["seconds"] = time.perf_counter() - start
        row["evals_mean"], row["evals_se"] = mean_se(evals, strata)
        row["evals_median"], row["evals_max"] = float(np.median(evals)), int(evals.max())
        row["accuracy"], row["accuracy_se"] = mean_se(error <= PAC["epsilon"], strata)
        row["exact_top_k"] = float(binary_precision(phi, result.top_k).mean())
        row["pac_satisfied"] = float(result.pac_satisfied.mean())
        row["capped"] = int((~result.pac_satisfied).sum())
        if problem.kind == "local":
            row["evals_mean_per_row"] = [float(evals[strata == s].mean()) for s in np.unique(strata)]
        rows.append(row)
        print(
            f"{problem.name:21s} PAC {SHORT[method]:7s} evals {row['evals_mean']:9.0f} ± {row['evals_se']:7.0f}  "
            f"accuracy {row['accuracy']:.3f}  capped {row['capped']}  ({row['seconds']:.1f} s)",
            flush=True,
        )
    return rows


def ratio_with_se(a: float, a_se: float, b: float, b_se: float) -> tuple[float, float]:
    """a / b with its delta-method standard error (independent a and b)."""
    ratio = a / b
    return ratio, abs(ratio) * float(np.hypot(a_se / a, b_se / b))


def pac_ratios(rows: list[dict]) -> dict:
    """Per game: mean evaluations of each method divided by another's (paper's derived ratios and extras)."""
    out: dict[str, dict] = {}
    for game in dict.fromkeys(r["game"] for r in rows):
        by = {r["method"]: r for r in rows if r["game"] == game}
        out[game] = {}
        for num, den in (*RATIOS, *EXTRA_RATIOS):
            if num in by and den in by:
                a, b = by[num], by[den]
                value, se = ratio_with_se(a["evals_mean"], a["evals_se"], b["evals_mean"], b["evals_se"])
                out[game][f"{num}/{den}"] = {"ratio": value, "se": se}
    return out


# --------------------------------------------------------------------------------------------------
# local explain time: TopKShapley against PermutationShapExplainer at the same budget

TIMING_GAME = "friedman12_xgb"
TIMING_K = 5


def run_local_timing(n_rows: int, budget: int, repeats: int) -> dict:
    """Median wall time of TopKShapley's and PermutationShapExplainer's ``explain`` on the same rows.

    Same model (friedman12_xgb's), background (its rows 0-99), explained rows (from row 100 on) and
    budget per row; every explainer with ``progress=False``, warmed up once, then ``repeats`` rounds
    in which each explains the rows once (interleaved, so that machine noise hits all alike).
    """
    spec = GAME_SPECS[TIMING_GAME]
    X, y = spec.load()
    model = spec.model().fit(X, y)
    background = X[: spec.n_background]
    rows = X[spec.n_background : spec.n_background + n_rows]
    common = {"max_evals": budget, "random_state": 0, "progress": False}
    explainers = {
        "topk": TopKShapley(model, k=TIMING_K, prefit=True, **common).fit(background),
        "topk_paper": TopKShapley(model, k=TIMING_K, prefit=True, rounds_per_decision=1, **common).fit(background),
        "permutation_auto": PermutationShapExplainer(model, background_size=None, **common).fit(background),
        "permutation_antithetic": PermutationShapExplainer(
            model, algorithm="antithetic", background_size=None, **common
        ).fit(background),
    }
    for explainer in explainers.values():
        explainer.explain(rows[:2])  # numba JIT or cache loading
    walls: dict[str, list[float]] = {name: [] for name in explainers}
    evals: dict[str, float] = {}
    for _ in range(repeats):
        for name, explainer in explainers.items():
            start = time.perf_counter()
            explanation = explainer.explain(rows)
            walls[name].append(time.perf_counter() - start)
            evals[name] = float(np.mean(explanation.diagnostics["n_evals"]))
    medians = {name: float(statistics.median(w)) for name, w in walls.items()}
    out: dict[str, Any] = {
        "game": TIMING_GAME,
        "model": spec.description,
        "n_rows": n_rows,
        "n_background": spec.n_background,
        "max_evals": budget,
        "k": TIMING_K,
        "repeats": repeats,
        "topk": "TopKShapley(model, k=5, prefit=True, [rounds_per_decision=1,] max_evals=B, random_state=0, "
        "progress=False)"
        ".fit(background).explain(rows): greedy_cmcs, absolute ranking",
        "permutation": "PermutationShapExplainer(model, [algorithm='antithetic',] max_evals=B, background_size=None, "
        "random_state=0, progress=False).fit(background).explain(rows)",
        "permutation_auto_sampler": explainers["permutation_auto"].algorithm_,
        "evals_per_row_mean": evals,
        "wall_s_median": medians,
        "wall_s_all": walls,
    }
    for topk in ("topk", "topk_paper"):
        for name in ("permutation_auto", "permutation_antithetic"):
            out[f"{topk}_over_{name}"] = medians[topk] / medians[name]
            out[f"{topk}_over_{name}_per_eval"] = (medians[topk] / evals[topk]) / (medians[name] / evals[name])
            out[f"{topk}_over_{name}_per_repeat"] = [t / p for t, p in zip(walls[topk], walls[name], strict=True)]
    out["target_topk_over_permutation_max"] = 1.1
    out["target_met"] = out["topk_over_permutation_auto"] <= 1.1
    out["target_met_paper_rounds"] = out["topk_paper_over_permutation_auto"] <= 1.1
    print(
        f"\nlocal explain, {TIMING_GAME}, {n_rows} rows, max_evals={budget}, medians of {repeats}: "
        + ", ".join(f"{name} {medians[name]:.3f} s ({evals[name]:.0f} evals/row)" for name in explainers)
        + f"; TopKShapley / Permutation ({out['permutation_auto_sampler']}) {out['topk_over_permutation_auto']:.2f}, "
        f"/ Permutation (antithetic) {out['topk_over_permutation_antithetic']:.2f} "
        f"({out['topk_over_permutation_antithetic_per_eval']:.2f} per evaluation); with rounds_per_decision=1: "
        f"{out['topk_paper_over_permutation_auto']:.2f}, {out['topk_paper_over_permutation_antithetic']:.2f} "
        "(target <= 1.1)",
        flush=True,
    )
    return out


# --------------------------------------------------------------------------------------------------
# target checks


def compare(a: dict, b: dict, metric: str) -> tuple[str, float, float]:
    """Verdict of ``a`` against ``b`` on ``metric``: "better", "tie" (within noise) or "WORSE"."""
    sign = METRICS[metric][1]
    diff = sign * (a[f"{metric}_mean"] - b[f"{metric}_mean"])
    noise = NOISE_SE * float(np.hypot(a[f"{metric}_se"], b[f"{metric}_se"]))
    verdict = "better" if diff > noise else ("WORSE" if diff < -noise else "tie")
    return verdict, diff, noise


def check_fixed_budget(rows: list[dict]) -> tuple[list[dict], dict]:
    """The CMCS family against permutation sampling and SamplingSHAP@K in every (game, k, budget) cell.

    Returns one record per cell and metric, and the violation counts per metric.
    """
    cells: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        cells.setdefault((r["game"], r["d"], r["k"], r["budget"]), {})[r["method"]] = r
    checks = []
    for (game, d, k, budget), by in cells.items():
        if not all(m in by for m in (*CMCS_FAMILY, *BASELINES)):
            continue
        for metric, (_, sign) in METRICS.items():
            best = max(CMCS_FAMILY, key=lambda m: sign * by[m][f"{metric}_mean"])
            record = {
                "game": game,
                "k": k,
                "budget": budget,
                "after_warm_up": budget >= T_MIN * (d + 1) + 2,
                "metric": metric,
                "best": best,
                "best_mean": by[best][f"{metric}_mean"],
                "best_se": by[best][f"{metric}_se"],
                "baselines": {b: [by[b][f"{metric}_mean"], by[b][f"{metric}_se"]] for b in BASELINES},
                "verdicts": {},
                "below": {},
            }
            for member in CMCS_FAMILY:
                for baseline in BASELINES:
                    verdict, diff, _ = compare(by[member], by[baseline], metric)
                    record["verdicts"][f"{member}>={baseline}"] = verdict
                    record["below"][f"{member}>={baseline}"] = bool(diff < 0)
            record["best_ok"] = all(record["verdicts"][f"{best}>={b}"] != "WORSE" for b in BASELINES)
            checks.append(record)
    summary = {}
    for metric in METRICS:
        records = [c for c in checks if c["metric"] == metric]
        summary[metric] = {
            "cells": len(records),
            "best_violations": sum(not c["best_ok"] for c in records),
            "best_below_any_baseline_within_noise": sum(
                any(c["below"][f"{c['best']}>={b}"] for b in BASELINES) and c["best_ok"] for c in records
            ),
            "member_violations": {
                m: sum(any(c["verdicts"][f"{m}>={b}"] == "WORSE" for b in BASELINES) for c in records)
                for m in CMCS_FAMILY
            },
            "member_violations_after_warm_up": {
                m: sum(
                    c["after_warm_up"] and any(c["verdicts"][f"{m}>={b}"] == "WORSE" for b in BASELINES)
                    for c in records
                )
                for m in CMCS_FAMILY
            },
            "cells_after_warm_up": sum(c["after_warm_up"] for c in records),
            "best_member_counts": {m: sum(c["best"] == m for c in records) for m in CMCS_FAMILY},
        }
    return checks, summary


# --------------------------------------------------------------------------------------------------
# printing


def print_fixed_tables(rows: list[dict], methods: tuple[str, ...]) -> None:
    """Per game, k and metric: budget x method means, and best CMCS-family member / best baseline."""
    for game in dict.fromkeys(r["game"] for r in rows):
        for k in sorted({r["k"] for r in rows if r["game"] == game}):
            sub = {(r["budget"], r["method"]): r for r in rows if r["game"] == game and r["k"] == k}
            budgets = sorted({b for b, _ in sub})
            for metric, (_, sign) in METRICS.items():
                fmt = "{:9.2e}" if metric == "ie_error" else "{:9.3f}"
                print(f"\n{game}  k={k}  {metric}: mean per budget, then 2 SE at the largest budget")
                print(f"{'budget':>6s} " + " ".join(f"{SHORT[m]:>9s}" for m in methods) + "  fam/base")
                for budget in budgets:
                    means = {m: sub[(budget, m)][f"{metric}_mean"] for m in methods}
                    family = [sign * means[m] for m in CMCS_FAMILY if m in means]
                    base = [sign * means[m] for m in BASELINES if m in means]
                    ratio = max(family) / max(base) if family and base and max(base) else float("nan")
                    print(f"{budget:6d} " + " ".join(fmt.format(v) for v in means.values()) + f"  {ratio:8.3f}")
                last = budgets[-1]
                print(f"{'2 SE':>6s} " + " ".join(fmt.format(2 * sub[(last, m)][f"{metric}_se"]) for m in methods))


def print_checks(checks: list[dict], summary: dict) -> None:
    """Per cell: best family member, its mean against both baselines, and the violations."""
    print("\nFixed-budget target: CMCS family >= permutation and SamplingSHAP@K (violation: worse by > 2 SE)")
    for metric in METRICS:
        print(f"\n[{metric}] {'game':21s} k budget  best      mean     Perm     SS@K  best  members worse")
        for c in (c for c in checks if c["metric"] == metric):
            worse = sorted({SHORT[key.split(">=")[0]] for key, v in c["verdicts"].items() if v == "WORSE"})
            base = " ".join(f"{c['baselines'][b][0]:8.3g}" for b in BASELINES)
            print(
                f"{'':{len(metric) + 2}s} {c['game']:21s} {c['k']} {c['budget']:6d}  {SHORT[c['best']]:7s} "
                f"{c['best_mean']:8.3g} {base}  {'ok' if c['best_ok'] else 'VIOL'}  {','.join(worse) or '-'}"
            )
        s = summary[metric]
        print(
            f"  {metric}: best member violates in {s['best_violations']} of {s['cells']} cells; best below a baseline "
            f"within noise in {s['best_below_any_baseline_within_noise']}; member violations {s['member_violations']} "
            f"(after warm-up, of {s['cells_after_warm_up']} cells: {s['member_violations_after_warm_up']}); "
            f"best member counts {s['best_member_counts']}"
        )


def print_pac(rows: list[dict], ratios: dict, cap: int | None) -> None:
    """PAC table, our ratios next to the paper's Table 1 ratios."""
    print(f"\nPAC mode: k={PAC['k']}, delta={PAC['delta']}, epsilon={PAC['epsilon']}, t_min={PAC['t_min']}, cap={cap}")
    print(f"{'game':21s} " + " ".join(f"{SHORT[m] + ' evals':>20s}" for m in PAC_ORDER) + "   accuracy   capped")
    for game in ratios:
        by = {r["method"]: r for r in rows if r["game"] == game}
        cells = " ".join(f"{by[m]['evals_mean']:10.0f} ± {by[m]['evals_se']:7.0f}" for m in PAC_ORDER)
        acc = "/".join(f"{by[m]['accuracy']:.2f}" for m in PAC_ORDER)
        capped = "/".join(str(by[m]["capped"]) for m in PAC_ORDER)
        print(f"{game:21s} {cells}   {acc}   {capped}")
    names = [f"{SHORT[a]}/{SHORT[b]}" for a, b in (*RATIOS, *EXTRA_RATIOS)]
    print(f"\n{'ratio of mean evaluations':30s} " + " ".join(f"{n:>15s}" for n in names) + "  target CMCS@K/SS@K<=0.85")
    for game, values in ratios.items():
        cells = []
        for a, b in (*RATIOS, *EXTRA_RATIOS):
            v = values.get(f"{a}/{b}")
            cells.append(f"{v['ratio']:7.3f} ± {v['se']:5.3f}" if v else f"{'-':>15s}")
        ok = values.get("cmcs_at_k/sampling_shap_at_k", {}).get("ratio", np.inf) <= 0.85
        print(f"{'ours: ' + game:30s} " + " ".join(cells) + f"  {'ok' if ok else 'MISSED'}")
    for game, (_, ss, cmcs, at_k, greedy) in PAPER_TABLE1.items():
        paper = {"cmcs_at_k": at_k, "greedy_cmcs": greedy, "cmcs": cmcs, "sampling_shap_at_k": ss}
        cells = [f"{paper[a] / paper[b]:15.3f}" for a, b in (*RATIOS, *EXTRA_RATIOS)]
        print(f"{'paper: ' + game:30s} " + " ".join(cells))


def plot(rows: list[dict], methods: tuple[str, ...], path: Path) -> None:
    """Binary precision (± 2 SE) against budget: one panel per game and k."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = list(dict.fromkeys(r["game"] for r in rows))
    ks = sorted({r["k"] for r in rows})
    fig, axes = plt.subplots(len(ks), len(games), figsize=(4 * len(games), 3.4 * len(ks)), squeeze=False)
    for row_axes, k in zip(axes, ks, strict=True):
        for ax, game in zip(row_axes, games, strict=True):
            for method in methods:
                sub = sorted(
                    (r for r in rows if (r["game"], r["k"], r["method"]) == (game, k, method)),
                    key=lambda r: r["budget"],
                )
                ax.errorbar(
                    [r["budget"] for r in sub],
                    [r["binary_mean"] for r in sub],
                    yerr=[2 * r["binary_se"] for r in sub],
                    label=SHORT[method],
                    marker="o",
                    ms=3,
                    ls="-" if method in CMCS_FAMILY else "--",
                )
            ax.set(xscale="log", xlabel="budget (evaluations)", ylabel="binary precision", title=f"{game}, k={k}")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------------------------------
# main


def environment() -> dict:
    """Versions and machine."""
    return {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "sklearn": sklearn.__version__,
        "xgboost": xgboost.__version__,
        "shap": shap.__version__,
        "sklearn_shapq": getattr(sklearn_shapq, "__version__", "?"),
        "machine": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 games, 3 budgets, 40 runs, 20 PAC runs")
    parser.add_argument("--games", nargs="*", choices=list(GAME_SPECS), default=None)
    parser.add_argument("--ks", nargs="*", type=int, default=[3, 5])
    parser.add_argument("--budgets", nargs="*", type=int, default=[100, 200, 300, 500, 750, 1000, 1500, 2000, 3000])
    parser.add_argument("--methods", nargs="*", choices=list(TOPK_ALGORITHMS), default=list(TOPK_ALGORITHMS))
    parser.add_argument("--runs", type=int, default=400, help="runs per fixed-budget setting")
    parser.add_argument("--pac-runs", type=int, default=300, help="runs per PAC setting (0: skip)")
    parser.add_argument("--pac-cap", type=int, default=1_000_000, help="evaluations per PAC run (0: unlimited)")
    parser.add_argument("--n-jobs", type=int, default=1, help="parallel CV fits while building retrain tables")
    parser.add_argument("--rebuild", action="store_true", help="recompute the cached game tables")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rounds-per-decision",
        type=lambda value: value if value == "auto" else int(value),
        default=1,
        help='adaptive rounds per choice: an int or "auto" (1: the paper\'s methods)',
    )
    parser.add_argument("--output", default=None)
    parser.add_argument("--timing-rows", type=int, default=None, help="rows of the local explain timing (0: skip)")
    parser.add_argument("--timing-budget", type=int, default=500, help="max_evals per row of the local timing")
    parser.add_argument("--timing-repeats", type=int, default=7, help="interleaved repeats of the local timing")
    args = parser.parse_args()
    if args.timing_rows is None:
        args.timing_rows = 10 if args.quick else 100
    if args.quick:
        args.games = args.games or list(QUICK_GAMES)
        args.budgets, args.runs, args.pac_runs = [200, 500, 1000], 40, 20
    args.games = args.games or list(GAME_SPECS)
    args.output = Path(args.output or RESULTS / ("bench_topk_quick.json" if args.quick else "bench_topk.json"))
    assert set(PAC_ORDER) <= {name for name, family in TOPK_ALGORITHMS.items() if family.pac}
    return args


def main() -> None:
    args = parse_args()
    methods = tuple(args.methods)
    cap = args.pac_cap or None
    start = time.perf_counter()
    out: dict[str, Any] = {"environment": environment(), "settings": {k: str(v) for k, v in vars(args).items()}}
    out["settings"].update(pac=PAC, noise_se=NOISE_SE)
    problems = [load_problem(name, args.n_jobs, args.rebuild) for name in args.games]
    out["games"] = {p.name: describe(p, tuple(args.ks)) for p in problems}
    out["seconds"] = {"tables": time.perf_counter() - start}

    phase = time.perf_counter()
    fixed = [
        row
        for p in problems
        for row in run_fixed_budget(
            p, tuple(args.ks), args.budgets, methods, args.runs, args.seed, args.rounds_per_decision
        )
    ]
    out["seconds"]["fixed_budget"] = time.perf_counter() - phase
    checks, summary = check_fixed_budget(fixed)
    out.update(fixed_budget=fixed, fixed_budget_checks=checks, fixed_budget_summary=summary)
    print_fixed_tables(fixed, methods)
    print_checks(checks, summary)
    if len(args.budgets) > 1:
        plot(fixed, methods, args.output.with_suffix(".png"))

    if args.pac_runs:
        phase = time.perf_counter()
        pac = [row for p in problems for row in run_pac(p, args.pac_runs, cap, args.seed, args.rounds_per_decision)]
        out["seconds"]["pac"] = time.perf_counter() - phase
        ratios = pac_ratios(pac)
        paper = {g: {"n": v[0], **dict(zip(PAC_ORDER, v[1:], strict=True))} for g, v in PAPER_TABLE1.items()}
        out.update(pac=pac, pac_ratios=ratios, paper_table1=paper)
        print_pac(pac, ratios, cap)

    if args.timing_rows:
        phase = time.perf_counter()
        out["local_timing"] = run_local_timing(args.timing_rows, args.timing_budget, args.timing_repeats)
        out["seconds"]["local_timing"] = time.perf_counter() - phase

    out["seconds"]["total"] = time.perf_counter() - start
    out["environment"]["load_average_at_end"] = os.getloadavg()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=1))
    print(f"\nwrote {args.output} after {out['seconds']['total']:.0f} s ({out['seconds']})")


if __name__ == "__main__":
    main()
