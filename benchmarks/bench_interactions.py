"""Benchmark: estimated pairwise interactions (SII) of any model, against brute force and shapiq.

What is measured
----------------
For each model (``RandomForestRegressor`` on ``load_diabetes``, an ``MLPRegressor`` on
``make_friedman1``; d = 10 each), ``--n-bg`` (20) background rows and ``--n-rows`` explained rows:

* truth: the SII matrix of each row's interventional game v(S) = mean_z f(x_S, z_rest), from all
  2^d coalitions evaluated here with numpy (brute force, independent of the package's code);
* ours: ``PermutationShapExplainer(model, background_size=None, background_parts=P,
  random_state=seed).fit(background).explain_interactions(rows, index="SII", max_evals=B)`` for B
  in 10d, 20d, 50d evaluations per row and P in "auto" (one part per background row) and 1; an
  evaluation costs N model rows (N / P per part, each part gets B evaluations);
* shapiq (when importable): the order-2 approximators SHAPIQ, SVARMIQ, KernelSHAPIQ and
  PermutationSamplingSII (``index="SII", max_order=2``, the pairing trick where offered) at
  ``budget=B`` coalitions of the same game (looked up in the brute-force table, so each costs the
  same N model rows as one of our evaluations): equal model rows;

over ``--seeds`` seeds. Reported: the relative RMSE of the off-diagonal SII entries,
sqrt(Σ ||est − truth||²_F / Σ ||truth||²_F) over rows and seeds, and our mean reported standard
error over the RMSE (a calibration check: about 1 when the errors are honest).

Usage::

    python benchmarks/bench_interactions.py --quick          # 2 seeds, 3 rows
    /work/venv312/bin/python benchmarks/bench_interactions.py  # with shapiq (see peer_env.sh)

Writes ``benchmarks/results/bench_interactions.json`` (``--output``).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import interactions_from_table

RESULTS = Path(__file__).parent / "results"
SHAPIQ_METHODS = ("SHAPIQ", "SVARMIQ", "KernelSHAPIQ", "PermutationSamplingSII")


def models(seed: int = 0) -> dict:
    """The benchmark's fitted models and their data: name -> (predict, X)."""
    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(n_estimators=50, min_samples_leaf=3, random_state=seed).fit(X, y)
    Xf, yf = make_friedman1(n_samples=600, n_features=10, noise=0.3, random_state=seed)
    mlp = make_pipeline(
        StandardScaler(), MLPRegressor(hidden_layer_sizes=(64, 64), max_iter=1500, random_state=seed)
    ).fit(Xf, yf)
    return {"rf_diabetes": (forest.predict, X), "mlp_friedman1": (mlp.predict, Xf)}


def game_table(predict, x: np.ndarray, background: np.ndarray) -> np.ndarray:
    """v(S) of all 2^d coalitions (bit j: feature j taken from x) of x's interventional game."""
    d = x.shape[0]
    masks = ((np.arange(2**d)[:, None] >> np.arange(d)) & 1).astype(bool)
    rows = np.where(masks[:, None, :], x[None, None, :], background[None, :, :]).reshape(-1, d)
    return predict(rows).reshape(2**d, background.shape[0]).mean(axis=1)


def sii_from_table(table: np.ndarray) -> np.ndarray:
    """The (d, d) SII matrix (zero diagonal) from a game's 2^d values."""
    pairs, _ = interactions_from_table(table[None, :, None], "SII")
    return pairs[0, :, :, 0]


