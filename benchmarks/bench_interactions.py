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

Wide problems (``--wide``): an RBF support-vector regressor (StandardScaler + SVR) on
``load_breast_cancer`` (d = 30) and on ``make_friedman1(1000, 100)`` (d = 100), where 2^d rules
out brute force; the truth is ``ProductKernelShapExplainer(model, value_function="interventional")``'s
exact SII on the same background (the same game), and every method gets B = 10d, 20d (and 50d at
d = 30) evaluations per row, shapiq's approximators through the interventional game itself
(``--wide-seeds`` 3, ``--wide-rows`` 3, 20 background rows).

Timing (``--timing``): the exact product-kernel interactions (``explain_interactions``, all four
indices come from one pass) against shapiq's exact enumeration (``shapiq.ExactComputer`` on the
same interventional game: 2^d coalitions, each N model rows, then its transform) at d = 8, 10,
12 (SVR on ``make_friedman1``, 20 background rows), per explained row, and the largest difference
between the two; and ours alone at d = 30 and 100 with about 500 support vectors, for the paper's
game ("pkex") and the interventional game on 20 background rows (median of 3, 20 rows).

Usage::

    python benchmarks/bench_interactions.py --quick          # 2 seeds, 3 rows
    /work/venv312/bin/python benchmarks/bench_interactions.py  # with shapiq (see peer_env.sh)
    /work/venv312/bin/python benchmarks/bench_interactions.py --wide --timing --no-small

Writes ``benchmarks/results/bench_interactions.json`` (``--output``; ``--wide`` and ``--timing``
records are added to the same file, the small problems kept unless they are rerun).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from sklearn_shapq import PermutationShapExplainer, ProductKernelShapExplainer
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


def svr_model(X: np.ndarray, y: np.ndarray) -> object:
    """StandardScaler + RBF SVR, the product-kernel model of the wide problems."""
    return make_pipeline(StandardScaler(), SVR(C=10.0)).fit(X, y)


def wide_models() -> dict:
    """The wide problems: name -> (fitted SVR pipeline, X)."""
    X30, y30 = load_breast_cancer(return_X_y=True)
    X100, y100 = make_friedman1(n_samples=1000, n_features=100, noise=0.3, random_state=0)
    return {
        "svr_breast_cancer30": (svr_model(X30, y30.astype(float)), X30),
        "svr_friedman100": (svr_model(X100, y100), X100),
    }


