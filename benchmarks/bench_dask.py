"""Benchmark: one explain eager in-process, and on 1 and 2 Dask worker processes.

What is measured
----------------
The demo's model (``load_diabetes``, d = 10, ``XGBRegressor(n_estimators=200, max_depth=4)``
pinned to one thread) explained by ``PermutationShapExplainer(model, random_state=0)`` at its
default budget (``algorithm="auto"``: Leverage SHAP, 500 evaluations per row) against 100 background
rows, on ``--rows`` (240) rows tiled from the data (a row's values depend on its content only, so
the tiles cost what distinct rows cost):

* **eager**: ``explainer.explain(X)`` in this process (one thread: ``n_jobs=1``);
* **dask, 1 worker** and **dask, 2 workers**: ``explainer.explain(da.from_array(X, chunks=
  (--chunk, -1))).compute()`` on ``LocalCluster(n_workers=w, threads_per_worker=1,
  processes=True)`` after a warm-up compute on the same cluster (numba and the model loaded in
  every worker); the values are checked bit-identical to the eager ones;
* the peak resident memory of each worker (``ru_maxrss``) after explaining with chunks of
  ``--chunk`` and of 4x that many rows, to show it follows the chunk, not the data;
* a projection: from the 2-worker run's rows per second per core, the cores that explain 10^8 rows
  of this model in one hour.

Medians of ``--repeats`` (3) computes. Targets (issue 14): 2 workers >= 1.7x faster than 1 on this
2-core machine; 1 worker <= 1.15x the eager time.

Rerun
-----
::

    python benchmarks/bench_dask.py             # about 2 minutes on 2 cores
    python benchmarks/bench_dask.py --rows 80 --repeats 1   # a smoke run

Results: ``benchmarks/results/bench_dask.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import time
from pathlib import Path

import dask.array as da
import numpy as np
import xgboost
from distributed import Client, LocalCluster
from sklearn.datasets import load_diabetes

from sklearn_shapq import PermutationShapExplainer

RESULTS = Path(__file__).parent / "results"
N_BACKGROUND = 100
PROJECTION_ROWS, PROJECTION_SECONDS = 10**8, 3600.0


def peak_rss_mib() -> float:
    """Peak resident memory of the calling process, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(run, repeats: int) -> tuple[float, list[float], object]:  # noqa: ANN001
    walls, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        walls.append(time.perf_counter() - start)
    return statistics.median(walls), walls, out


def on_cluster(explainer, X: np.ndarray, workers: int, chunk: int, repeats: int) -> dict:  # noqa: ANN001
    """Time the lazy explain on ``workers`` single-threaded worker processes; peak memory per worker."""
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            silence_logs=40,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.compute(explainer.explain(da.from_array(X[: 2 * workers], chunks=(1, -1)))).result()  # warm-up
        lazy = explainer.explain(da.from_array(X, chunks=(chunk, -1)))
        median, walls, values = timed(lambda: client.compute(lazy).result(), repeats)
        peak = client.run(peak_rss_mib)
        big = explainer.explain(da.from_array(X, chunks=(4 * chunk, -1)))
        client.compute(big).result()
        peak_big = client.run(peak_rss_mib)
    return {
        "workers": workers,
        "wall_s_median": median,
        "wall_s_all": walls,
        "values": values,
        "peak_rss_mib_per_worker": sorted(peak.values()),
        "peak_rss_mib_per_worker_chunk_x4": sorted(peak_big.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=240)
    parser.add_argument("--chunk", type=int, default=10, help="rows per block")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS / "bench_dask.json"))
    args = parser.parse_args()

    X_all, y = load_diabetes(return_X_y=True)
    model = xgboost.XGBRegressor(n_estimators=200, max_depth=4, n_jobs=1, random_state=0).fit(X_all, y)
    background = X_all[:N_BACKGROUND]
    X = np.resize(X_all[N_BACKGROUND:], (args.rows, X_all.shape[1]))
    explainer = PermutationShapExplainer(model, random_state=0, n_jobs=1, progress=False).fit(background)

    explainer.explain(X[:2])  # numba and the model warm
    eager_s, eager_all, eager = timed(lambda: explainer.explain(X).values, args.repeats)
    runs = [on_cluster(explainer, X, workers, args.chunk, args.repeats) for workers in (1, 2)]
    for run in runs:
        run["bit_identical_to_eager"] = bool(np.array_equal(run.pop("values"), eager))

    one, two = runs
    speedup = one["wall_s_median"] / two["wall_s_median"]
    overhead = one["wall_s_median"] / eager_s
    rows_per_core_s = args.rows / two["wall_s_median"] / 2
    cores = PROJECTION_ROWS / PROJECTION_SECONDS / rows_per_core_s
    out = {
        "environment": {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine()},
        "setup": {
            "model": "XGBRegressor(n_estimators=200, max_depth=4, n_jobs=1) on load_diabetes (d=10)",
            "explainer": "PermutationShapExplainer(model, random_state=0, n_jobs=1): sampler auto "
            f"({explainer.algorithm_}), max_evals {explainer.max_evals_}, {N_BACKGROUND} background rows",
            "rows": args.rows,
            "chunk_rows": args.chunk,
            "repeats": args.repeats,
        },
        "eager_s_median": eager_s,
        "eager_s_all": eager_all,
        "dask": runs,
        "speedup_2_over_1_worker": speedup,
        "one_worker_over_eager": overhead,
        "targets": {"speedup_min": 1.7, "one_worker_over_eager_max": 1.15},
        "targets_met": {"speedup": speedup >= 1.7, "one_worker_overhead": overhead <= 1.15},
        "rows_per_second_per_core": rows_per_core_s,
        "projection": f"{PROJECTION_ROWS:.0e} rows in {PROJECTION_SECONDS / 3600:.0f} h need about {cores:,.0f} "
        f"cores ({rows_per_core_s:.1f} rows/s per core at {explainer.max_evals_} evaluations per row)",
    }
    print(
        f"eager {eager_s:.2f} s; dask 1 worker {one['wall_s_median']:.2f} s ({overhead:.2f}x eager, target <= 1.15); "
        f"2 workers {two['wall_s_median']:.2f} s (speed-up {speedup:.2f}, target >= 1.7); bit-identical "
        f"{one['bit_identical_to_eager'] and two['bit_identical_to_eager']}; peak RSS per worker "
        f"{two['peak_rss_mib_per_worker']} MiB (chunk {args.chunk}), {two['peak_rss_mib_per_worker_chunk_x4']} MiB "
        f"(chunk {4 * args.chunk})\n{out['projection']}",
        flush=True,
    )
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
