"""Benchmark: exact product-kernel SHAP against shapiq's ProductKernelExplainer, and what exactness buys.

What is measured
----------------
For each d in ``--dims`` (default 8, 50, 100, 200), one ``SVR(kernel="rbf", gamma="scale", C=10)``
is fitted on generated data: ``--n-train`` rows (600) of X ~ N(0, I_d), target
``sin(x0) + x1 x2 + 0.5 x3² + x·β/√d + 0.1 noise``. Its ``epsilon`` is bisected until the model
has ``--target-sv`` (500) support vectors, within 1 %; the actual count is printed and stored.
``--n-explain`` (100) further rows of the same distribution are explained.

1. **shapiq** (the "pkex" game, v(S) = b + Σ_i α_i Π_{j∈S} k_j(x_j, X_ij), absent factor = 1):

   * ours: ``ProductKernelShapExplainer(model).fit()`` with ``algorithm="auto"`` (prefix_suffix on
     the CPU) and ``algorithm="quadrature"``, on all explained rows: median wall time over
     ``--repeats`` runs (numba kernels warmed up first). Ours runs on all numba threads (2 here);
     ``algorithm="auto"`` is also timed with ``numba.set_num_threads(1)``, for a per-core ratio.
   * shapiq: ``shapiq.ProductKernelExplainer(model).explain_X(rows)`` (serial, one row at a time,
     which is how it works). Its time per row is estimated on 2 rows first; it then runs on as
     many rows as fit in ``--shapiq-budget`` seconds (at least 5, at most all), once. When that is
     fewer than all rows, the time per row is extrapolated from that subset (``rows_timed`` and
     ``extrapolated`` in the JSON).
   * the maximum absolute difference of shapiq's first-order values (``get_n_order_values(1)``)
     from ours (auto and quadrature), on the rows shapiq explained, and of their base values
     (shapiq's ``baseline_value`` = Σα + b, ours ``expected_value_``);
   * the efficiency error max |Σ_j φ_j + base − f(x)| of both, against ``model.predict``;
   * at d <= 16 also ``algorithm="brute_force"`` (all 2^d coalitions), an independent oracle.

2. **What exactness buys** (d in ``--peer-dims``, default 8, 50, 100), on the interventional game
   v(S) = mean over background rows z of f(x_S, z_rest) of the same SVR, with the same
   ``--n-bg`` (100) background rows for everyone (``background_size=n_bg, random_state=0``):

   * ground truth: ours, ``value_function="interventional"`` (exact), median of ``--repeats``;
   * ``shap.KernelExplainer(model.predict, background).shap_values(rows)`` at its default
     ``nsamples="auto"`` (2d + 2048), with its default ``l1_reg="num_features(10)"`` (shap 0.51:
     at most 10 features get a nonzero value, whatever d) and with ``l1_reg=False``;
   * ``PermutationShapExplainer(model, background_size=n_bg, random_state=0)`` at its default
     budget (``max_evals="auto"``), and at ``--perm-factor`` (4) times that budget (skipped where
     the default budget already enumerates all coalitions);

   on the first ``--peer-rows`` (10) explained rows, one run each. Reported: wall time per row,
   RMSE, RMSE relative to the RMS of the exact values, max absolute error, efficiency error.

The GPU comparison is benchmarks/bench_gpu.py.

Timings are wall (``time.perf_counter``) and CPU (``time.process_time``, all threads) seconds.
The JSON is rewritten after every case, so a partial run leaves partial results.

Targets
-------
* shapiq / ours (auto) time per row >= 20 at d = 200 on this 2-core CPU;
* max |ours − shapiq| <= 1e-10 wherever shapiq is efficient (efficiency error <= 1e-10);

Rerun
-----
::

    python benchmarks/bench_product_kernel.py                  # full run (about 10-15 min on 2 cores)
    python benchmarks/bench_product_kernel.py --quick          # smoke run (< 60 s)

Results go to ``benchmarks/results/bench_product_kernel.json`` (``_quick`` with ``--quick``)
unless ``--output`` says otherwise.
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
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numba
import numpy as np
import shap
import sklearn
from shapiq.explainer.product_kernel import ProductKernelExplainer  # not exported at the top in 1.4.1
from sklearn.svm import SVR

try:
    from sklearn_shapq import PermutationShapExplainer, ProductKernelShapExplainer
except ImportError:  # a checkout that is not installed: python benchmarks/bench_product_kernel.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sklearn_shapq import PermutationShapExplainer, ProductKernelShapExplainer

RESULTS = Path(__file__).resolve().parent / "results"
AGREEMENT_TARGET = 1e-10
SPEED_TARGET = 20.0  # shapiq / ours at d = 200
BRUTE_FORCE_MAX_D = 16


def parse_args() -> argparse.Namespace:
    """Command-line options; ``--quick`` shrinks every size for a smoke run."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dims", type=int, nargs="+", default=[8, 50, 100, 200], help="d of the shapiq comparison")
    p.add_argument("--peer-dims", type=int, nargs="+", default=[8, 50, 100], help="d of the interventional peers")
    p.add_argument("--n-train", type=int, default=600, help="SVR training rows")
    p.add_argument("--target-sv", type=int, default=500, help="support vectors the SVR is tuned to")
    p.add_argument("--n-explain", type=int, default=100, help="explained rows")
    p.add_argument("--repeats", type=int, default=5, help="timing repeats of ours (median)")
    p.add_argument("--shapiq-budget", type=float, default=120.0, help="seconds of shapiq per d (>= 5 rows)")
    p.add_argument("--peer-rows", type=int, default=10, help="explained rows for KernelExplainer / permutation")
    p.add_argument("--n-bg", type=int, default=100, help="background rows of the interventional game")
    p.add_argument("--perm-factor", type=int, default=4, help="larger permutation budget = factor x default (0: off)")
    p.add_argument("--sections", nargs="+", choices=["shapiq", "peers"], default=None)
    p.add_argument("--quick", action="store_true", help="smoke run: d in (8, 20), small sizes, < 60 s")
    p.add_argument("--output", default=None, help="JSON path (default benchmarks/results/bench_product_kernel*.json)")
    args = p.parse_args()
    if args.sections is None:
        args.sections = ["shapiq", "peers"]
    if args.quick:
        args.dims, args.peer_dims = [8, 20], [8, 20]
        args.n_train, args.target_sv, args.n_explain, args.repeats = 240, 200, 10, 2
        args.shapiq_budget, args.peer_rows, args.perm_factor = 5.0, 3, 0
    if args.output is None:
        suffix = "_quick" if args.quick else ""
        args.output = str(RESULTS / f"bench_product_kernel{suffix}.json")
    return args