def shapiq_pairs(method: str, table: np.ndarray, d: int, budget: int, seed: int) -> np.ndarray:
    """SII pairs of shapiq's approximator ``method`` on the game given by ``table``."""
    import shapiq.approximator as approximators

    weights = 1 << np.arange(d)

    def game(coalitions: np.ndarray) -> np.ndarray:
        codes = np.atleast_2d(np.asarray(coalitions, dtype=np.int64)) @ weights  # one coalition comes as (d,)
        return table[codes] - table[0]

    cls = getattr(approximators, method)
    kwargs = {"index": "SII", "random_state": seed}
    if method != "PermutationSamplingSII":
        kwargs["pairing_trick"] = True
    approximator = cls(d, max_order=2, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = approximator.approximate(budget=budget, game=game)
    out = np.zeros((d, d))
    for i in range(d):
        for j in range(i + 1, d):
            out[i, j] = out[j, i] = values[(i, j)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, 3 rows")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-rows", type=int, default=5)
    parser.add_argument("--n-bg", type=int, default=20)
    parser.add_argument("--factors", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--output", default=str(RESULTS / "bench_interactions.json"))
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.n_rows = 2, 3
    try:
        import shapiq

        shapiq_version = shapiq.__version__
    except ImportError:
        shapiq_version = None
    off = None
    records = []
    for name, (predict, X) in models().items():
        rng = np.random.default_rng(0)
        picked = rng.choice(X.shape[0], args.n_bg + args.n_rows, replace=False)
        background, rows = X[picked[: args.n_bg]], X[picked[args.n_bg :]]
        d = X.shape[1]
        off = ~np.eye(d, dtype=bool)
        tables = [game_table(predict, x, background) for x in rows]
        truth = np.array([sii_from_table(t) for t in tables])
        truth_norm = float((truth[:, off] ** 2).sum()) * args.seeds
        for factor in args.factors:
            budget = factor * d
            for parts in ("auto", 1):
                errors = reported = 0.0
                start = time.perf_counter()
                for seed in range(args.seeds):
                    explainer = PermutationShapExplainer(
                        predict, background_size=None, background_parts=parts, random_state=seed, progress=False
                    ).fit(background)
                    estimate = explainer.explain_interactions(rows, index="SII", max_evals=budget)
                    errors += float(((estimate.values - truth)[:, off] ** 2).sum())
                    reported += float((estimate.error_std[:, off] ** 2).sum())
                elapsed = time.perf_counter() - start
                records.append(
                    {
                        "model": name,
                        "method": f"ours (parts={parts})",
                        "budget": budget,
                        "rel_rmse": float(np.sqrt(errors / truth_norm)),
                        "stderr_over_rmse": float(np.sqrt(reported / errors)),
                        "seconds": elapsed,
                    }
                )
            if shapiq_version is not None:
                for method in SHAPIQ_METHODS:
                    errors = 0.0
                    start = time.perf_counter()
                    for seed in range(args.seeds):
                        for t, table in enumerate(tables):
                            estimate = shapiq_pairs(method, table, d, budget, seed)
                            errors += float(((estimate - truth[t])[off] ** 2).sum())
                    records.append(
                        {
                            "model": name,
                            "method": f"shapiq {method}",
                            "budget": budget,
                            "rel_rmse": float(np.sqrt(errors / truth_norm)),
                            "stderr_over_rmse": None,
                            "seconds": time.perf_counter() - start,
                        }
                    )
    header = f"{'model':<15} {'method':<30} {'budget':>6} {'rel RMSE':>9} {'se/RMSE':>8}"
    print(header)
    print("-" * len(header))
    for r in records:
        ratio = "" if r["stderr_over_rmse"] is None else f"{r['stderr_over_rmse']:.2f}"
        print(f"{r['model']:<15} {r['method']:<30} {r['budget']:>6} {r['rel_rmse']:>9.3f} {ratio:>8}")
    if shapiq_version is None:
        print("shapiq is not importable: its approximators were skipped.")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w") as handle:
        json.dump(
            {
                "settings": {
                    "seeds": args.seeds,
                    "n_rows": args.n_rows,
                    "n_bg": args.n_bg,
                    "factors": args.factors,
                    "d": 10,
                    "shapiq": shapiq_version,
                    "python": platform.python_version(),
                },
                "records": records,
            },
            handle,
            indent=1,
        )


if __name__ == "__main__":
    main()