def kernel_sii(model: object, background: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Exact SII pairs (n, d, d) of the interventional game, from the product kernel."""
    explainer = ProductKernelShapExplainer(
        model, value_function="interventional", background_size=None, progress=False
    ).fit(background)
    return explainer.explain_interactions(rows, index="SII").values


def game_function(model: object, background: np.ndarray, x: np.ndarray):
    """v(S) - v(empty) of x's interventional game for shapiq: coalitions (m, d) -> (m,)."""
    d = x.shape[0]
    empty = float(model.predict(background).mean())

    def game(coalitions: np.ndarray) -> np.ndarray:
        masks = np.atleast_2d(np.asarray(coalitions, dtype=bool))
        hybrid = np.where(masks[:, None, :], x[None, None, :], background[None, :, :]).reshape(-1, d)
        return model.predict(hybrid).reshape(len(masks), len(background)).mean(axis=1) - empty

    return game


def shapiq_game_pairs(method: str, game, d: int, budget: int, seed: int) -> np.ndarray:
    """SII pairs of shapiq's approximator ``method`` on a callable game."""
    import shapiq.approximator as approximators

    kwargs = {"index": "SII", "random_state": seed}
    if method != "PermutationSamplingSII":
        kwargs["pairing_trick"] = True
    approximator = getattr(approximators, method)(d, max_order=2, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = approximator.approximate(budget=budget, game=game)
    out = np.zeros((d, d))
    first, second = np.triu_indices(d, 1)
    out[first, second] = [values[(int(i), int(j))] for i, j in zip(first, second, strict=True)]
    return out + out.T


def ours_record(
    model: object, background: np.ndarray, rows: np.ndarray, truth: np.ndarray, budget: int, parts: object, seeds: int
) -> dict:
    """Our SII at ``budget`` evaluations per row over ``seeds`` seeds: relative RMSE, stderr / RMSE, seconds."""
    off = ~np.eye(truth.shape[1], dtype=bool)
    errors = reported = 0.0
    start = time.perf_counter()
    for seed in range(seeds):
        explainer = PermutationShapExplainer(
            model, background_size=None, background_parts=parts, random_state=seed, progress=False
        ).fit(background)
        estimate = explainer.explain_interactions(rows, index="SII", max_evals=budget)
        errors += float(((estimate.values - truth)[:, off] ** 2).sum())
        reported += float((estimate.error_std[:, off] ** 2).sum())
    return {
        "method": f"ours (parts={parts})",
        "budget": budget,
        "rel_rmse": float(np.sqrt(errors / (float((truth[:, off] ** 2).sum()) * seeds))),
        "stderr_over_rmse": float(np.sqrt(reported / errors)),
        "seconds": time.perf_counter() - start,
    }


def wide_records(args: argparse.Namespace, shapiq_version: str | None) -> list[dict]:
    """Ours and shapiq's approximators against the exact product-kernel SII at d = 30 and 100."""
    records = []
    for name, (model, X) in wide_models().items():
        rng = np.random.default_rng(0)
        picked = rng.choice(X.shape[0], args.n_bg + args.wide_rows, replace=False)
        background, rows = X[picked[: args.n_bg]], X[picked[args.n_bg :]]
        d = X.shape[1]
        off = ~np.eye(d, dtype=bool)
        truth = kernel_sii(model, background, rows)
        truth_norm = float((truth[:, off] ** 2).sum()) * args.wide_seeds
        factors = [10, 20, 50] if d <= 30 else [10, 20]
        methods = ("KernelSHAPIQ", "SHAPIQ", "PermutationSamplingSII") + (("SVARMIQ",) if d <= 30 else ())
        for factor in factors:
            budget = factor * d
            for parts in ("auto", 1):
                records.append(
                    {
                        "model": name,
                        "d": d,
                        **ours_record(model, background, rows, truth, budget, parts, args.wide_seeds),
                    }
                )
                label = f"ours (parts={parts})"
                print(f"{name:<20} {label:<30} {budget:>6} {records[-1]['rel_rmse']:>9.3f}", flush=True)
            if shapiq_version is None:
                continue
            for method in methods:
                errors = 0.0
                start = time.perf_counter()
                for seed in range(args.wide_seeds):
                    for r, x in enumerate(rows):
                        estimate = shapiq_game_pairs(method, game_function(model, background, x), d, budget, seed)
                        errors += float(((estimate - truth[r])[off] ** 2).sum())
                records.append(
                    {
                        "model": name,
                        "d": d,
                        "method": f"shapiq {method}",
                        "budget": budget,
                        "rel_rmse": float(np.sqrt(errors / truth_norm)),
                        "stderr_over_rmse": None,
                        "seconds": time.perf_counter() - start,
                    }
                )
                print(f"{name:<20} shapiq {method:<22} {budget:>6} {records[-1]['rel_rmse']:>9.3f}", flush=True)
    return records


def timing_records(args: argparse.Namespace, shapiq_version: str | None) -> list[dict]:
    """Seconds per row: exact product-kernel interactions against shapiq's exact enumeration."""
    records = []
    for d in (8, 10, 12):
        X, y = make_friedman1(n_samples=600, n_features=d, noise=0.3, random_state=0)
        model = svr_model(X, y)
        background, rows = X[: args.n_bg], X[args.n_bg : args.n_bg + 3]
        kernel_sii(model, background, rows[:1])  # compile
        start = time.perf_counter()
        ours = kernel_sii(model, background, rows)
        ours_seconds = (time.perf_counter() - start) / len(rows)
        record = {"d": d, "n_support": int(model[-1].support_.size), "ours_seconds_per_row": ours_seconds}
        if shapiq_version is not None:
            from shapiq import ExactComputer

            start = time.perf_counter()
            largest = 0.0
            for r, x in enumerate(rows):
                values = ExactComputer(game_function(model, background, x), n_players=d)(index="SII", order=2)
                first, second = np.triu_indices(d, 1)
                theirs = np.array([values[(int(i), int(j))] for i, j in zip(first, second, strict=True)])
                largest = max(largest, float(np.abs(theirs - ours[r][first, second]).max()))
            record["shapiq_exact_seconds_per_row"] = (time.perf_counter() - start) / len(rows)
            record["shapiq_over_ours"] = record["shapiq_exact_seconds_per_row"] / ours_seconds
            record["max_abs_difference"] = largest
        records.append(record)
        print(record, flush=True)
    for d, n_support in ((30, 500), (100, 500)):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n_support, d))
        model = SVR(C=1.0, gamma=1.0 / d).fit(X, np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + rng.normal(size=n_support))
        rows = rng.normal(size=(20, d))
        for value_function, background in (("pkex", X[:1]), ("interventional", X[: args.n_bg])):
            explainer = ProductKernelShapExplainer(
                model, value_function=value_function, background_size=None, progress=False
            ).fit(background)
            explainer.explain_interactions(rows[:1])  # compile
            times = []
            for _ in range(3):
                start = time.perf_counter()
                explainer.explain_interactions(rows)
                times.append((time.perf_counter() - start) / len(rows))
            record = {
                "d": d,
                "n_support": int(model.support_.size),
                "value_function": value_function,
                "n_background": len(background) if value_function == "interventional" else None,
                "ours_seconds_per_row": float(np.median(times)),
            }
            records.append(record)
            print(record, flush=True)
    return records


