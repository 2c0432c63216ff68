"""Benchmark: cold start of every public class with an empty numba cache.

What is measured
----------------
Each case runs in a fresh ``python`` subprocess whose ``NUMBA_CACHE_DIR`` is a new, empty
temporary directory, which is what a fresh install sees. Inside the subprocess:

* **import**: ``import numpy, sklearn, numba, sklearn_shapq`` (the package and its dependencies),
  timed with ``time.perf_counter`` from the first line of the child;
* **import_shap**: ``import shap`` (about 1 s: ``shap.plots`` imports matplotlib), which the first
  ``explain`` would otherwise do lazily to build its ``shap.Explanation``; timed on its own and
  not part of **first** (add it for what a user waits on a first ``explain``);
* the problem is then built untimed (data, a fitted sklearn model);
* **first**: the first fit (+ explain) of the class: numba compilation plus the work;
* **warm**: the same call again in the same process with a new instance: the work alone.
  ``first - warm`` is roughly the compile time.

A second subprocess then reuses the now populated cache directory (**cached**: first call when the
numba cache is on disk, as on every later start of an installed package).

Cases (all on ``load_diabetes``, 10 features, constructed with defaults apart from ``model``,
``random_state`` and ``max_evals``, so that the script survives renames of other parameters):

* ``PermutationShapExplainer``: ``Ridge`` fitted on all rows, background = 100 rows, explain 5 rows;
* ``ProductKernelShapExplainer``: ``SVR()`` fitted on 200 rows, background = 50 rows, explain 5 rows;
* ``HSICAttribution``: ``fit(X[:100], y[:100])``;
* ``MMDAttribution``: ``fit(X[:100], X[100:200] + 0.01)`` (with ``random_state=0`` where accepted);
* ``TopKShapley``: ``TopKShapley(Ridge(), max_evals=400, random_state=0).fit(X[:150], y[:150])``
  then ``explain(X[:3])``.

Every class gets ``progress=False`` where it accepts it, so that no progress bar is drawn.

Each case is repeated ``--repeats`` times (a new empty cache each time); medians are printed and
written to ``benchmarks/results/bench_cold_start.json``. The machine has 2 shared cores, so single
runs are noisy. Target: the **first** column (beyond imports) <= 3 s for every class.

Rerun
-----
::

    python benchmarks/bench_cold_start.py                   # 3 repeats, all classes (~2-4 minutes)
    python benchmarks/bench_cold_start.py --label before    # store under a label (default "after")
    python benchmarks/bench_cold_start.py --cases HSICAttribution --repeats 1
    # the baseline alone: the code of commit b1e6205, timed by this script
    mkdir /tmp/base && git archive b1e6205 sklearn_shapq | tar -x -C /tmp/base
    python benchmarks/bench_cold_start.py --label before --source /tmp/base --commit b1e6205
    # before and after in alternation (the machine is shared: the load changes from minute to minute)
    python benchmarks/bench_cold_start.py --baseline /tmp/base --baseline-commit b1e6205
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
    "PermutationShapExplainer",
    "ProductKernelShapExplainer",
    "HSICAttribution",
    "MMDAttribution",
    "TopKShapley",
)


def _child(case: str) -> None:
    """Run one case in this (fresh) process and print a JSON line with the timings."""
    import time

    t0 = time.perf_counter()
    import numba  # noqa: F401
    import numpy  # noqa: F401
    import sklearn  # noqa: F401

    import sklearn_shapq

    t_import = time.perf_counter() - t0
    # shap is imported lazily by the first explain (it builds the shap.Explanation); the import
    # costs about a second (shap.plots pulls in matplotlib), the same before and after, and is
    # timed on its own so that "first" is the package's own first-call cost
    t0 = time.perf_counter()
    import shap  # noqa: F401

    t_shap = time.perf_counter() - t0

    import warnings

    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge
    from sklearn.svm import SVR

    warnings.simplefilter("ignore")
    X, y = load_diabetes(return_X_y=True)

    def make(cls: type, *args: object, **kwargs: object) -> object:
        # pass random_state / max_evals / progress only where the class accepts them
        params = cls(*args).get_params() if args else cls().get_params()
        kwargs.setdefault("progress", False)
        return cls(*args, **{k: v for k, v in kwargs.items() if k in params})

    if case == "PermutationShapExplainer":
        model = Ridge().fit(X, y)

        def call() -> None:
            make(sklearn_shapq.PermutationShapExplainer, model, random_state=0).fit(X[:100]).explain(X[:5])

    elif case == "ProductKernelShapExplainer":
        model = SVR().fit(X[:200], y[:200])

        def call() -> None:
            make(sklearn_shapq.ProductKernelShapExplainer, model, random_state=0).fit(X[:50]).explain(X[:5])

    elif case == "HSICAttribution":

        def call() -> None:
            make(sklearn_shapq.HSICAttribution, random_state=0).fit(X[:100], y[:100])

    elif case == "MMDAttribution":
        Z = X[100:200] + 0.01

        def call() -> None:
            make(sklearn_shapq.MMDAttribution, random_state=0).fit(X[:100], Z)

    elif case == "TopKShapley":
        shifts = iter([0.0, 1.0])

        def call() -> None:
            # scores are kept within one fit only (no memory=), but the warm call still shifts y
            # (same work, same R^2) so that it refits even if a cache across fits comes back
            selector = make(sklearn_shapq.TopKShapley, Ridge(), max_evals=400, random_state=0)
            selector.fit(X[:150], y[:150] + next(shifts)).explain(X[:3])

    else:
        raise ValueError(f"unknown case {case!r}")

    t1 = time.perf_counter()
    call()
    t_first = time.perf_counter() - t1
    t2 = time.perf_counter()
    call()
    t_warm = time.perf_counter() - t2
    print(json.dumps({"import": t_import, "import_shap": t_shap, "first": t_first, "warm": t_warm}))


def _run(case: str, cache_dir: str, source: str | None) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    if source:  # a checkout of another commit, ahead of the editable install on the path
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
    "first": "first fit(+explain) with an empty NUMBA_CACHE_DIR, beyond both imports (s)",
    "warm": "the same call again in the same process (s)",
    "cached": "first call in a new process with the cache populated by the cold run (s)",
}


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
    parser.add_argument(
        "--source",
        help="directory holding the sklearn_shapq to time instead (`git archive C sklearn_shapq | tar -x -C DIR`)",
    )
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
                runs[label].append({**cold, "cached": cached["first"]})
                print(f"  {label} {case}: " + ", ".join(f"{k} {v:.2f}" for k, v in runs[label][-1].items()), flush=True)
                load.append(os.getloadavg()[0])
        for label in runs:
            medians[label][case] = {key: statistics.median(r[key] for r in runs[label]) for key in COLUMNS}
            medians[label][case]["runs"] = runs[label]

    for label in medians:
        print(
            f"\n[{label}] {'class':<28}"
            + "".join(f"{c + ' s':>14}" for c in COLUMNS)
            + f"  (medians of {args.repeats})"
        )
        for case, m in medians[label].items():
            print(f"[{label}] {case:<28}" + "".join(f"{m[c]:>14.2f}" for c in COLUMNS))
    print(f"1-minute load average during the runs: {min(load):.1f} .. {max(load):.1f} on {os.cpu_count()} cpus")

    if args.no_save:
        return
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results.setdefault("description", __doc__.split("\n")[0])
    results["columns"] = COLUMNS
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
