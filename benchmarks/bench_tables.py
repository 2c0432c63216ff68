"""Benchmark: explaining raw tables (strings, categories, missing values) against the model alone.

What is measured
----------------
A generated census-like table (``sklearn_shapq.datasets.make_census_table``, ``--rows`` rows,
default 2000): ``age`` (int), ``workclass`` (strings, 10% missing), ``education`` (ordered
category), ``occupation`` (strings), ``hours`` (float, 15% NaN), ``married`` (bool), ``capital``
(float). Two models take it raw:

* ``pipeline``: ``ColumnTransformer(OneHotEncoder on the strings and the category,
  SimpleImputer + StandardScaler on the numbers) + LogisticRegression``;
* ``hgb``: ``HistGradientBoostingClassifier(categorical_features="from_dtype")`` on the table
  with the strings as categories.

For each, ``PermutationShapExplainer(model, algorithm="exact", max_evals=B, random_state=0,
progress=False).fit(table[:100]).explain(table[100:100 + R])`` (B = ``--max-evals``, 500; R =
``--explain``, 20 rows; "exact": the enumeration of the 2^7 coalitions by model calls, which "auto"
took here before it read both models' structure) is timed against **the model alone**: the same
model scoring, in one call, the very rows the explanation sent it (the DataFrames it received
during one explain, recorded and concatenated beforehand). The ratio explain / model alone is the
overhead of the DataFrame path (coding cells, building masked rows, decoding them to DataFrames,
averaging); target <= 1.3.
For reference, the model is also timed on as many rows repeated from the background
(``model_on_background_rows_s_median``): on this machine a model's time on masked rows and on
repeated background rows differs by up to ±25 % from run to run. Medians of ``--repeats`` (7)
interleaved repeats after a warm-up.

Peer: shap's ``PermutationExplainer`` on the same pipeline and table, in the same process, is
tried once; it fails on string columns (its masker subtracts cells), which is reported.

Rerun
-----
::

    python benchmarks/bench_tables.py            # about a minute on 2 shared cores
    python benchmarks/bench_tables.py --quick    # 500-row table, 5 rows explained, 3 repeats

Results go to ``benchmarks/results/bench_tables.json`` (``bench_tables_quick.json`` with --quick).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shap
import sklearn
from sklearn.ensemble import HistGradientBoostingClassifier

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.datasets import make_census_pipeline, make_census_table
from sklearn_shapq.games import TableCodec

RESULTS = Path(__file__).parent / "results"


def models(table: pd.DataFrame, y: np.ndarray) -> dict[str, tuple[Any, pd.DataFrame]]:
    """Each model, fitted, with the table as it takes it."""
    categorical = table.astype({name: "category" for name in ("workclass", "occupation")})
    hgb = HistGradientBoostingClassifier(categorical_features="from_dtype", max_iter=50, random_state=0)
    return {"pipeline": (make_census_pipeline(table, y), table), "hgb": (hgb.fit(categorical, y), categorical)}


def time_model(name: str, model: Any, table: pd.DataFrame, args: argparse.Namespace) -> dict:
    """Median explain time against the model scoring as many rows at once."""
    background, rows = table.iloc[:100], table.iloc[100 : 100 + args.explain]
    explainer = PermutationShapExplainer(
        model, algorithm="exact", max_evals=args.max_evals, random_state=0, progress=False
    )
    explainer.fit(background)
    explanation = explainer.explain(rows.iloc[:2])  # warm-up (numba cache loading)
    received = []
    decode = TableCodec.decode
    TableCodec.decode = lambda codec, codes: received.append(decode(codec, codes)) or received[-1]
    try:
        n_model_rows = explainer.explain(rows).diagnostics["n_model_rows"]
    finally:
        TableCodec.decode = decode
    alone_input = pd.concat(received, ignore_index=True)
    assert len(alone_input) == n_model_rows + len(rows)  # the masked rows and the explained rows' v(N)
    background_input = background.iloc[np.arange(len(alone_input)) % len(background)].reset_index(drop=True)
    explain_s, alone_s, background_s = [], [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        explanation = explainer.explain(rows)
        explain_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.decision_function(alone_input)
        alone_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.decision_function(background_input)
        background_s.append(time.perf_counter() - start)
    total = explanation.values.sum(1) + explanation.base_values
    efficiency = float(np.abs(total - model.decision_function(rows)).max())
    explain_median, alone_median = statistics.median(explain_s), statistics.median(alone_s)
    out = {
        "model": name,
        "n_explained": args.explain,
        "max_evals": args.max_evals,
        "n_model_rows": int(n_model_rows),
        "explain_s_median": explain_median,
        "model_alone_s_median": alone_median,
        "model_on_background_rows_s_median": statistics.median(background_s),
        "overhead": explain_median / alone_median,
        "overhead_per_repeat": [e / a for e, a in zip(explain_s, alone_s, strict=True)],
        "efficiency_max_error": efficiency,
        "target_overhead_max": 1.3,
    }
    out["target_met"] = out["overhead"] <= 1.3
    print(
        f"{name:9s} explain {explain_median:.3f} s, model alone on the same {len(alone_input)} rows "
        f"{alone_median:.3f} s (on as many background rows {statistics.median(background_s):.3f} s): "
        f"overhead {out['overhead']:.2f} (target <= 1.3); efficiency error {efficiency:.1e}",
        flush=True,
    )
    return out


def try_shap(model: Any, table: pd.DataFrame) -> dict:
    """shap's PermutationExplainer on the same raw table (one row)."""
    try:
        explainer = shap.explainers.PermutationExplainer(model.decision_function, table.iloc[:100])
        explainer(table.iloc[100:101])
    except Exception as exc:  # shap's failure is what is reported
        message = f"{type(exc).__name__}: {exc}"
        print(f"shap PermutationExplainer on the raw table: fails ({message})", flush=True)
        return {"works": False, "error": message}
    print("shap PermutationExplainer on the raw table: works", flush=True)
    return {"works": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="500-row table, 5 rows explained, 3 repeats")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--explain", type=int, default=20)
    parser.add_argument("--max-evals", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if args.quick:
        args.rows, args.explain, args.repeats = 500, 5, 3
    table, y = make_census_table(args.rows)
    out: dict[str, Any] = {
        "environment": {
            "python": sys.version.split()[0],
            "pandas": pd.__version__,
            "sklearn": sklearn.__version__,
            "shap": shap.__version__,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "load_average_at_start": os.getloadavg(),
        },
        "settings": vars(args),
        "results": [time_model(name, model, data, args) for name, (model, data) in models(table, y).items()],
    }
    out["shap_permutation_explainer"] = try_shap(models(table, y)["pipeline"][0], table)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / ("bench_tables_quick.json" if args.quick else "bench_tables.json")
    path.write_text(json.dumps(out, indent=2, default=str))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