def env_info() -> dict:
    """Versions, threads and load of this machine."""
    try:
        threading_layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        threading_layer = None
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sklearn": sklearn.__version__,
        "shap": shap.__version__,
        "shapiq": version("shapiq"),
        "numba": numba.__version__,
        "numba_num_threads": numba.config.NUMBA_NUM_THREADS,
        "numba_threading_layer": threading_layer,
        "platform": platform.platform(),
        "processor": platform.processor(),
        "nproc": os.cpu_count(),
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``fn()``, its wall seconds and its CPU seconds (all threads)."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def repeat_timed(fn: Callable[[], Any], repeats: int) -> tuple[Any, dict]:
    """Run ``fn`` ``repeats`` times; the first output and the median wall and CPU seconds."""
    first, walls, cpus = None, [], []
    for _ in range(repeats):
        out, wall, cpu = timed(fn)
        first = out if first is None else first
        walls.append(wall)
        cpus.append(cpu)
    return first, {
        "wall_s_median": statistics.median(walls),
        "cpu_s_median": statistics.median(cpus),
        "wall_s_all": walls,
    }


def efficiency_error(values: np.ndarray, base: Any, fx: np.ndarray) -> float:
    """max |Σ_j φ_j + base − f(x)| over rows."""
    return float(np.abs(values.sum(axis=1) + base - fx).max())


def error_stats(values: np.ndarray, exact: np.ndarray) -> dict:
    """RMSE, RMSE / RMS(exact) and max abs error of ``values`` against ``exact``."""
    rmse = float(np.sqrt(np.mean((values - exact) ** 2)))
    return {
        "rmse": rmse,
        "rel_rmse": rmse / float(np.sqrt(np.mean(exact**2))),
        "max_abs_err": float(np.abs(values - exact).max()),
    }


