"""Benchmark: ``HSICAttribution`` time and peak memory, against the paper's O(n² d³) algorithm.

What is measured
----------------
**Timing grid.** Data: X ~ N(0, I_d), y = x0·x1 + sin(x2) + 0.1 ε (a regression target, so an rbf
target kernel), for n in ``--n`` (default 1000, 2000, 5000) and d in ``--d`` (default 20, 50, 100).
``HSICAttribution(progress=False)`` runs with its defaults (rbf factors, per-feature median bandwidths,
``statistic="biased"``, ``algorithm="auto"``, ``device="cpu"``, scikit-learn's default ``working_memory``
of 1024 MiB for the blocks of pair weights). Every configuration runs in
a fresh process (multiprocessing, spawn), which first makes a warm-up call on 64 rows (numba loads
or compiles its kernels; reported separately), then times ``fit`` ``--repeats`` times (median), then
fits once more under ``tracemalloc`` and ``cProfile``. For n >= 5000 only the traced fit runs, and
it is the timing (the tracing overhead on the other sizes is in the JSON). Recorded per configuration:

* wall time (``time.perf_counter``) and CPU time of the process (``time.process_time``, all threads);
* peak memory, two ways: the peak of the numpy allocations traced by ``tracemalloc`` during one fit
  (numba's own allocations are not traced), and the process's maximum resident set size
  (``resource.getrusage(...).ru_maxrss``) after all fits, absolute and as a delta over the
  resident size just before them (data and warm-up included in the baseline);
* where the traced fit's time goes (cProfile, cumulative): the attributions (``statistic_shapley``)
  and the bandwidths.

**The paper's algorithm** (:func:`paper_hsic_shapley`, written here for the benchmark and the tests):
Prop. 9 of Mohammadi et al. (2025) as the paper computes it. It builds the d per-feature Gram
matrices K_j (d × n × n floats) and the centred target Gram matrix HLH/(n−1)²; then, for every
feature j, the elementwise elementary symmetric polynomials E_q of the other d − 1 Gram matrices by
the stable recurrence e_q ← e_q + z·e_{q−1} (the paper's Algorithm 2; the spec's Newton-identity
variant is unstable), ψ_j = Σ_q μ(q) E_q and φ_j = Σ_ab W_ab (K_j − 1)_ab ψ_j,ab. That is O(d²)
work per pair and feature, O(n² d³) in all, over all n² ordered pairs as in the paper's trace
formula. The loop over q is vectorised over pairs (chunks of 8192 pairs, the fastest chunk size
measured) and over q; it is single-threaded numpy, whereas ours runs numba kernels on every core,
so CPU-time ratios are reported next to wall-time ratios. It gets the bandwidths ours fitted
(γ_j = 1/(2σ_j²), γ_y = 1/(2σ_y²)) and its attributions are compared with ours wherever it runs in
full. With ``--paper-max-rows R`` it processes only the pairs (a, b) with a < R (R·n pairs, and
R × n × d Gram matrices) and its time is extrapolated by the pair count, n/R, which is exact for
an algorithm whose work is a fixed amount per pair; the JSON then says "extrapolated".

**Agreement.** Before the grid, ours and the paper's algorithm are compared on small problems with
both target kernels (rbf and delta) and both X bandwidth rules.

**Bandwidth.** The paper's shared median bandwidth (one σ, the median Euclidean distance between
rows) against the per-feature median, on planted problems with n = 500, d = 50, over ``--seeds``
seeds: (A) y = x0·x1 + sin(x2) + 0.1 ε with X ~ N(0, I) (a pure interaction x0·x1 that no single
feature explains), and (B) y = sin(x0) + x1² + 0.1 ε with 48 equicorrelated (ρ = 0.5) nuisance
features independent of x0 and x1. Reported: the rank of every relevant feature per seed and how
often all relevant features are in the top 5 and in the top 10 (the paper's top 20%).

The GPU comparison is benchmarks/bench_gpu.py.

Targets
-------
* n = 5000, d = 100: under 60 s and under 2 GiB peak (maximum resident set size of the process);
* n = 2000, d = 50: at least 20 times faster (wall) than the paper's algorithm.

Rerun
-----
::

    python benchmarks/bench_hsic.py                 # full run (about 10 minutes on 2 shared cores)
    python benchmarks/bench_hsic.py --quick         # smoke run (under a minute), bench_hsic_quick.json

Options: ``--n``, ``--d`` (timing grid), ``--repeats``, ``--paper-sizes`` (NxD items for the paper's
algorithm), ``--paper-max-rows``, ``--seeds`` (bandwidth section), ``--quick`` and ``--output``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import resource
import statistics
import sys
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numba
import numpy as np
import sklearn

try:
    from sklearn_shapq import HSICAttribution
except ImportError:  # a checkout that is not installed: python benchmarks/bench_hsic.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sklearn_shapq import HSICAttribution

RESULTS = Path(__file__).resolve().parent / "results"
PAPER_CHUNK = 8192  # pairs per vectorised step of the paper's algorithm (fastest measured: 4096-8192)
MIB = 2.0**20
BREAKDOWN = {  # functions of one fit timed by cProfile (cumulative seconds)
    "statistic_shapley": "the attributions (blocked pair weights and the product-kernel kernel)",
    "resolve_bandwidths": "the median bandwidths",
}


# --------------------------------------------------------------------------------------------------
# the paper's algorithm


def shapley_weights(d: int) -> np.ndarray:
    """μ(q) = q!(d−q−1)!/d!, q = 0 … d−1, by the recurrence μ(q+1) = μ(q)(q+1)/(d−1−q)."""
    mu = np.empty(d)
    mu[0] = 1.0 / d
    for q in range(d - 1):
        mu[q + 1] = mu[q] * (q + 1) / (d - 1 - q)
    return mu


def paper_hsic_shapley(
    X: np.ndarray,
    y: np.ndarray,
    gammas: np.ndarray,
    gamma_y: float | None,
    rows: int | None = None,
    chunk: int = PAPER_CHUNK,
) -> np.ndarray:
    """Shapley values of the biased HSIC by the paper's O(n² d³) algorithm (Prop. 9, Algorithm 2).

    φ_j = Σ_ab W_ab (K_j − 1)_ab Σ_q μ(q) E_q(K_{−j})_ab with W = HLH/(n−1)², the rbf Gram matrices
    K_j = exp(−γ_j (x_aj − x_bj)²) of every feature held at once (d × n × n floats), and for each j
    the elementwise ESPs E_q of the other d − 1 Gram matrices by e_q ← e_q + z·e_{q−1}.

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,)
    gammas : array of shape (d,)
        Scales of the rbf factors, γ_j = 1/(2σ_j²).
    gamma_y : float or None
        Scale of the rbf target kernel exp(−γ_y (y_a − y_b)²); None for the delta kernel 1[y_a = y_b].
    rows : int or None, default=None
        Only the pairs (a, b) with a < ``rows``: a partial sum for timing on fewer pairs.
    chunk : int, default=PAPER_CHUNK
        Pairs per vectorised step.

    Returns
    -------
    ndarray of shape (d,)
        The attributions (partial sums when ``rows`` < n).
    """
    n, d = X.shape
    r = n if rows is None else min(rows, n)
    if gamma_y is None:
        L = (y[:, None] == y[None, :]).astype(np.float64)
    else:
        L = np.exp(-gamma_y * (y[:, None] - y[None, :]) ** 2)
    means = L.mean(axis=1)
    weights = ((L[:r] - means[:r, None] - means[None, :] + means.mean()) / (n - 1) ** 2).reshape(-1)
    del L
    grams = np.empty((d, r, n))
    for j in range(d):
        grams[j] = np.exp(-gammas[j] * (X[:r, j, None] - X[None, :, j]) ** 2)
    grams = grams.reshape(d, r * n)
    mu = shapley_weights(d)
    phi = np.zeros(d)
    for start in range(0, r * n, chunk):
        z = grams[:, start : start + chunk]
        w = weights[start : start + chunk]
        esp = np.empty((d, z.shape[1]))  # e_0 … e_{d−1} of the d − 1 other factors
        for j in range(d):
            esp[0] = 1.0
            esp[1:] = 0.0
            size = 0
            for k in range(d):
                if k != j:
                    esp[1 : size + 2] += z[k] * esp[: size + 1]  # right side is evaluated first
                    size += 1
            phi[j] += w @ ((z[j] - 1.0) * (mu @ esp))
    return phi


# --------------------------------------------------------------------------------------------------
# data, measurement helpers


def planted_interaction(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """X ~ N(0, I_d), y = x0·x1 + sin(x2) + 0.1 ε."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.1 * rng.normal(size=n)


