"""Benchmark: a raw table (strings and numbers) encoded by its Pipeline, exact paths against sampling.

What is measured
----------------
A generated table of ``--n-rows`` (3,000) rows: 4 string columns (3 to 6 levels) and 8 normal numeric
columns; a label drawn from a logistic model with interactions. The model: a ``ColumnTransformer``
(``OneHotEncoder`` on the strings, ``StandardScaler`` on the numbers) then a
``HistGradientBoostingClassifier`` (its probability) or a ``LogisticRegression`` (its margin); and a
``HistGradientBoostingClassifier`` alone on the table with its strings as pandas categories (its own
ordinal encoding and categorical splits, ``categorical_features="from_dtype"``). For each,
``PermutationShapExplainer(model, output=...)`` on ``--n-bg`` (100) background rows and
``--n-explain`` (100) explained rows:

* ``"auto"``: the tree or linear path through the encoders (each one-hot column its string column's
  player; the categorical splits on the codes), exact, no model calls but the check;
* ``"leverage_cv"`` at its default budget (500 evaluations per row): what ``"auto"`` sampled on raw
  tables before the encoders were traced;

median wall seconds over ``--repeats`` (3) after a warm-up, and the relative RMSE of the sampled values
against the exact ones. Ours runs on all numba threads (2 here).

Rerun
-----
::

    python benchmarks/bench_raw_table.py            # about 7 minutes on 2 cores

Results go to ``benchmarks/results/bench_raw_table.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

try:
    from sklearn_shapq import PermutationShapExplainer
except ImportError:  # a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sklearn_shapq import PermutationShapExplainer

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-rows", type=int, default=3000)
    parser.add_argument("--n-bg", type=int, default=100)
    parser.add_argument("--n-explain", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args()


def raw_table(n_rows: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The generated table and its labels."""
    rng = np.random.default_rng(0)
    strings = {f"c{j}": rng.choice(list("abcdef")[: 3 + j], n_rows) for j in range(4)}
    numbers = {f"x{j}": rng.normal(size=n_rows) for j in range(8)}
    table = pd.DataFrame({**strings, **numbers})
    logit = (
        1.5 * (table.c0 == "a")
        - (table.c2 == "b")
        + table.x0 * table.x1
        + np.sin(2 * table.x2)
        + 0.5 * table.x3 * (table.c1 == "c")
    )
    return table, rng.random(n_rows) < 1 / (1 + np.exp(-logit))


def main() -> None:
    args = parse_args()
    table, labels = raw_table(args.n_rows)
    strings = [c for c in table.columns if c.startswith("c")]
    numbers = [c for c in table.columns if c.startswith("x")]
    categories = table.astype(dict.fromkeys(strings, "category"))
    results = []
    for name, model, output, data in [
        (
            "histogram gradient boosting, probability",
            HistGradientBoostingClassifier(random_state=0),
            "probability",
            table,
        ),
        ("logistic regression, margin", LogisticRegression(max_iter=1000), "margin", table),
        (
            "histogram gradient boosting on categories, probability",
            HistGradientBoostingClassifier(random_state=0),
            "probability",
            categories,
        ),
    ]:
        if data is table:
            encoder = ColumnTransformer(
                [("strings", OneHotEncoder(handle_unknown="ignore"), strings), ("numbers", StandardScaler(), numbers)]
            )
            model = make_pipeline(encoder, model)
        model.fit(data, labels)
        background, rows = data.iloc[: args.n_bg], data.iloc[args.n_bg : args.n_bg + args.n_explain]
        line: dict = {"model": name, "d": data.shape[1]}
        values = {}
        for algorithm in ("auto", "leverage_cv"):
            explainer = PermutationShapExplainer(
                model, output=output, algorithm=algorithm, random_state=0, progress=False
            ).fit(background)
            explainer.explain(rows.iloc[:2])  # numba and the model warmed up
            seconds = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                values[algorithm] = explainer.explain(rows).values
                seconds.append(time.perf_counter() - start)
            line[algorithm] = {"algorithm_": explainer.algorithm_, "seconds": float(np.median(seconds))}
        exact = values["auto"]
        error = np.sqrt(np.mean((values["leverage_cv"] - exact) ** 2)) / np.sqrt(np.mean(exact**2))
        line["leverage_cv"]["rel_rmse_vs_auto"] = float(error)
        line["leverage_cv_over_auto_seconds"] = line["leverage_cv"]["seconds"] / line["auto"]["seconds"]
        results.append(line)
        print(
            f"{name:55s} auto ({line['auto']['algorithm_']}) {line['auto']['seconds']:.2f} s, leverage_cv "
            f"{line['leverage_cv']['seconds']:.2f} s ({line['leverage_cv_over_auto_seconds']:.0f}x), its error "
            f"{error:.1e}",
            flush=True,
        )
    versions = {"python": platform.python_version(), "scikit-learn": sklearn.__version__, "numpy": np.__version__}
    output_path = RESULTS / "bench_raw_table.json"
    output_path.write_text(json.dumps({"settings": vars(args), "versions": versions, "results": results}, indent=1))
    print(f"wrote {output_path}")


if __name__ == "__main__":
    main()
