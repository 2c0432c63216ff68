"""Benchmark: what a user waits for on the first call of every public class, with an empty numba cache.

What is measured
----------------
Each case runs in a fresh ``python`` subprocess whose ``NUMBA_CACHE_DIR`` is a new, empty
temporary directory: what a fresh install meets (numba's ``cache=True`` writes next to the sources,
in ``__pycache__``, unless ``NUMBA_CACHE_DIR`` is set, so a checkout that has run once is no cold
start). Inside the subprocess:

* **import**: ``import numpy, sklearn, numba, sklearn_shapq`` and the first access of a public
  class (which imports the package's modules: ``import sklearn_shapq`` alone imports nothing), from
  the first line of the child;
* **import_shap**: ``import shap`` (``shap.plots`` pulls in matplotlib), which the first ``explain``
  otherwise does lazily to build its ``shap.Explanation``; timed on its own, not part of **first**
  (add it for all a user waits on a first ``explain``);
* the problem is then built untimed (data, a fitted sklearn model);
* **first**: the first call of the class, default parameters: numba compilation plus the work;
* **warm**: the same call again in the same process with a new instance: the work alone
  (``first - warm`` is about the compile time).

A second subprocess then reuses the populated cache directory (**cached_***: import, first and
warm calls when numba's cache is on disk, as on every later start of an installed package).
Each time is taken as wall clock (``perf_counter``) and as the process's CPU time
(``process_time``, columns ``*_cpu``): numba compiles one function at a time, so on a loaded machine
CPU time is the steadier figure and about the wall time on a quiet one, except where the compilation
overlaps the model's predictions or runs in a child process (``CpuBackend.compile_ahead``: SVR's first
call takes more CPU than wall time on a quiet machine, and needs the second core for it; a child's CPU
time is not the process's).

Cases, all on ``load_diabetes`` (442 rows, 10 features), every parameter at its default apart from
``random_state=0`` and ``progress=False`` (passed only where the class accepts them):

* ``PermutationShapExplainer[Ridge]``: ``Ridge()`` fitted on all rows, ``fit(X[:50]).explain(X[:5])``
  (``algorithm="auto"`` takes "leverage_cv" here);
* ``PermutationShapExplainer[SVR]``: the same with ``SVR()``;
* ``ProductKernelShapExplainer``: ``SVR()`` fitted on 200 rows, ``fit(X[:50]).explain(X[:5])``;
* ``HSICAttribution``: ``fit(X[:100], y[:100])``;
* ``MMDAttribution``: ``fit(X[:100], X[100:200] + 0.01)``;
* ``TopKShapley[selector]``: ``TopKShapley(Ridge()).fit(X[:150], y[:150])`` (the "retrain" game:
  its warm call is mostly the 5-fold refits of Ridge);
* ``TopKShapley[explain]``: ``TopKShapley(Ridge().fit(X, y), prefit=True).fit(X[:50]).explain(X[:5])``.

Each case is repeated ``--repeats`` times (a new empty cache each time); medians are printed and
written to ``benchmarks/results/bench_cold_start.json``. The machine has 2 shared cores, so single
runs are noisy. Target: **first** <= 3 s for every class on a quiet machine.

Rerun
-----
::

    python benchmarks/bench_cold_start.py                       # 3 repeats, all cases
    python benchmarks/bench_cold_start.py --label before        # store under a label (default "after")
    python benchmarks/bench_cold_start.py --cases HSICAttribution --repeats 1
    # another version of the package (a copy of its sklearn_shapq/ in DIR), ahead of the editable install
    python benchmarks/bench_cold_start.py --label before --source DIR --commit C
    # before and after in alternation (the machine is shared: the load changes from minute to minute)
    python benchmarks/bench_cold_start.py --baseline DIR --baseline-commit C
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "bench_cold_start.json"
CASES = (
    "PermutationShapExplainer[Ridge]",
    "PermutationShapExplainer[SVR]",
    "ProductKernelShapExplainer",
    "HSICAttribution",
    "MMDAttribution",
    "TopKShapley[selector]",
    "TopKShapley[explain]",
)


def _child(case: str) -> None:
    """Run one case in this (fresh) process and print a JSON line with the timings."""
    import time

    def clocks() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    def since(start: tuple[float, float]) -> tuple[float, float]:
        wall, cpu = clocks()
        return wall - start[0], cpu - start[1]

    t0 = clocks()
    import numba  # noqa: F401
    import numpy  # noqa: F401
    import sklearn  # noqa: F401

    import sklearn_shapq

    sklearn_shapq.PermutationShapExplainer  # noqa: B018  # the public names load on first use (PEP 562)
    t_import = since(t0)
    t0 = clocks()
    import shap  # noqa: F401

    t_shap = since(t0)

    import warnings

    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge
    from sklearn.svm import SVR

    warnings.simplefilter("ignore")
    X, y = load_diabetes(return_X_y=True)

    def make(cls: type, *args: object, **kwargs: object) -> object:
        # pass random_state / progress only where the class accepts them
        params = cls(*args).get_params()
        kwargs.setdefault("progress", False)
        return cls(*args, **{k: v for k, v in kwargs.items() if k in params})

    if case.startswith("PermutationShapExplainer"):
        model = (Ridge() if case.endswith("[Ridge]") else SVR()).fit(X, y)

        def call() -> None:
            make(sklearn_shapq.PermutationShapExplainer, model, random_state=0).fit(X[:50]).explain(X[:5])

    elif case == "ProductKernelShapExplainer":
        svr = SVR().fit(X[:200], y[:200])

        def call() -> None:
            make(sklearn_shapq.ProductKernelShapExplainer, svr, random_state=0).fit(X[:50]).explain(X[:5])

    elif case == "HSICAttribution":

        def call() -> None:
            make(sklearn_shapq.HSICAttribution, random_state=0).fit(X[:100], y[:100])

    elif case == "MMDAttribution":
        Z = X[100:200] + 0.01

        def call() -> None:
            make(sklearn_shapq.MMDAttribution, random_state=0).fit(X[:100], Z)

    elif case == "TopKShapley[selector]":
        shifts = iter([0.0, 1.0])

        def call() -> None:
            # the warm call shifts y (same work, same R^2) so that no cache across fits could skip it
            make(sklearn_shapq.TopKShapley, Ridge(), random_state=0).fit(X[:150], y[:150] + next(shifts))

    elif case == "TopKShapley[explain]":
        ridge = Ridge().fit(X, y)

        def call() -> None:
            make(sklearn_shapq.TopKShapley, ridge, prefit=True, random_state=0).fit(X[:50]).explain(X[:5])

    else:
        raise ValueError(f"unknown case {case!r}")

    t0 = clocks()
    call()
    t_first = since(t0)
    t0 = clocks()
    call()
    t_warm = since(t0)
    times = {"import": t_import, "import_shap": t_shap, "first": t_first, "warm": t_warm}
    print(json.dumps({**{k: v[0] for k, v in times.items()}, **{k + "_cpu": v[1] for k, v in times.items()}}))


def _run(case: str, cache_dir: str, source: str | None) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    if source:  # another copy of the package, ahead of the editable install on the path
        env["PYTHONPATH"] = os.pathsep.join([source, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, __file__, "--child", case], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{case} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


COLUMNS = {
    "import": "import numpy, sklearn, numba, sklearn_shapq (s)",
    "import_shap": "import shap, which the first explain otherwise does lazily (s)",
    "first": "first call with an empty NUMBA_CACHE_DIR, beyond both imports: compile + work (s)",
    "warm": "the same call again in the same process: the work (s)",
    "cached_import": "import as above in a second process on the populated cache (s)",
    "cached_first": "first call in the second process, numba's cache on disk (s)",
    "cached_warm": "second call in the second process (s)",
}
SHOWN = ("import", "first", "warm", "cached_first", "first_cpu", "cached_first_cpu")


def _git_commit() -> str:
    proc = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False, cwd=RESULTS.parent
    )
    return proc.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="after", help="key under which the medians are stored in the JSON")
    parser.add_argument("--no-save", action="store_true", help="print only")
    parser.add_argument("--source", help="directory holding the sklearn_shapq to time instead")
    parser.add_argument("--commit", help="commit of --source, recorded in the JSON")
    parser.add_argument(
        "--baseline",
        help="a second source directory timed in alternation with the first (same machine load), stored under "
        "--baseline-label",
    )
    parser.add_argument("--baseline-label", default="before")
    parser.add_argument("--baseline-commit", help="commit of --baseline, recorded in the JSON")
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return

    variants = [(args.label, args.source, args.commit or _git_commit() + ("" if args.source else " (working tree)"))]
    if args.baseline:
        variants.insert(0, (args.baseline_label, args.baseline, args.baseline_commit or "?"))
    medians: dict = {label: {} for label, _, _ in variants}
    load = [os.getloadavg()[0]]
    for case in args.cases:
        runs: dict = {label: [] for label, _, _ in variants}
        for _ in range(args.repeats):
            for label, source, _ in variants:  # alternate, so that the variants share the machine's load
                with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache_dir:
                    cold = _run(case, cache_dir, source)
                    cached = _run(case, cache_dir, source)
                runs[label].append({**cold, **{"cached_" + k: v for k, v in cached.items() if "shap" not in k}})
                shown = ", ".join(f"{k} {runs[label][-1][k]:.2f}" for k in SHOWN)
                print(f"  {label} {case}: {shown}", flush=True)
                load.append(os.getloadavg()[0])
        for label in runs:
            keys = list(runs[label][0])
            medians[label][case] = {key: statistics.median(r[key] for r in runs[label]) for key in keys}
            medians[label][case]["runs"] = runs[label]

    for label in medians:
        print(f"\n[{label}] {'case':<34}" + "".join(f"{c:>17}" for c in SHOWN) + f"  (s, medians of {args.repeats})")
        for case, m in medians[label].items():
            print(f"[{label}] {case:<34}" + "".join(f"{m[c]:>17.2f}" for c in SHOWN))
    print(f"1-minute load average during the runs: {min(load):.1f} .. {max(load):.1f} on {os.cpu_count()} cpus")

    if args.no_save:
        return
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if "columns" in results and "cached_first" not in results["columns"]:
        results = {}  # the results of the former benchmark (a warm numba cache): replaced
    results["description"] = __doc__.split("\n")[0]
    results["columns"] = {
        **COLUMNS,
        "*_cpu": "the same as CPU time of the process (process_time): steadier than wall time under load (s)",
    }
    for label, _, commit in variants:
        entry = results.setdefault(label, {})
        entry.update(
            {
                "commit": commit,
                "repeats": args.repeats,
                "python": sys.version.split()[0],
                "cpus": os.cpu_count(),
                "load_average_1min": [round(min(load), 2), round(max(load), 2)],
                "interleaved_with": [other for other, _, _ in variants if other != label],
            }
        )
        entry.setdefault("medians", {}).update(medians[label])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {RESULTS} [{', '.join(medians)}]")


if __name__ == "__main__":
    main()