def small_records(args: argparse.Namespace, shapiq_version: str | None) -> list[dict]:
    """Ours and shapiq's approximators against brute force at d = 10."""
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
                records.append(
                    {"model": name, "d": d, **ours_record(predict, background, rows, truth, budget, parts, args.seeds)}
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
                            "d": d,
                            "method": f"shapiq {method}",
                            "budget": budget,
                            "rel_rmse": float(np.sqrt(errors / truth_norm)),
                            "stderr_over_rmse": None,
                            "seconds": time.perf_counter() - start,
                        }
                    )
    return records


def print_records(records: list[dict]) -> None:
    """The accuracy records as a table."""
    header = f"{'model':<20} {'method':<30} {'budget':>6} {'rel RMSE':>9} {'se/RMSE':>8}"
    print(header)
    print("-" * len(header))
    for r in records:
        ratio = "" if r["stderr_over_rmse"] is None else f"{r['stderr_over_rmse']:.2f}"
        print(f"{r['model']:<20} {r['method']:<30} {r['budget']:>6} {r['rel_rmse']:>9.3f} {ratio:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, 3 rows")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-rows", type=int, default=5)
    parser.add_argument("--n-bg", type=int, default=20)
    parser.add_argument("--factors", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--no-small", action="store_true", help="skip the d = 10 problems (keep their stored records)")
    parser.add_argument("--wide", action="store_true", help="the d = 30 and 100 SVRs, exact kernel SII as the truth")
    parser.add_argument("--wide-seeds", type=int, default=3)
    parser.add_argument("--wide-rows", type=int, default=3)
    parser.add_argument("--timing", action="store_true", help="exact kernel interactions against shapiq's enumeration")
    parser.add_argument("--output", default=str(RESULTS / "bench_interactions.json"))
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.n_rows = 2, 3
    try:
        import shapiq

        shapiq_version = shapiq.__version__
    except ImportError:
        shapiq_version = None
    output = Path(args.output)
    stored = json.loads(output.read_text()) if output.exists() else {}
    result = {
        "settings": {
            "seeds": args.seeds,
            "n_rows": args.n_rows,
            "n_bg": args.n_bg,
            "factors": args.factors,
            "wide_seeds": args.wide_seeds,
            "wide_rows": args.wide_rows,
            "shapiq": shapiq_version,
            "python": platform.python_version(),
        },
        "records": stored.get("records", []),
        "wide_records": stored.get("wide_records", []),
        "timing": stored.get("timing", []),
    }
    if not args.no_small:
        result["records"] = small_records(args, shapiq_version)
        print_records(result["records"])
    if args.wide:
        result["wide_records"] = wide_records(args, shapiq_version)
        print_records(result["wide_records"])
    if args.timing:
        result["timing"] = timing_records(args, shapiq_version)
    if shapiq_version is None:
        print("shapiq is not importable: its approximators were skipped.")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