def write_json(res: dict, path: str) -> None:
    """Write the results so far."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")


# --------------------------------------------------------------------------------------------------
# data and model


def make_problem(d: int, args: argparse.Namespace) -> dict:
    """Generated data and an RBF SVR whose ``epsilon`` is bisected to ``args.target_sv`` support vectors."""
    rng = np.random.default_rng(d)
    X = rng.normal(size=(args.n_train + args.n_explain, d))
    beta = rng.normal(size=d)
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] ** 2 + X @ beta / np.sqrt(d) + 0.1 * rng.normal(size=len(X))
    X_train, y_train, X_explain = X[: args.n_train], y[: args.n_train], X[args.n_train :]
    low, high = 0.0, float(np.abs(y_train - np.median(y_train)).max())
    start = time.perf_counter()
    for _ in range(30):  # n_sv falls as epsilon grows
        epsilon = 0.5 * (low + high)
        model = SVR(kernel="rbf", gamma="scale", C=10.0, epsilon=epsilon).fit(X_train, y_train)
        n_sv = model.support_vectors_.shape[0]
        if abs(n_sv - args.target_sv) <= 0.01 * args.target_sv:
            break
        low, high = (epsilon, high) if n_sv > args.target_sv else (low, epsilon)
    return {
        "model": model,
        "X_train": X_train,
        "X_explain": X_explain,
        "fx": model.predict(X_explain),
        "info": {
            "d": d,
            "n_train": args.n_train,
            "n_sv": int(n_sv),
            "epsilon": epsilon,
            "gamma": float(model._gamma),
            "tuning_s": time.perf_counter() - start,
        },
    }


# --------------------------------------------------------------------------------------------------
# 1. shapiq


def run_shapiq(model: SVR, X: np.ndarray, budget_s: float) -> dict:
    """shapiq on as many rows of ``X`` as fit in ``budget_s`` seconds (at least 5, at most all)."""
    explainer = ProductKernelExplainer(model)
    _, probe_wall, _ = timed(lambda: explainer.explain_X(X[:2]))
    n_rows = int(min(len(X), max(5, budget_s // (probe_wall / 2))))
    ivs, wall, cpu = timed(lambda: explainer.explain_X(X[:n_rows]))
    return {
        "values": np.array([iv.get_n_order_values(1) for iv in ivs]),
        "base": np.array([iv.baseline_value for iv in ivs]),
        "rows_timed": n_rows,
        "extrapolated": n_rows < len(X),
        "wall_s": wall,
        "cpu_s": cpu,
        "wall_s_per_row": wall / n_rows,
        "cpu_s_per_row": cpu / n_rows,
        "probe_wall_s_per_row": probe_wall / 2,
    }


def shapiq_case(problem: dict, args: argparse.Namespace) -> dict:
    """Ours (auto, quadrature, one thread, brute force) against shapiq on the pkex game."""
    model, X, fx = problem["model"], problem["X_explain"], problem["fx"]
    d, n = X.shape[1], len(X)
    out: dict = {"n_explain": n}
    ours = {}
    for label, method, threads in (
        ("auto", "auto", None),
        ("quadrature", "quadrature", None),
        ("auto_1thread", "auto", 1),
    ):
        explainer = ProductKernelShapExplainer(model, algorithm=method, progress=False).fit()
        explainer.explain(X[:2])  # warm-up (numba cache load, first-call dispatch)
        saved = numba.get_num_threads()
        if threads is not None:
            numba.set_num_threads(threads)
        try:
            explanation, timing = repeat_timed(lambda explainer=explainer: explainer.explain(X), args.repeats)
        finally:
            numba.set_num_threads(saved)
        ours[label] = {
            "values": explanation.values,
            "base": explainer.expected_value_,
            "algorithm_": explainer.algorithm_,
            "numba_threads": threads or saved,
            "wall_s_per_row": timing["wall_s_median"] / n,
            "cpu_s_per_row": timing["cpu_s_median"] / n,
            **timing,
            "efficiency_err": efficiency_error(explanation.values, explainer.expected_value_, fx),
        }
    print(
        f"  ours: auto ({ours['auto']['algorithm_']}) {ours['auto']['wall_s_per_row'] * 1e3:.2f} ms/row, quadrature "
        f"{ours['quadrature']['wall_s_per_row'] * 1e3:.2f} ms/row, auto 1 thread "
        f"{ours['auto_1thread']['wall_s_per_row'] * 1e3:.2f} ms/row",
        flush=True,
    )
    sq = run_shapiq(model, X, args.shapiq_budget)
    rows = sq["rows_timed"]
    print(
        f"  shapiq: {sq['wall_s_per_row'] * 1e3:.1f} ms/row on {rows} rows"
        + (" (extrapolated)" if sq["extrapolated"] else ""),
        flush=True,
    )
    sq_eff = efficiency_error(sq["values"], sq["base"], fx[:rows])
    out["shapiq"] = {key: value for key, value in sq.items() if key not in ("values", "base")}
    out["shapiq"]["efficiency_err"] = sq_eff
    out["shapiq"]["base_value"] = float(sq["base"][0])
    out["shapiq"]["efficient"] = sq_eff <= AGREEMENT_TARGET
    for res in ours.values():
        res["max_abs_diff_vs_shapiq"] = float(np.abs(res["values"][:rows] - sq["values"]).max())
        res["base_diff_vs_shapiq"] = float(np.abs(res["base"] - sq["base"]).max())
        res["speedup_shapiq_over_ours_wall"] = sq["wall_s_per_row"] / res["wall_s_per_row"]
        res["speedup_shapiq_over_ours_cpu"] = sq["cpu_s_per_row"] / res["cpu_s_per_row"]
    ours["quadrature"]["max_abs_diff_vs_auto"] = float(
        np.abs(ours["quadrature"]["values"] - ours["auto"]["values"]).max()
    )
    if d <= BRUTE_FORCE_MAX_D:
        brute = ProductKernelShapExplainer(model, algorithm="brute_force", progress=False).fit()
        values, wall, _ = timed(lambda: brute.shap_values(X))
        out["brute_force"] = {
            "wall_s_per_row": wall / n,
            "max_abs_diff_vs_auto": float(np.abs(values - ours["auto"]["values"]).max()),
            "max_abs_diff_vs_shapiq": float(np.abs(values[:rows] - sq["values"]).max()),
        }
    for res in ours.values():
        del res["values"]
    out["ours"] = ours
    out["agreement_ok"] = (not out["shapiq"]["efficient"]) or ours["auto"]["max_abs_diff_vs_shapiq"] <= AGREEMENT_TARGET
    return out


# --------------------------------------------------------------------------------------------------
# 2. what exactness buys: the interventional game


def peers_case(problem: dict, args: argparse.Namespace) -> dict:
    """Exact interventional values of ours against KernelExplainer and PermutationShapExplainer."""
    model, X_train = problem["model"], problem["X_train"]
    X, fx = problem["X_explain"][: args.peer_rows], problem["fx"][: args.peer_rows]
    n = len(X)
    exact_explainer = ProductKernelShapExplainer(
        model, value_function="interventional", background_size=args.n_bg, random_state=0, progress=False
    ).fit(X_train)
    background = exact_explainer.references_
    exact_explainer.explain(X[:1])  # warm-up
    explanation, timing = repeat_timed(lambda: exact_explainer.explain(X), args.repeats)
    exact = explanation.values
    out: dict = {
        "n_explain": n,
        "n_bg": len(background),
        "exact": {
            "wall_s_per_row": timing["wall_s_median"] / n,
            "cpu_s_per_row": timing["cpu_s_median"] / n,
            **timing,
            "algorithm_": exact_explainer.algorithm_,
            "rms_values": float(np.sqrt(np.mean(exact**2))),
            "efficiency_err": efficiency_error(exact, exact_explainer.expected_value_, fx),
        },
    }
    print(f"  exact interventional: {out['exact']['wall_s_per_row'] * 1e3:.1f} ms/row", flush=True)

    kernel = shap.KernelExplainer(model.predict, background)
    out["kernel_explainer"] = []
    for l1_reg in ("num_features(10)", False):  # shap's default, and the plain least-squares fit
        values, wall, cpu = timed(lambda l1_reg=l1_reg: np.asarray(kernel.shap_values(X, l1_reg=l1_reg, silent=True)))
        out["kernel_explainer"].append(
            {
                "nsamples": "auto (2d + 2048)",
                "l1_reg": l1_reg,
                "wall_s_per_row": wall / n,
                "cpu_s_per_row": cpu / n,
                **error_stats(values, exact),
                "efficiency_err": efficiency_error(values, kernel.expected_value, fx),
                "base_diff_vs_exact": float(abs(kernel.expected_value - exact_explainer.expected_value_)),
            }
        )
        print(
            f"  shap.KernelExplainer(l1_reg={l1_reg!r}): {wall / n:.2f} s/row, "
            f"rel RMSE {out['kernel_explainer'][-1]['rel_rmse']:.2e}",
            flush=True,
        )

    permutation = PermutationShapExplainer(model, background_size=args.n_bg, random_state=0, progress=False)
    permutation.fit(X_train)
    if not np.array_equal(permutation.background_, background):
        raise RuntimeError("the permutation explainer's background differs from the exact explainer's")
    permutation.explain(X[:1])  # warm-up

    def run_permutation(budget: Any) -> dict:
        permutation.set_params(max_evals=budget).fit(X_train)  # the plan is fitted; same background (seed 0)
        result, wall, cpu = timed(lambda: permutation.explain(X))
        n_evals = int(np.max(result.diagnostics["n_evals"]))
        print(
            f"  PermutationShapExplainer({permutation.algorithm_}, {n_evals} evals): {wall / n:.2f} s/row, "
            f"rel RMSE {error_stats(result.values, exact)['rel_rmse']:.2e}",
            flush=True,
        )
        return {
            "max_evals": budget,
            "n_evals": n_evals,
            "algorithm_": permutation.algorithm_,
            "wall_s_per_row": wall / n,
            "cpu_s_per_row": cpu / n,
            **error_stats(result.values, exact),
            "efficiency_err": efficiency_error(result.values, permutation.expected_value_, fx),
        }

    runs = [run_permutation("auto")]
    if args.perm_factor > 1 and runs[0]["algorithm_"] != "exact":
        runs.append(run_permutation(args.perm_factor * runs[0]["n_evals"]))
    out["permutation"] = runs
    for peer in [*out["kernel_explainer"], *runs]:
        peer["time_ratio_over_exact"] = peer["wall_s_per_row"] / out["exact"]["wall_s_per_row"]
    return out


# --------------------------------------------------------------------------------------------------


def print_tables(res: dict) -> None:
    """Compact tables of the two sections."""
    cases = res["cases"]
    if any("shapiq" in c for c in cases):
        header = (
            f"{'d':>4} {'n_sv':>5} | {'ours auto':>10} {'quadr.':>10} {'1 thread':>10} | {'shapiq':>10} {'rows':>4} | "
            f"{'ratio':>7} {'ratio 1t':>8} | {'max|ours-shapiq|':>16} {'max|quad-auto|':>14} | "
            f"{'eff. ours':>9} {'eff. shapiq':>11}"
        )
        print("\npkex game: ours vs shapiq.ProductKernelExplainer (time per explained row)")
        print(header)
        print("-" * len(header))
        for c in cases:
            if "shapiq" not in c:
                continue
            o, s = c["shapiq"]["ours"], c["shapiq"]["shapiq"]
            print(
                f"{c['problem']['d']:>4} {c['problem']['n_sv']:>5} | {o['auto']['wall_s_per_row'] * 1e3:>8.2f}ms "
                f"{o['quadrature']['wall_s_per_row'] * 1e3:>8.2f}ms "
                f"{o['auto_1thread']['wall_s_per_row'] * 1e3:>8.2f}ms | "
                f"{s['wall_s_per_row'] * 1e3:>8.1f}ms {s['rows_timed']:>4} | "
                f"{o['auto']['speedup_shapiq_over_ours_wall']:>6.1f}x "
                f"{o['auto_1thread']['speedup_shapiq_over_ours_wall']:>7.1f}x | "
                f"{o['auto']['max_abs_diff_vs_shapiq']:>16.1e} {o['quadrature']['max_abs_diff_vs_auto']:>14.1e} | "
                f"{o['auto']['efficiency_err']:>9.1e} {s['efficiency_err']:>11.1e}"
            )
        print("(ratio = shapiq / ours wall time per row; 1t = ours on one numba thread; eff. = efficiency error)")
    if any("peers" in c for c in cases):
        header = (
            f"{'d':>4} {'explainer':<50} | {'s/row':>8} {'x exact':>8} | {'rel RMSE':>9} {'max err':>9} {'eff.':>8}"
        )
        print("\ninterventional game: approximate peers against our exact values")
        print(header)
        print("-" * len(header))
        for c in cases:
            if "peers" not in c:
                continue
            p, d = c["peers"], c["problem"]["d"]
            e = p["exact"]
            print(
                f"{d:>4} {'ours exact (' + e['algorithm_'] + ')':<50} | {e['wall_s_per_row']:>8.4f} {1.0:>8.1f} | "
                f"{0.0:>9.1e} {0.0:>9.1e} {e['efficiency_err']:>8.1e}"
            )
            peers = [(f"shap.KernelExplainer (l1_reg={r['l1_reg']!r})", r) for r in p["kernel_explainer"]]
            peers += [(f"Permutation ({r['algorithm_']}, {r['n_evals']} evals)", r) for r in p["permutation"]]
            for name, r in peers:
                print(
                    f"{d:>4} {name:<50} | {r['wall_s_per_row']:>8.4f} {r['time_ratio_over_exact']:>8.1f} | "
                    f"{r['rel_rmse']:>9.1e} {r['max_abs_err']:>9.1e} {r['efficiency_err']:>8.1e}"
                )
        print("(x exact = time per row / ours exact; rel RMSE = RMSE / RMS of the exact values)")


def main() -> int:
    """Run the selected sections and write the JSON after each case."""
    args = parse_args()
    t_start = time.perf_counter()
    warnings.filterwarnings("ignore", message=".*background data samples.*")
    res: dict = {
        "benchmark": "bench_product_kernel",
        "env_start": env_info(),
        "setup": {
            key: getattr(args, key)
            for key in (
                "dims",
                "peer_dims",
                "n_train",
                "target_sv",
                "n_explain",
                "repeats",
                "shapiq_budget",
                "peer_rows",
                "n_bg",
                "perm_factor",
                "sections",
                "quick",
            )
        },
        "targets": {
            "speedup_shapiq_over_ours_at_d200": SPEED_TARGET,
            "max_abs_diff_vs_shapiq": AGREEMENT_TARGET,
        },
        "cases": [],
    }

    # warm-up of every numba kernel used below (cache load or compilation), excluded from timings
    rng = np.random.default_rng(0)
    X_small = rng.normal(size=(20, 5))
    warm_start = time.perf_counter()
    for value_function in ("pkex", "interventional"):
        for method in ("auto", "quadrature", "brute_force"):
            explainer = ProductKernelShapExplainer.from_dual(
                rng.normal(size=20), X_small, value_function=value_function, algorithm=method, progress=False
            )
            explainer.fit(X_small).explain(X_small[:2])
    res["warmup_s"] = time.perf_counter() - warm_start
    print(f"warm-up: {res['warmup_s']:.2f} s (excluded from timings)")

    dims = sorted(set(args.dims) | set(args.peer_dims)) if "peers" in args.sections else sorted(args.dims)
    for d in dims if {"shapiq", "peers"} & set(args.sections) else []:
        problem = make_problem(d, args)
        case = {"problem": problem["info"]}
        res["cases"].append(case)
        info = problem["info"]
        print(f"\n--- d={d}: SVR with {info['n_sv']} support vectors (epsilon={info['epsilon']:.4f})")
        if "shapiq" in args.sections and d in args.dims:
            case["shapiq"] = shapiq_case(problem, args)
            write_json(res, args.output)
        if "peers" in args.sections and d in args.peer_dims:
            case["peers"] = peers_case(problem, args)
            write_json(res, args.output)

    shapiq_cases = [c for c in res["cases"] if "shapiq" in c]
    met: dict = {}
    if shapiq_cases:
        at_200 = [c for c in shapiq_cases if c["problem"]["d"] == 200]
        if at_200:
            met["speed_at_d200"] = at_200[0]["shapiq"]["ours"]["auto"]["speedup_shapiq_over_ours_wall"] >= SPEED_TARGET
        met["agreement"] = all(c["shapiq"]["agreement_ok"] for c in shapiq_cases)
    res["targets_met"] = met
    res["env_end"] = {"loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}
    res["env_start"]["numba_threading_layer"] = env_info()["numba_threading_layer"]
    res["total_wall_s"] = time.perf_counter() - t_start
    write_json(res, args.output)

    print_tables(res)
    print(f"targets met: {json.dumps(met)}")
    print(f"total wall time {res['total_wall_s']:.0f} s")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
