"""Benchmark: variants of Leverage SHAP, the one that won and those that did not (issue 13, user guide).

What is measured
----------------
Relative RMSE against exact values (the problems and models of ``bench_accuracy.py``: 50
background rows, 8 explained rows, mean over ``--seeds``) of Leverage SHAP as the package runs it
and of variants at the same evaluations per row:

* ``leverage_cv``: the package's cross-fitted control variate (``algorithm="leverage_cv"``: boosted
  oblivious trees, 15 of depth 5 at rate 0.5, fitted on the other 4 of 5 folds of pairs, exact
  Shapley values of the surrogate), and three settings of it: ``cv depth 3``, ``cv 2 folds`` (two
  folds of 25 trees at rate 0.4, the setting before 2026-11-27's second change) and ``cv 30
  trees`` (rate 0.25);

* ``balanced``: within each size class t, the coalitions are consecutive windows of t players of
  keyed random orderings (each round of ⌊d/t⌋ windows holds every player at most once), instead of
  draws without replacement;
* ``crossfit halves``: an earlier cross-fitted control variate: an xgboost surrogate (50 trees, depth 3) fitted on
  the masks and values of one half of the pairs, its Shapley values exact by TreeSHAP on the masks,
  Leverage SHAP on the residual game with the other half; the halves swapped and averaged.

Rerun
-----
::

    python benchmarks/bench_leverage_variants.py --problems synthetic8 svr_diabetes10 breast_cancer30 correlated60

(about 25 minutes on 2 shared cores). Results: ``benchmarks/results/bench_leverage_variants.json``.

::

    python benchmarks/bench_leverage_variants.py --small-budgets

(about 10 minutes): at 3d-10d evaluations on d = 6-30 (friedman1 at d = 6, 8, 12, 16, 20; diabetes
with xgboost and with the SVR at d = 10; breast cancer at d = 30), 5 seeds, Leverage SHAP's and
KernelSHAP's sizes ("kernel"), each with the control variate ("leverage_cv", "kernel sizes cv"), and
the control variate's earlier floor of 30 sampled pairs.
Results: ``benchmarks/results/bench_leverage_variants_small.json``.

::

    python benchmarks/bench_leverage_variants.py --model-surrogate --budgets-per-feature 5 10

(about 25 minutes): ``leverage_cv`` with a surrogate of the model fitted on the masked inputs and
the outputs of every background row (:class:`ModelSurrogateAlgorithm`), per explained row and pooled
over the 8 rows, on one game of all rows. Results: ``benchmarks/results/bench_leverage_variants_model.json``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Callable

import numpy as np
import shap
import xgboost

import sklearn_shapq.algorithms._leverage as leverage_module
import sklearn_shapq.algorithms._leverage_control_variate as control_variate_module
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS, LeverageAlgorithm
from sklearn_shapq.algorithms._oblivious_boosting import BoostingSettings
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.games import CallableGame, InterventionalGame, make_model_function
from sklearn_shapq.samplers import keyed_uniforms, substream_keys

import bench_accuracy

DRAWN_CLASSES = leverage_module.class_coalitions


def windowed_classes(keys: np.ndarray, d: int, pairs: np.ndarray) -> np.ndarray:
    """The balanced variant of ``class_coalitions``: windows of t players of keyed random orderings."""
    blocks = []
    for t, n in enumerate(pairs, start=1):
        if n == 0:
            continue
        if n == leverage_module.class_capacities(d)[t - 1]:
            one_class = np.zeros_like(pairs)
            one_class[t - 1] = n
            blocks.append(DRAWN_CLASSES(keys, d, one_class))
            continue
        rows, per_round = keys.shape[0], d // t
        rounds = -(-n // per_round)
        draws = keyed_uniforms(substream_keys(keys, 5000 + t), np.arange(rounds * d)[None].repeat(rows, 0))
        orderings = np.argsort(draws.reshape(rows, rounds, d), axis=2)
        windows = orderings[:, :, : per_round * t].reshape(rows, rounds * per_round, t)[:, :n]
        masks = np.zeros((rows, n, d), dtype=bool)
        np.put_along_axis(masks, windows, True, axis=2)
        if 2 * t == d:  # class d/2 holds the coalitions with player 0
            flip = ~masks[:, :, 0]
            masks[flip] = ~masks[flip]
        blocks.append(masks)
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((keys.shape[0], 0, d), dtype=bool)


def plain(value: Callable, d: int, budget: int, seed: int, sampler: str = "leverage") -> np.ndarray:
    estimator = SHAPLEY_ALGORITHMS[sampler](budget, d, 0)
    keys = np.array([1000 + seed], dtype=np.uint64)
    return estimator.estimate(CallableGame(value, d), np.array([0]), keys).values[0, :, 0]


def control_variate(
    surrogate: BoostingSettings | None = None,
    folds: int | None = None,
    min_sampled_pairs: int | None = None,
    kernel_sizes: bool = False,
) -> Callable:
    """``leverage_cv`` as the package runs it, or with other surrogate settings, surrogate folds, fewest
    sampled pairs, or on KernelSHAP's sizes (those of ``algorithm="kernel"``)."""

    def run(value: Callable, d: int, budget: int, seed: int) -> np.ndarray:
        estimator = control_variate_module.LeverageControlVariateAlgorithm
        defaults = (
            control_variate_module.SURROGATE,
            control_variate_module.SURROGATE_FOLDS,
            control_variate_module.MIN_SAMPLED_PAIRS,
        )
        control_variate_module.SURROGATE = surrogate or defaults[0]
        control_variate_module.SURROGATE_FOLDS = folds or defaults[1]
        control_variate_module.MIN_SAMPLED_PAIRS = min_sampled_pairs or defaults[2]
        if kernel_sizes:
            estimator.size_weights = staticmethod(leverage_module.shapley_kernel_sizes)
        try:
            return plain(value, d, budget, seed, "leverage_cv")
        finally:
            (
                control_variate_module.SURROGATE,
                control_variate_module.SURROGATE_FOLDS,
                control_variate_module.MIN_SAMPLED_PAIRS,
            ) = defaults
            if kernel_sizes:
                del estimator.size_weights  # Leverage SHAP's again

    return run


