"""Plots of the benchmark results (``benchmarks/results/*.json``), one function per benchmark.

Each function draws one figure from a benchmark's results (by default the committed JSON file).
The benchmark scripts call them to save a PNG beside their JSON; the documentation's benchmarks
page calls them through matplotlib's ``plot`` directive, so the site shows what the JSON files
hold. Nothing is recomputed. ``python benchmarks/plot_results.py`` redraws every PNG.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

# matplotlib's plot directive runs this file with exec (no ``__file__``) and sys.argv = [its path]
RESULTS = Path(globals().get("__file__", sys.argv[0])).resolve().parent / "results"
PEERS = ("shap", "shapiq")
EXACT = 1e-10
"""Relative errors below this are rounding (an estimator exact at that budget): not drawn on log axes."""


def _load(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


def _styles(labels: list[str]) -> dict[str, dict]:
    """One colour per label across every panel; solid lines for this package, dashed for the peers."""
    colours = plt.get_cmap("tab10").colors + plt.get_cmap("Dark2").colors
    styles = {}
    for index, label in enumerate(labels):
        peer = label.split()[0] in PEERS
        styles[label] = {
            "color": colours[index % len(colours)],
            "linestyle": "--" if peer else "-",
            "marker": "s" if peer else "o",
            "markersize": 4,
        }
    return styles


def _log_axes(ax: plt.Axes, x_ticks: list[int], y: bool = True) -> None:
    """Log axes labelled with plain numbers: the budgets on x, 1-2-5 steps on y."""
    ax.set_xscale("log")
    ax.set_xticks(x_ticks, [str(tick) for tick in x_ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    if y:
        ax.set_yscale("log")
        low, high = ax.get_ylim()
        steps = (1.0, 2.0, 5.0) if high / low < 100 else (1.0,)  # 1-2-5 labels within two decades
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=steps))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def _legend_below(fig: plt.Figure, axes: list[plt.Axes], columns: int = 4) -> None:
    """One legend for all panels, under them."""
    handles, labels = {}, []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in handles:
                handles[label] = handle
                labels.append(label)
    rows = -(-len(labels) // columns)
    fig.tight_layout(rect=(0, 0.06 * rows, 1, 1))
    fig.legend(
        [handles[label] for label in labels], labels, loc="lower center", ncol=columns, fontsize=8, frameon=False
    )


def accuracy(results: list[dict] | None = None) -> plt.Figure:
    """Relative RMSE against the exact values versus evaluations per row (``bench_accuracy.py``)."""
    results = _load("bench_accuracy.json")["results"] if results is None else results
    problems = list(dict.fromkeys(row["problem"] for row in results))
    methods = list(
        dict.fromkeys(
            key for row in results for key, value in row.items() if isinstance(value, dict) and "rel_rmse" in value
        )
    )
    styles = _styles(methods)
    columns = min(3, len(problems))
    n_rows = -(-len(problems) // columns)
    fig, axes = plt.subplots(n_rows, columns, figsize=(4.2 * columns, 3.6 * n_rows + 0.9), squeeze=False)
    for ax, problem in zip(axes.flat, problems, strict=False):
        rows = [row for row in results if row["problem"] == problem]
        for method in methods:
            cells = [row for row in rows if method in row and row[method]["rel_rmse"] >= EXACT]
            budgets, errors = [r["budget"] for r in cells], [r[method]["rel_rmse"] for r in cells]
            ax.plot(budgets, errors, label=method, **styles[method])
        _log_axes(ax, [row["budget"] for row in rows])
        ax.set_title(f"{problem} (d = {rows[0]['d']})", fontsize=10)
        ax.set_xlabel("evaluations per row")
    for ax in axes.flat[len(problems) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("relative RMSE vs exact values")
    _legend_below(fig, list(axes.flat[: len(problems)]))
    return fig


def convergence(results: dict | None = None) -> plt.Figure:
    """RMSE of every permutation sampler and shap's versus budget (``bench_convergence.py``)."""
    results = _load("bench_convergence.json")["results"] if results is None else results
    methods = list(dict.fromkeys(row["method"] for result in results.values() for row in result["rows"]))
    labels = {method: "shap Permutation" if method == "shap" else method for method in methods}
    styles = _styles(list(labels.values()))
    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 4.2), squeeze=False)
    for ax, (problem, result) in zip(axes[0], results.items(), strict=True):
        rows = result["rows"]
        for method, label in labels.items():
            cells = [row for row in rows if row["method"] == method]
            if cells:
                ax.plot([r["evals_used"] for r in cells], [r["rmse_mean"] for r in cells], label=label, **styles[label])
        _log_axes(ax, sorted({row["evals_used"] for row in rows if row["method"] == methods[0]}))
        ax.set_title(f"{problem} (d = {rows[0]['d']})")
        ax.set_xlabel("evaluations per row")
    axes[0, 0].set_ylabel("RMSE vs exact TreeSHAP")
    _legend_below(fig, list(axes[0]), columns=5)
    return fig


def product_kernel() -> plt.Figure:
    """Time per explained row of exact product-kernel SHAP, ours and shapiq's (``bench_product_kernel.py``)."""
    cases = _load("bench_product_kernel.json")["cases"]
    d = [case["problem"]["d"] for case in cases]
    picks = {
        "ours, auto": lambda case: case["shapiq"]["ours"]["auto"]["wall_s_per_row"],
        "ours, quadrature": lambda case: case["shapiq"]["ours"]["quadrature"]["wall_s_per_row"],
        "shapiq ProductKernelExplainer": lambda case: case["shapiq"]["shapiq"]["wall_s_per_row"],
    }
    styles = _styles(list(picks))
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for label, pick in picks.items():
        ax.plot(d, [pick(case) for case in cases], label=label, **styles[label])
    _log_axes(ax, d, y=False)
    ax.set_yscale("log")
    ax.set_xlabel("d (features)")
    ax.set_ylabel("seconds per explained row")
    ax.set_title("exact Shapley values of an RBF SVR (about 500 support vectors)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def topk(k: int = 5) -> plt.Figure:
    """Binary precision (the whole top k right) versus budget, per game (``bench_topk.py``)."""
    rows = [row for row in _load("bench_topk.json")["fixed_budget"] if row["k"] == k]
    games = list(dict.fromkeys(row["game"] for row in rows))
    methods = list(dict.fromkeys(row["method"] for row in rows))
    styles = _styles(methods)
    columns = 3
    n_rows = -(-len(games) // columns)
    fig, axes = plt.subplots(n_rows, columns, figsize=(12.6, 3.4 * n_rows + 0.6), squeeze=False)
    for ax, game in zip(axes.flat, games, strict=False):
        for method in methods:
            cells = [row for row in rows if row["game"] == game and row["method"] == method]
            ax.plot([r["budget"] for r in cells], [r["binary_mean"] for r in cells], label=method, **styles[method])
        _log_axes(ax, [100, 300, 1000, 3000], y=False)
        ax.set_title(f"{game}, k = {k}", fontsize=10)
        ax.set_ylim(0, 1.02)
    for ax in axes[-1]:
        ax.set_xlabel("evaluations")
    for ax in axes[:, 0]:
        ax.set_ylabel("binary precision")
    _legend_below(fig, list(axes.flat), columns=len(methods))
    return fig


def main() -> None:
    """Redraw every benchmark's PNG beside its committed JSON."""
    for name, draw in {
        "accuracy": accuracy,
        "convergence": convergence,
        "product_kernel": product_kernel,
        "topk": topk,
    }.items():
        path = RESULTS / f"bench_{name}.png"
        draw().savefig(path, dpi=110)
        plt.close("all")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