def planted_correlated(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """y = sin(x0) + x1² + 0.1 ε; x2 … x_{d−1} equicorrelated (ρ = 0.5), independent of x0 and x1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 2:] = np.sqrt(0.5) * X[:, 2:] + np.sqrt(0.5) * rng.normal(size=(n, 1))
    return X, np.sin(X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=n)


PROBLEMS = {
    "interaction": (planted_interaction, [0, 1, 2], "X ~ N(0, I), y = x0*x1 + sin(x2) + 0.1 eps"),
    "correlated_nuisance": (
        planted_correlated,
        [0, 1],
        "y = sin(x0) + x1^2 + 0.1 eps; x2..x49 equicorrelated (rho = 0.5), independent of x0, x1",
    ),
}


def rss_now_mib() -> float:
    """Resident set size of this process now (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def max_rss_mib() -> float:
    """Maximum resident set size of this process so far (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn: Any) -> tuple[Any, float, float]:
    """Return ``fn()``, its wall time and its CPU time (all threads of the process)."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def in_fresh_process(fn: Any, *args: Any) -> Any:
    """Run ``fn(*args)`` in a new spawned process, so that its peak RSS is its own."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def env_info() -> dict:
    try:
        threading_layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run in this process
        threading_layer = None
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sklearn": sklearn.__version__,
        "numba": numba.__version__,
        "numba_num_threads": numba.config.NUMBA_NUM_THREADS,
        "numba_threading_layer": threading_layer,
        "platform": platform.platform(),
        "processor": platform.processor(),
        "nproc": os.cpu_count(),
        "loadavg": list(os.getloadavg()),
    }


def write(res: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1) + "\n")


# --------------------------------------------------------------------------------------------------
# one configuration, in a fresh process


def ours_case(n: int, d: int, seed: int, repeats: int, trace: bool, device: str = "cpu") -> dict:
    """Warm up, time ``repeats`` fits, then (``trace``) fit once under tracemalloc; all in this process.

    With ``repeats=0`` the traced fit is the timed one (tracemalloc sees only numpy's few large
    allocations per block, so its overhead is small: compare ``traced_fit_wall_s`` with
    ``wall_s_median`` where both exist).
    """
    X, y = planted_interaction(n, d, seed)
    _, warm_wall, _ = timed(lambda: HSICAttribution(device=device, progress=False).fit(X[:64], y[:64]))
    rss_before, max_before = rss_now_mib(), max_rss_mib()
    walls, cpus = [], []
    for _ in range(repeats):
        sel, wall, cpu = timed(lambda: HSICAttribution(device=device, progress=False).fit(X, y))
        walls.append(wall)
        cpus.append(cpu)
    out: dict = {"n": n, "d": d, "device": device, "warmup_wall_s": warm_wall, "timed_under_tracemalloc": not walls}
    if trace:
        profile = cProfile.Profile()
        tracemalloc.start()
        profile.enable()
        sel, wall, cpu = timed(lambda: HSICAttribution(device=device, progress=False).fit(X, y))
        profile.disable()
        out["tracemalloc_peak_mib"] = tracemalloc.get_traced_memory()[1] / MIB
        out["traced_fit_wall_s"] = wall
        tracemalloc.stop()
        stats = pstats.Stats(profile).stats  # (file, line, name) -> (..., cumulative time, callers)
        out["traced_fit_breakdown_s"] = {
            name: sum(v[3] for k, v in stats.items() if k[2] == name) for name in BREAKDOWN
        }
        if not walls:
            walls, cpus = [wall], [cpu]
    max_after = max_rss_mib()
    return {
        **out,
        "wall_s_all": walls,
        "cpu_s_all": cpus,
        "wall_s_median": statistics.median(walls),
        "cpu_s_median": statistics.median(cpus),
        "rss_before_mib": rss_before,
        "max_rss_before_mib": max_before,
        "peak_rss_mib": max_after,
        "rss_delta_mib": max_after - rss_before,
        "peak_reached_during_fit": max_after > max_before,
        "hsic": float(sel.hsic_),
        "attributions": sel.attributions_.tolist(),
        "bandwidths": sel.bandwidths_.tolist(),
        "bandwidth_y": float(sel.bandwidth_y_),
        "numba_threading_layer": env_info()["numba_threading_layer"],
    }


def paper_case(n: int, d: int, seed: int, gammas: list[float], gamma_y: float, rows: int | None) -> dict:
    """Time the paper's algorithm once (on the pairs a < ``rows``), with its peak RSS."""
    X, y = planted_interaction(n, d, seed)
    rss_before = rss_now_mib()
    phi, wall, cpu = timed(lambda: paper_hsic_shapley(X, y, np.asarray(gammas), gamma_y, rows))
    r = n if rows is None else min(rows, n)
    return {
        "n": n,
        "d": d,
        "rows_run": r,
        "pairs_run": r * n,
        "extrapolated": r < n,
        "wall_s_run": wall,
        "cpu_s_run": cpu,
        "wall_s": wall * n / r,
        "cpu_s": cpu * n / r,
        "rss_before_mib": rss_before,
        "peak_rss_mib_run": max_rss_mib(),
        "rss_delta_mib_run": max_rss_mib() - rss_before,
        "gram_matrices_mib_full": 8.0 * d * n * n / MIB,
        "attributions": phi.tolist() if r == n else None,
    }


# --------------------------------------------------------------------------------------------------
# sections


def agreement(quick: bool) -> list[dict]:
    """Ours against the paper's algorithm on small problems, both target kernels and bandwidth rules."""
    n, d = (120, 8) if quick else (300, 20)
    X, y = planted_interaction(n, d, 0)
    y_class = (y > np.median(y)).astype(int)
    rows = []
    for target, labels in (("rbf", y), ("delta", y_class)):
        for bandwidth in ("median_per_feature", "median"):
            sel = HSICAttribution(bandwidth_x=bandwidth, progress=False).fit(X, labels)
            gamma_y = None if sel.bandwidth_y_ is None else 1.0 / (2.0 * sel.bandwidth_y_**2)
            paper = paper_hsic_shapley(X, labels.astype(np.float64), 1.0 / (2.0 * sel.bandwidths_**2), gamma_y)
            scale = np.abs(sel.attributions_).max()
            rows.append(
                {
                    "n": n,
                    "d": d,
                    "target_kernel": target,
                    "bandwidth_x": bandwidth,
                    "max_abs_diff": float(np.abs(paper - sel.attributions_).max()),
                    "max_rel_diff": float(np.abs(paper - sel.attributions_).max() / scale),
                    "paper_sum_minus_hsic": float(paper.sum() - sel.hsic_),
                }
            )
            print(
                f"agreement n={n} d={d} target={target:5s} bandwidth_x={bandwidth:18s}: "
                f"max |ours - paper| / max |phi| = {rows[-1]['max_rel_diff']:.1e}",
                flush=True,
            )
    return rows


def bandwidth_study(seeds: int, n: int, d: int) -> dict:
    """Ranks of the relevant features under the shared and the per-feature median bandwidth."""
    top = max(1, round(0.2 * d))  # the paper's top 20%
    out: dict = {"n": n, "d": d, "seeds": list(range(seeds)), "top_k": [5, top]}
    for name, (make, relevant, description) in PROBLEMS.items():
        per_rule: dict = {}
        for rule in ("median", "median_per_feature"):
            ranks, sigmas, walls = [], [], []
            for seed in range(seeds):
                X, y = make(n, d, seed)
                sel, wall, _ = timed(partial(HSICAttribution(bandwidth_x=rule, progress=False).fit, X, y))
                ranks.append(sel.ranking_[relevant].tolist())
                sigmas.append(float(np.median(sel.bandwidths_)))
                walls.append(wall)
            worst = np.max(ranks, axis=1)
            per_rule[rule] = {
                "ranks_per_seed": ranks,
                "median_rank_per_feature": np.median(ranks, axis=0).tolist(),
                "all_in_top_5": float(np.mean(worst <= 5)),
                f"all_in_top_{top}": float(np.mean(worst <= top)),
                "each_in_top_10": np.mean(np.asarray(ranks) <= 10, axis=0).tolist(),
                "median_sigma": float(np.median(sigmas)),
                "fit_wall_s_median": statistics.median(walls),
            }
            print(
                f"bandwidth {name:20s} {rule:18s}: median ranks of {relevant} = "
                f"{per_rule[rule]['median_rank_per_feature']}, all in top 5: {per_rule[rule]['all_in_top_5']:.0%}, "
                f"all in top {top}: {per_rule[rule][f'all_in_top_{top}']:.0%}",
                flush=True,
            )
        out[name] = {"description": description, "relevant": relevant, **per_rule}
    return out


# --------------------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 5000], help="samples in the timing grid")
    p.add_argument("--d", type=int, nargs="+", default=[20, 50, 100], help="features in the timing grid")
    p.add_argument("--repeats", type=int, default=3, help="timed fits per configuration below n = 5000 (median)")
    p.add_argument(
        "--paper-sizes",
        nargs="+",
        default=["1000x20", "2000x20", "1000x50", "2000x50"],
        help="NxD configurations timed with the paper's algorithm",
    )
    p.add_argument(
        "--paper-max-rows", type=int, default=None, help="run the paper's algorithm on pairs a < R, extrapolate"
    )
    p.add_argument("--seeds", type=int, default=20, help="seeds of the bandwidth study (n=500, d=50)")
    p.add_argument("--quick", action="store_true", help="smoke run under a minute, bench_hsic_quick.json")
    p.add_argument("--output", default=None, help="JSON path (default benchmarks/results/bench_hsic[_quick].json)")
    args = p.parse_args()
    if args.quick:
        args.n, args.d, args.repeats, args.seeds = [300, 600], [10, 20], 2, 2
        args.paper_sizes = ["300x10", "600x20"]
    return args


def main() -> int:
    args = parse_args()
    t_start = time.perf_counter()
    output = Path(args.output or RESULTS / ("bench_hsic_quick.json" if args.quick else "bench_hsic.json"))
    paper_sizes = [tuple(int(v) for v in s.lower().split("x")) for s in args.paper_sizes]
    bandwidth_n, bandwidth_d = (300, 20) if args.quick else (500, 50)
    res: dict = {
        "benchmark": "bench_hsic",
        "env_start": env_info(),
        "setup": {
            "quick": args.quick,
            "n": args.n,
            "d": args.d,
            "repeats": args.repeats,
            "repeats_note": "after a warm-up call: median of untraced repeats for n < 5000, then one fit under "
            "tracemalloc; for n >= 5000 that one traced fit is the timing (timed_under_tracemalloc)",
            "data": PROBLEMS["interaction"][2] + " (seed 0), rbf target kernel",
            "ours": "HSICAttribution() defaults: rbf, bandwidth_x='median_per_feature', statistic='biased', "
            "algorithm='auto', device='cpu', working_memory 1024 MiB; each configuration in a fresh spawned process",
            "paper": "paper_hsic_shapley: d x n x n Gram matrices, per-feature ESP recurrence over the other d-1 "
            f"Gram matrices (O(n^2 d^3)), single-threaded numpy, chunks of {PAPER_CHUNK} pairs, our bandwidths",
            "paper_sizes": args.paper_sizes,
            "paper_max_rows": args.paper_max_rows,
            "breakdown": BREAKDOWN,
            "memory": "tracemalloc peak of one fit (numpy allocations); max RSS of the process (ru_maxrss), "
            "absolute and minus the RSS just before the timed fits",
        },
    }
    res["agreement"] = agreement(args.quick)
    write(res, output)

    cases: dict[tuple[int, int], dict] = {}
    res["ours"] = []
    for n in args.n:
        for d in args.d:
            repeats = 0 if n >= 5000 else args.repeats  # n >= 5000: one fit, the traced one
            row = in_fresh_process(ours_case, n, d, 0, repeats, True)
            cases[(n, d)] = row
            res["ours"].append({k: v for k, v in row.items() if k not in ("attributions", "bandwidths")})
            breakdown = row["traced_fit_breakdown_s"]
            print(
                f"ours n={n:5d} d={d:3d}: {row['wall_s_median']:7.2f} s wall, {row['cpu_s_median']:7.2f} s cpu, "
                f"tracemalloc peak {row['tracemalloc_peak_mib']:7.1f} MiB, max RSS {row['peak_rss_mib']:7.1f} MiB "
                f"(+{row['rss_delta_mib']:.1f}), warm-up {row['warmup_wall_s']:.1f} s; traced fit "
                f"{row['traced_fit_wall_s']:.2f} s, of which attributions {breakdown['statistic_shapley']:.2f} s",
                flush=True,
            )
            write(res, output)

    res["paper"] = []
    for n, d in paper_sizes:
        ours = cases.get((n, d)) or in_fresh_process(ours_case, n, d, 0, args.repeats, True)
        gammas = (1.0 / (2.0 * np.asarray(ours["bandwidths"]) ** 2)).tolist()
        row = in_fresh_process(paper_case, n, d, 0, gammas, 1.0 / (2.0 * ours["bandwidth_y"] ** 2), args.paper_max_rows)
        phi = row.pop("attributions")
        if phi is not None:
            diff = np.abs(np.subtract(phi, ours["attributions"])).max()
            row["max_abs_diff_vs_ours"] = float(diff)
            row["max_rel_diff_vs_ours"] = float(diff / np.abs(ours["attributions"]).max())
        row["ours_wall_s"] = ours["wall_s_median"]
        row["ours_cpu_s"] = ours["cpu_s_median"]
        row["speedup_wall"] = row["wall_s"] / ours["wall_s_median"]
        row["speedup_cpu"] = row["cpu_s"] / ours["cpu_s_median"]
        attribution_s = ours["traced_fit_breakdown_s"]["statistic_shapley"]
        row["ours_attribution_only_wall_s"] = attribution_s  # from the traced fit: without hsic_'s double sum
        row["speedup_wall_attribution_only"] = row["wall_s"] / attribution_s
        res["paper"].append(row)
        how = f"extrapolated x{n / row['rows_run']:.1f} from {row['rows_run']} rows" if row["extrapolated"] else "full"
        agree = f", max rel diff {row['max_rel_diff_vs_ours']:.1e}" if phi is not None else ""
        print(
            f"paper n={n:5d} d={d:3d}: {row['wall_s']:7.1f} s wall ({how}), "
            f"max RSS {row['peak_rss_mib_run']:.0f} MiB; ours {ours['wall_s_median']:.2f} s: "
            f"{row['speedup_wall']:.1f}x wall, {row['speedup_cpu']:.1f}x cpu, "
            f"{row['speedup_wall_attribution_only']:.1f}x against the attributions alone{agree}",
            flush=True,
        )
        write(res, output)

    res["bandwidth"] = bandwidth_study(args.seeds, bandwidth_n, bandwidth_d)
    write(res, output)

    res["targets"] = {
        "n5000_d100_wall_s_max": 60,
        "n5000_d100_peak_rss_gib_max": 2,
        "speedup_vs_paper_n2000_d50_min": 20,
    }
    met: dict = {}
    if (5000, 100) in cases:
        big = cases[(5000, 100)]
        met["n5000_d100_time"] = big["wall_s_median"] < 60
        met["n5000_d100_memory"] = big["peak_rss_mib"] < 2048
    for row in res["paper"]:
        if (row["n"], row["d"]) == (2000, 50):
            met["speedup_vs_paper_n2000_d50"] = row["speedup_wall"] >= 20
    res["targets_met"] = met
    res["env_end"] = {"loadavg": list(os.getloadavg())}
    res["total_wall_s"] = time.perf_counter() - t_start
    write(res, output)

    print(
        f"\n{'n':>5} {'d':>4} | {'wall s':>8} | {'cpu s':>8} | {'attrib s':>8} | "
        f"{'tracemalloc MiB':>15} | {'max RSS MiB':>11} | {'+RSS MiB':>8}"
    )
    for r in res["ours"]:
        b = r["traced_fit_breakdown_s"]
        print(
            f"{r['n']:>5} {r['d']:>4} | {r['wall_s_median']:>8.2f} | {r['cpu_s_median']:>8.2f} | "
            f"{b['statistic_shapley']:>8.2f} | "
            f"{r['tracemalloc_peak_mib']:>15.1f} | {r['peak_rss_mib']:>11.1f} | {r['rss_delta_mib']:>8.1f}"
        )
    print("(attrib s: the traced fit's time in statistic_shapley)")
    print(
        f"\n{'n':>5} {'d':>4} | {'paper wall s':>12} | {'ours wall s':>11} | {'speed-up wall/cpu':>17} | "
        f"{'vs attrib':>9} | how"
    )
    for r in res["paper"]:
        print(
            f"{r['n']:>5} {r['d']:>4} | {r['wall_s']:>12.1f} | {r['ours_wall_s']:>11.2f} | "
            f"{r['speedup_wall']:>7.1f} / {r['speedup_cpu']:<7.1f} | {r['speedup_wall_attribution_only']:>9.1f} | "
            f"{'extrapolated' if r['extrapolated'] else 'full'}"
        )
    print(f"targets met: {json.dumps(met)}")
    print(f"total wall time {res['total_wall_s']:.0f} s; wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