def balanced(value: Callable, d: int, budget: int, seed: int) -> np.ndarray:
    leverage_module.class_coalitions = windowed_classes
    try:
        return plain(value, d, budget, seed)
    finally:
        leverage_module.class_coalitions = DRAWN_CLASSES


def crossfit(value: Callable, d: int, budget: int, seed: int) -> np.ndarray:
    half = budget // 2
    keys = (2 * seed + 1, 2 * seed + 2)
    corners = np.array([np.zeros(d, bool), np.ones(d, bool)])
    folds = []
    for key in keys:
        masks = LeverageAlgorithm(half, d, 0).coalitions(np.array([key], dtype=np.uint64))[0]
        folds.append((np.vstack([masks, corners]), np.concatenate([value(masks), value(corners)])))
    phi = np.zeros(d)
    for (masks, values), other_key in zip(folds, keys[::-1], strict=True):
        surrogate = xgboost.XGBRegressor(n_estimators=50, max_depth=3, learning_rate=0.3, n_jobs=1, random_state=0)
        surrogate.fit(masks.astype(float), values)
        explainer = shap.TreeExplainer(surrogate, data=np.zeros((1, d)), feature_perturbation="interventional")
        surrogate_phi = explainer.shap_values(np.ones((1, d)))[0]
        residual = CallableGame(lambda m, s=surrogate: value(m) - s.predict(m.astype(float)), d)
        estimator = LeverageAlgorithm(half, d, 0)
        residual_phi = estimator.estimate(residual, np.array([0]), np.array([other_key], dtype=np.uint64)).values
        phi += (surrogate_phi + residual_phi[0, :, 0]) / 2
    return phi


VARIANTS = {
    "leverage": plain,
    "leverage_cv": control_variate(),
    "cv depth 3": control_variate(BoostingSettings(n_trees=15, depth=3, learning_rate=0.5, l2=1.0)),
    "cv 2 folds": control_variate(BoostingSettings(n_trees=25, depth=5, learning_rate=0.4, l2=1.0), folds=2),
    "cv 30 trees": control_variate(BoostingSettings(n_trees=30, depth=5, learning_rate=0.25, l2=1.0)),
    "balanced": balanced,
    "crossfit halves": crossfit,
}


class ModelSurrogateAlgorithm(control_variate_module.LeverageControlVariateAlgorithm):
    """``leverage_cv`` with a surrogate of the *model* instead of the game (``--model-surrogate``).

    Fold g's surrogate is xgboost (200 trees of depth 4, rate 0.1) fitted to the model's outputs at
    the masked inputs (x_S, z_rest) of every background row z and every coalition outside fold g:
    of one explained row (``pooled=False``) or of all the game's rows (``pooled=True``), at most
    60,000 of them; its interventional game on the background and that game's exact Shapley values
    (TreeSHAP) replace the coalition surrogate's, with the same cross-fitting, finite-population
    correction and regression. The outputs are those the game's evaluations computed and averaged;
    this research variant asks the model for them again (not counted, as the package would keep them).
    """

    pooled = False

    def estimate(self, game, games, keys):  # noqa: ANN001, ANN201
        self._game_rows = (game, games)
        return super().estimate(game, games, keys)

    def _surrogates(self, masks, values, total, design, leave_out, backend):  # noqa: ANN001, ANN202, ARG002
        game, games = self._game_rows
        x, background = game.x[games], game.background
        rows, n_coalitions, d = masks.shape
        points = np.where(masks[:, :, None, :], x[:, None, None, :], background[None, None, :, :])
        outputs = game.model_fn(points.reshape(-1, d))[:, 0].reshape(rows, n_coalitions, -1)
        group = self._jackknife_groups().repeat(2)
        n_folds = leave_out.shape[1]
        fitted, fold_phi = np.empty((n_folds, rows, n_coalitions)), np.empty((n_folds, rows, d))
        rng = np.random.default_rng(0)
        for fold in range(n_folds):
            for part in [slice(None)] if self.pooled else [slice(r, r + 1) for r in range(rows)]:
                inputs = points[part][:, group != fold].reshape(-1, d)
                targets = outputs[part][:, group != fold].reshape(-1)
                if len(targets) > 60_000:
                    kept = rng.choice(len(targets), 60_000, replace=False)
                    inputs, targets = inputs[kept], targets[kept]
                surrogate = xgboost.XGBRegressor(n_estimators=200, max_depth=4, learning_rate=0.1, n_jobs=2)
                surrogate.fit(inputs, targets)
                predicted = surrogate.predict(points[part].reshape(-1, d)).reshape(-1, n_coalitions, len(background))
                fitted[fold, part] = predicted.mean(axis=2)
                tree_shap = shap.TreeExplainer(surrogate, background, feature_perturbation="interventional")
                fold_phi[fold, part] = tree_shap.shap_values(x[part])
        odd_fit = control_variate_module._odd_part(fitted.transpose(1, 2, 0)[:, :, None, :], np)  # (B, 2P, 1, G)
        mean_fold = odd_fit.mean(axis=3)
        fold_index = np.broadcast_to(np.maximum(group, 0)[None, :, None, None], (rows, n_coalitions, 1, 1))
        own_fold = np.where(
            group[None, :, None] >= 0, np.take_along_axis(odd_fit, fold_index, axis=3)[..., 0], mean_fold
        )
        return own_fold, mean_fold, fold_phi.transpose(1, 0, 2)[..., None]


class PooledModelSurrogateAlgorithm(ModelSurrogateAlgorithm):
    """:class:`ModelSurrogateAlgorithm` with one surrogate per fold for all the game's rows."""

    pooled = True


MODEL_SURROGATE_VARIANTS = {
    "leverage": LeverageAlgorithm,
    "leverage_cv": control_variate_module.LeverageControlVariateAlgorithm,
    "model surrogate per row": ModelSurrogateAlgorithm,
    "model surrogate pooled rows": PooledModelSurrogateAlgorithm,
}
"""``--model-surrogate``: estimators run on one game of all explained rows (so that the pooled one can pool)."""


def model_surrogate_errors(name: str, budgets_per_feature: list[int], seeds: int) -> list[dict]:
    """Relative RMSE of :data:`MODEL_SURROGATE_VARIANTS` on one problem, at each budget."""
    model, background, rows, truth = bench_accuracy.problem_model(name)
    scale, d = float(np.sqrt(np.mean(truth**2))), rows.shape[1]
    game = InterventionalGame(make_model_function(model, "predict", CpuBackend()), background, rows)
    games = np.arange(rows.shape[0])
    lines = []
    for per_feature in budgets_per_feature:
        line = {"problem": name, "d": d, "budget": per_feature * d}
        for variant, estimator in MODEL_SURROGATE_VARIANTS.items():
            errors = []
            for seed in range(seeds):
                keys = (1000 * (seed + 1) + games).astype(np.uint64)
                values = estimator(variant, per_feature * d, d, 0).estimate(game, games, keys).values[..., 0]
                errors.append(np.sqrt(np.mean((values - truth) ** 2)) / scale)
            line[variant] = float(np.mean(errors))
        print(
            f"{name:16s} B={line['budget']:5d}  "
            + "  ".join(
                f"{v} {line[v]:.4f} ({line[v] / line['leverage_cv']:.2f}x cv)" for v in MODEL_SURROGATE_VARIANTS
            ),
            flush=True,
        )
        lines.append(line)
    return lines


SMALL_BUDGET_VARIANTS = {
    "leverage": plain,
    "kernel": lambda value, d, budget, seed: plain(value, d, budget, seed, "kernel"),
    "leverage_cv": control_variate(),
    "kernel sizes cv": control_variate(kernel_sizes=True),
    "leverage_cv from 30 pairs": control_variate(min_sampled_pairs=30),
}
"""``--small-budgets``: the two size designs, with and without the control variate, and its earlier floor."""

SMALL_BUDGET_PROBLEMS = [
    "synthetic6",
    "synthetic8",
    "diabetes10",
    "svr_diabetes10",
    "synthetic12",
    "synthetic16",
    "synthetic20",
    "breast_cancer30",
]

MODEL_PROBLEMS = ["synthetic8", "svr_diabetes10", "breast_cancer30", "correlated60"]
"""``--model-surrogate``'s problems."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", nargs="*", default=["synthetic8", "svr_diabetes10", "breast_cancer30"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budgets-per-feature", nargs="*", type=int, default=[5, 10, 20])
    parser.add_argument(
        "--small-budgets",
        action="store_true",
        help="the size designs at 3d-10d on d = 6-30, 5 seeds (bench_leverage_variants_small.json)",
    )
    parser.add_argument(
        "--model-surrogate",
        action="store_true",
        help="surrogates of the model (per row, pooled over rows) at 5d-10d (bench_leverage_variants_model.json)",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.model_surrogate:
        args.problems = args.problems if args.problems != parser.get_default("problems") else MODEL_PROBLEMS
        results = [
            line
            for name in args.problems
            for line in model_surrogate_errors(name, args.budgets_per_feature, args.seeds)
        ]
        path = bench_accuracy.RESULTS / "bench_leverage_variants_model.json"
        path.write_text(json.dumps({"settings": vars(args), "results": results}, indent=2))
        print(f"wrote {path}")
        return
    variants = VARIANTS
    if args.small_budgets:
        variants, args.problems, args.seeds = SMALL_BUDGET_VARIANTS, SMALL_BUDGET_PROBLEMS, 5
        args.budgets_per_feature = [3, 4, 5, 6, 8, 10]
    results = []
    for name in args.problems:
        model, background, rows, truth = bench_accuracy.problem_model(name)
        scale = float(np.sqrt(np.mean(truth**2)))
        function = make_model_function(model, "predict", CpuBackend())
        d = rows.shape[1]
        games = [InterventionalGame(function, background, rows[r : r + 1]) for r in range(rows.shape[0])]
        values = [lambda m, g=g: g(m, np.zeros(len(m), np.intp))[:, 0] for g in games]
        for per_feature in args.budgets_per_feature:
            budget = per_feature * d
            if budget >= 2**d or budget < LeverageAlgorithm.minimum_evals(d):
                continue
            line = {"problem": name, "d": d, "budget": budget}
            for variant, run in variants.items():
                errors = [
                    np.sqrt(np.mean((np.array([run(v, d, per_feature * d, s) for v in values]) - truth) ** 2)) / scale
                    for s in range(args.seeds)
                ]
                line[variant] = float(np.mean(errors))
            print(
                f"{name:16s} B={line['budget']:5d}  "
                + "  ".join(f"{v} {line[v]:.4f} ({line[v] / line['leverage']:.2f}x)" for v in variants),
                flush=True,
            )
            results.append(line)
    path = bench_accuracy.RESULTS / f"bench_leverage_variants{'_small' if args.small_budgets else ''}.json"
    path.write_text(json.dumps({"settings": vars(args), "results": results}, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
