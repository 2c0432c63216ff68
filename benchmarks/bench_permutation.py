"""Benchmark: ``PermutationShapExplainer`` against ``shap.PermutationExplainer`` at equal budgets.

What is measured
----------------
Everything runs in one process on shap's reference setup (``/work/shared/spec/ecosystem_contract.md``
section 4 and Appendix A): 16 AR(1) Gaussian features (rho = 0.5), 5,000 training rows, a nonlinear
target with interactions, ``XGBRegressor(n_estimators=200, max_depth=6, learning_rate=0.05,
random_state=0, n_jobs=1)``, 100 background rows drawn with ``shap.utils.sample(random_state=0)``, and
100 explained rows. xgboost is pinned to one thread (``n_jobs=1``, so the booster's ``nthread`` is 1),
as in the reference, so that model time is comparable and less exposed to machine noise.

The ground truth is ``shap.TreeExplainer(model, data=bg, feature_perturbation="interventional")``. It is
the exact value of the game that both permutation explainers estimate.

For each budget ``max_evals`` (value-function evaluations per explained row; defaults 33, 160, 500):

* **shap**: ``shap.PermutationExplainer(counting(model.predict), shap.maskers.Independent(bg,
  max_samples=100), seed=s)(X, max_evals=budget)``. It walks ``max_evals // (2d + 1)`` permutations
  per row, each forward and backward, and v(empty) and v(N) are re-evaluated for every permutation.
* **ours**: ``PermutationShapExplainer(model, algorithm="antithetic", max_evals=budget,
  background_size=None, random_state=s).fit(bg).explain(X)``. The xgboost model is passed as is, so
  it runs through ``booster.inplace_predict``. It walks ``(budget - 2) // (2 (d - 1))`` antithetic
  pairs per row, and v(empty) and v(N) are cached.

Because the two budget rules round differently, the evaluations actually used per row are
reported as well: 33 gives 33 (shap) vs 32 (ours), 160 gives 132 vs 152, and 500 gives 495 vs 482.

Recorded for each method and budget:

* wall time (``time.perf_counter``) and CPU time (``time.process_time``, all threads of the
  process), as the median over ``--repeats`` runs with seed 0. The runs of ours and shap are
  interleaved so that machine noise hits both alike;
* the rows and calls the model received, and for ours the explanation's ``diagnostics``
  (``n_evals`` per row, ``n_model_rows``, ``n_model_calls``);
* RMSE and relative RMSE (RMSE / RMS of the reference values) against the ground truth, and the
  additivity error ``max |sum(values) + base - f(x)|``;
* relative RMSE over ``--seeds`` seeds (0, 1, ...), as mean and standard deviation. One run's RMSE
  is noisy, so this is what "equal accuracy within noise" is judged on.

Pure model time: ``booster.inplace_predict`` alone, on the very rows ours sent to the model. Those
rows are captured in an untimed instrumented run of ours, whose model function records its calls
(``recorded_ours``: the same game, batches, rows and control). They are then timed (a) in
ours' own batches and (b) in one single call on all of them, interleaved with the timed runs of
ours. The overhead ratio is ours' median wall time divided by the median of (b), the model alone
predicting every masked row ours needed at once; the ratio against (a) and on CPU time are
reported too, as is the model time measured inside the instrumented run. (c) The in-run overhead
ratio pairs the two within one run, so that the machine's speed, which drifts by 10-20% between
runs on a shared machine, cancels: each repeat also runs ours recording its calls (inputs not
kept) and divides its wall time by the time those calls took; the median of the repeats' ratios is
reported.

With ``--classifier`` the model is an ``XGBClassifier`` with the same parameters, fitted to the target above its
median, and the explained output is its probability of 1 (``output="probability"`` for ours,
``predict_proba(X)[:, 1]`` for shap). The truth then enumerates all 2^d coalitions of each row through the trees
and the sigmoid (``enumerated_probability_values``, checked against ``predict_proba`` on random hybrid rows first):
shap's ``TreeExplainer(model_output="probability")`` is not the interventional values of the probability. Past 16
features ``--sampler auto`` runs ``algorithm="auto"`` itself, which samples the probability less its top players'
control variate; the in-run ratio (c) includes the control's tables.

Warm-up calls (numba JIT compilation or cache loading for ours, numba JIT for shap's first call)
are made before any timing and are reported separately.

Targets
-------
* ours / shap wall-time ratio <= 0.8 at every budget;
* relative RMSE of ours <= shap's, within the seed-to-seed noise;
* overhead ratio (ours wall / the model's wall time predicting the same rows in one call) <= 1.1.

Rerun
-----
::

    python benchmarks/bench_permutation.py              # full run (about 5-10 minutes on 2 cores)
    python benchmarks/bench_permutation.py --quick      # smoke run (10 rows, 5 repeats, 2 seeds)
    python benchmarks/bench_permutation.py --n-explain 100 --repeats 5 --seeds 5 \\
        --budgets 33 160 500 --output benchmarks/results/bench_permutation.json

Options: ``--n-explain`` (explained rows), ``--repeats`` (timing repeats), ``--seeds`` (seeds for the
RMSE spread), ``--budgets``, ``--quick``, ``--sampler`` (ours; default "antithetic", the walk the
reference compares; ``--sampler auto`` times what the default samples, Leverage SHAP at d = 16 and
these budgets (the default itself reads an xgboost model's trees: exact values, no sampling), with
results in ``bench_permutation[_quick]_auto.json``), ``--profile`` (cProfile one explain call of ours at the
largest budget and store the top entries), ``--classifier`` (above), and ``--output`` (default
``benchmarks/results/bench_permutation[_dD][_classifier][_quick][_SAMPLER].json``: ``_dD`` for a ``--d``
other than the reference's 16, ``_classifier`` with ``--classifier``, ``_quick`` with ``--quick``,
``_SAMPLER`` for a sampler other than "antithetic").
Every explainer runs with ``progress=False``.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import functools
import io
import json
import os
import platform
import pstats
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np
import shap
import sklearn
import xgboost

try:
    from sklearn_shapq.explainers import PermutationShapExplainer
except ImportError:  # a checkout that is not installed: python benchmarks/bench_permutation.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sklearn_shapq.explainers import PermutationShapExplainer
from sklearn_shapq.backends import linked_tree_table, tree_predict
from sklearn_shapq.explainers import _permutation
from sklearn_shapq.explainers._auto_algorithm import resolve_algorithm
from sklearn_shapq.explainers._exact_paths import LINKED_MAX_PLAYERS
from sklearn_shapq.explainers._tree_models import extract_trees
from sklearn_shapq.games import shapley_from_table

REFERENCE_D = 16  # features of the reference problem; another --d names its results file _dD
N_REFERENCE_EXPLAIN = 100  # rows drawn for explanation in the reference script (fixes the data stream)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--d", type=int, default=REFERENCE_D, help="number of features (reference: 16)")
    p.add_argument("--n-train", type=int, default=5000)
    p.add_argument("--n-bg", type=int, default=100)
    p.add_argument("--n-explain", type=int, default=100, help="explained rows (default 100)")
    p.add_argument("--repeats", type=int, default=5, help="timing repeats per method and budget (median)")
    p.add_argument("--seeds", type=int, default=5, help="seeds for the RMSE mean/std (seed 0 is the timed run)")
    p.add_argument("--budgets", type=int, nargs="+", default=[33, 160, 500], help="max_evals per row")
    p.add_argument("--quick", action="store_true", help="fast smoke run: 10 rows, 5 repeats, 2 seeds")
    p.add_argument("--n-jobs", type=int, default=2, help="model-call threads of the threaded variant of ours")
    p.add_argument(
        "--sampler",
        default="antithetic",
        help="our sampler (antithetic: the reference's permutation walk; or auto, leverage, ...)",
    )
    p.add_argument(
        "--classifier",
        action="store_true",
        help="explain an XGBClassifier's probability (the target above its median) instead of the regressor",
    )
    p.add_argument("--profile", action="store_true", help="cProfile one explain call of ours (largest budget)")
    p.add_argument(
        "--output",
        default=None,
        help="JSON output path (default benchmarks/results/bench_permutation[_dD][_classifier][_quick][_SAMPLER].json)",
    )
    args = p.parse_args()
    if args.quick:
        args.n_explain, args.repeats, args.seeds = min(args.n_explain, 10), 5, 2
    name = (
        "bench_permutation"
        + ("" if args.d == REFERENCE_D else f"_d{args.d}")
        + ("_classifier" if args.classifier else "")
        + ("_quick" if args.quick else "")
        + ("" if args.sampler == "antithetic" else f"_{args.sampler}")
    )
    name += ".json"
    args.output = args.output or str(Path(__file__).resolve().parent / "results" / name)
    return args


# --------------------------------------------------------------------------------------------------
# data, model and ground truth (shap_bench.py, Appendix A)


def make_problem(args: argparse.Namespace):
    d = args.d
    n_pool = max(N_REFERENCE_EXPLAIN, args.n_explain)
    rng = np.random.default_rng(0)
    cov = 0.5 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    X = rng.multivariate_normal(np.zeros(d), cov, size=args.n_train + n_pool)
    beta = rng.normal(size=d)
    y = (
        X @ beta
        + 2 * X[:, 0] * X[:, 1]
        + np.sin(2 * X[:, 2]) * X[:, 3]
        + (X[:, 4] > 0) * X[:, 5] ** 2
        + 0.5 * X[:, 6] * X[:, 7] * X[:, 8]
        + rng.normal(scale=0.3, size=len(X))
    )
    Xtr, ytr = X[: args.n_train], y[: args.n_train]
    Xex = X[args.n_train : args.n_train + args.n_explain]
    params = {"n_estimators": 200, "max_depth": 6, "learning_rate": 0.05, "random_state": 0, "n_jobs": 1}
    if args.classifier:
        model = xgboost.XGBClassifier(**params).fit(Xtr, ytr > np.median(ytr))
    else:
        model = xgboost.XGBRegressor(**params).fit(Xtr, ytr)
    bg = shap.utils.sample(Xtr, args.n_bg, random_state=0)
    return model, Xtr, bg, Xex


def enumerated_probability_values(model, bg, Xex, n_checked=200):
    """Exact values of a binary XGBClassifier's probability game: all 2^d coalitions, checked on the model.

    shap's ``TreeExplainer(model_output="probability")`` is efficient but is not the interventional game's
    Shapley values (0.03 off on a row here), so the truth is enumerated: the trees' sum through the sigmoid on
    every coalition of each row with each background row (``linked_tree_table``), after ``n_checked`` random
    coalitions of the first row are checked against ``predict_proba`` on the hybrid rows themselves.
    """
    d = bg.shape[1]
    trees = extract_trees(model, 1, "margin")
    margin = model.predict(bg, output_margin=True).astype(float)
    offset = np.array([np.mean(margin - tree_predict(trees, bg)[:, 0])])
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 1 << d, size=n_checked)
    table = linked_tree_table(trees, Xex[:1], bg, offset, np.arange(d), d, "sigmoid")[0, :, 0]
    worst = 0.0
    for code in codes:
        hybrid = bg.copy()
        members = [j for j in range(d) if code >> j & 1]
        hybrid[:, members] = Xex[0, members]
        worst = max(worst, abs(model.predict_proba(hybrid)[:, 1].mean() - table[code]))
    if worst > 1e-6:  # xgboost's float32 sums
        raise RuntimeError(f"the enumerated game is {worst:.2e} off the model's on the hybrid rows")
    values = np.empty(Xex.shape)
    for r in range(Xex.shape[0]):
        game = linked_tree_table(trees, Xex[r : r + 1], bg, offset, np.arange(d), d, "sigmoid")
        values[r] = shapley_from_table(game, np)[0, :, 0]
    return values, worst


def explained_output(model):
    """Return the explained output as a function of rows: the regressor's prediction or the probability of 1."""
    if isinstance(model, xgboost.XGBClassifier):
        return lambda Z: model.predict_proba(Z)[:, 1]
    return model.predict


class CountingModel:
    """Wrap a predict function; count calls and rows, record call sizes and time spent inside."""

    def __init__(self, f, keep_inputs=False):
        self.f = f
        self.keep_inputs = keep_inputs
        self.reset()

    def reset(self):
        self.calls = 0
        self.rows = 0
        self.wall = 0.0
        self.cpu = 0.0
        self.sizes: list[int] = []
        self.inputs: list[np.ndarray] = []

    def __call__(self, Z):
        return self.record(self.f, Z)

    def record(self, f, Z):
        """Return ``f(Z)``, counted and timed."""
        w0, c0 = time.perf_counter(), time.process_time()
        out = f(Z)
        self.wall += time.perf_counter() - w0
        self.cpu += time.process_time() - c0
        self.calls += 1
        self.rows += len(Z)
        self.sizes.append(len(Z))
        if self.keep_inputs:
            self.inputs.append(np.array(Z, copy=True))
        return out


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def rmse_stats(values, ref, ref_scale):
    rmse = float(np.sqrt(np.mean((values - ref) ** 2)))
    return rmse, rmse / ref_scale


def additivity(expl, fx):
    return float(np.abs(expl.values.sum(1) + expl.base_values - fx).max())


def median(xs):
    return float(statistics.median(xs))


def env_info() -> dict:
    try:
        threading_layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        threading_layer = None
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "shap": shap.__version__,
        "xgboost": xgboost.__version__,
        "sklearn": sklearn.__version__,
        "numba": numba.__version__,
        "numba_num_threads": numba.config.NUMBA_NUM_THREADS,
        "numba_threading_layer": threading_layer,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "nproc": os.cpu_count(),
        "affinity_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


# --------------------------------------------------------------------------------------------------
# the two explainers


def sampled(sampler, budget, d, n_background, model=None):
    """Return the algorithm and background parts of ``sampler``: "auto" gives what it samples.

    "auto" itself reads an xgboost regressor's trees, and a classifier's to 16 features (exact, no sampling);
    this benchmark times sampling. Past 16 features "auto" samples a classifier's probability with a control
    variate of the row's top players (the user guide): it is timed as such.
    """
    if sampler != "auto":
        return sampler, "auto"
    if isinstance(model, xgboost.XGBClassifier) and d > LINKED_MAX_PLAYERS:
        return "auto", "auto"
    algorithm, _, parts = resolve_algorithm("auto", budget, d, "auto", None, n_background)
    return algorithm, parts


def ours_explainer(model, bg, budget, seed, sampler, n_jobs=None):
    """Return ours fitted on ``bg`` as this benchmark runs it (the sampler as :func:`sampled` gives it)."""
    algorithm, parts = sampled(sampler, budget, bg.shape[1], len(bg), model)
    return PermutationShapExplainer(
        model,
        output="probability" if isinstance(model, xgboost.XGBClassifier) else "auto",
        algorithm=algorithm,
        background_parts=parts,
        max_evals=budget,
        background_size=None,
        random_state=seed,
        n_jobs=n_jobs,
        progress=False,
    ).fit(bg)


def run_ours(model, bg, Xex, budget, seed, sampler, n_jobs=None):
    explainer = ours_explainer(model, bg, budget, seed, sampler, n_jobs)
    expl, wall, cpu = timed(lambda: explainer.explain(Xex))
    return explainer, expl, wall, cpu


def recorded_ours(model, bg, Xex, budget, sampler, keep_inputs=True):
    """Run ours (seed 0) with the model function ``explain`` builds recording its calls (and inputs, by default).

    The function is wrapped in a :class:`CountingModel`, so the game, the batches, the rows and any control variate
    are exactly those of the timed runs. Returns (counting, explainer, explanation, wall time, CPU time).
    """
    explainer = ours_explainer(model, bg, budget, 0, sampler)
    counting = CountingModel(None, keep_inputs=keep_inputs)
    original = _permutation.make_model_function

    def recording(*args, **kwargs):
        function = original(*args, **kwargs)
        return dataclasses.replace(function, predict=functools.partial(counting.record, function.predict))

    _permutation.make_model_function = recording
    try:
        expl, wall, cpu = timed(lambda: explainer.explain(Xex))
    finally:
        _permutation.make_model_function = original
    return counting, explainer, expl, wall, cpu


def run_shap(model, masker, Xex, budget, seed):
    counting = CountingModel(explained_output(model))
    # shap's seed= re-seeds numpy's global RNG in __init__: the explainer is built inside the timing
    expl, wall, cpu = timed(
        lambda: shap.PermutationExplainer(counting, masker, seed=seed)(Xex, max_evals=budget, silent=True)
    )
    return counting, expl, wall, cpu


def time_model_replay(booster, batches, repeats):
    """Wall and CPU time of inplace_predict over the given batches (median over repeats)."""
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        for batch in batches:
            booster.inplace_predict(batch)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return median(walls), median(cpus), walls


def profile_ours(model, bg, Xex, budget, sampler, top=20):
    explainer = ours_explainer(model, bg, budget, 0, sampler)
    prof = cProfile.Profile()
    prof.enable()
    explainer.explain(Xex)
    prof.disable()
    out = {}
    for key in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats(key).print_stats(top)
        out[f"top_by_{key}"] = buf.getvalue().strip().splitlines()
    return out


# --------------------------------------------------------------------------------------------------


def main() -> int:
    args = parse_args()
    t_start = time.perf_counter()
    d = args.d
    print(f"setup: d={d}, n_bg={args.n_bg}, n_explain={args.n_explain}, repeats={args.repeats}, seeds={args.seeds}")
    model, Xtr, bg, Xex = make_problem(args)
    booster = model.get_booster()
    booster_nthread = json.loads(booster.save_config())["learner"]["generic_param"].get("nthread")
    masker = shap.maskers.Independent(bg, max_samples=args.n_bg)
    fx = explained_output(model)(Xex)

    res: dict = {
        "benchmark": "bench_permutation",
        "env_start": env_info(),
        "setup": {
            "d": d,
            "n_train": args.n_train,
            "n_bg": args.n_bg,
            "n_explain": args.n_explain,
            "repeats": args.repeats,
            "seeds": list(range(args.seeds)),
            "budgets": args.budgets,
            "quick": args.quick,
            "data": "AR(1) gaussian rho=0.5, target linear + 2*x0x1 + sin(2x2)x3 + 1[x4>0]x5^2 + 0.5*x6x7x8 "
            "(shap_bench.py, ecosystem_contract.md Appendix A)",
            "model": f"{type(model).__name__}(n_estimators=200, max_depth=6, learning_rate=0.05, random_state=0, "
            "n_jobs=1)" + (", the target above its median; explained: the probability of 1" if args.classifier else ""),
            "xgboost_threads": "pinned to 1 (n_jobs=1, as in the reference); booster nthread="
            f"{booster_nthread}; both explainers and the pure-model timing use this booster",
            "background": "shap.utils.sample(Xtr, n_bg, random_state=0), the same rows for both explainers",
            "shap": "shap.PermutationExplainer(counting(model.predict"
            + ("_proba[:, 1]" if args.classifier else "")
            + "), shap.maskers.Independent(bg, max_samples=n_bg), seed=s)(X, max_evals=budget, silent=True)",
            "ours": f"PermutationShapExplainer(model, algorithm={args.sampler!r}, max_evals=budget, "
            "background_size=None, random_state=s).fit(bg).explain(X)",
            "ground_truth": "all 2^d coalitions through the trees (enumerated_probability_values)"
            if args.classifier
            else "shap.TreeExplainer(model, data=bg, feature_perturbation='interventional')",
            "timing": "median over repeats (seed 0), ours, ours with n_jobs, shap and the model alone on ours' rows "
            "interleaved; CPU = time.process_time (all threads); progress=False",
        },
    }

    # ground truth
    if args.classifier:
        (ref, checked), w, c = timed(lambda: enumerated_probability_values(model, bg, Xex))
        base = explained_output(model)(bg).mean()
        truth_additivity = float(np.abs(ref.sum(axis=1) + base - fx).max())
        checks = {"checked_coalitions_max_error": checked}
    else:
        tree = shap.TreeExplainer(model, data=bg, feature_perturbation="interventional")
        e_ref, w, c = timed(lambda: tree(Xex))
        ref, truth_additivity, checks = e_ref.values, additivity(e_ref, fx), {}
    ref_scale = float(np.sqrt(np.mean(ref**2)))
    res["ground_truth"] = {
        "wall_s": w,
        "cpu_s": c,
        "ref_rms_shap": ref_scale,
        "additivity_maxerr": truth_additivity,
        **checks,
    }
    print(f"ground truth: {w:.2f} s wall, RMS of reference values {ref_scale:.4f}")

    # warm-ups, excluded from all timings
    _, w_ours, c_ours = timed(lambda: run_ours(model, bg, Xex[:2], max(args.budgets), 0, args.sampler))
    _, w_shap, c_shap = timed(lambda: run_shap(model, masker, Xex[:2], 2 * d + 1, 0))
    booster.inplace_predict(Xex[:10])
    res["warmup"] = {
        "ours_first_call_2rows": {"wall_s": w_ours, "cpu_s": c_ours},
        "shap_first_call_2rows": {"wall_s": w_shap, "cpu_s": c_shap},
    }
    print(f"warm-up: ours {w_ours:.2f} s wall, shap {w_shap:.2f} s wall (excluded from timings)")

    budgets_out = []
    for budget in args.budgets:
        print(f"\n--- budget max_evals={budget} ---", flush=True)
        row: dict = {"max_evals": budget}

        # 1. untimed instrumented run of ours: same game and batches, with a callable recording calls
        inst, inst_explainer, inst_expl, inst_wall, inst_cpu = recorded_ours(model, bg, Xex, budget, args.sampler)

        # 2. timing: repeats with seed 0, interleaved with the model alone on the very rows ours sent
        sizes = inst.sizes
        total_rows = int(sum(sizes))
        big = np.concatenate(inst.inputs)
        replay_all, replay_call, single_all, single_call = [], [], [], []
        ours_w, ours_c, shap_w, shap_c, threads_w, in_run = [], [], [], [], [], []
        ours_values = shap_values = None
        ours_identical = True
        for r in range(args.repeats):
            _, e_ours, w, c = run_ours(model, bg, Xex, budget, 0, args.sampler)
            ours_w.append(w)
            ours_c.append(c)
            if ours_values is None:
                ours_values, ours_expl = e_ours.values, e_ours
            else:
                ours_identical &= bool(np.array_equal(ours_values, e_ours.values))
            _, e_threads, w, _ = run_ours(model, bg, Xex, budget, 0, args.sampler, n_jobs=args.n_jobs)
            threads_w.append(w)
            ours_identical &= bool(np.array_equal(ours_values, e_threads.values))
            counting, e_shap, w, c = run_shap(model, masker, Xex, budget, 0)
            shap_w.append(w)
            shap_c.append(c)
            if shap_values is None:
                shap_values, shap_expl, shap_counting = e_shap.values, e_shap, counting
            # (c) in the same run: ours' wall time over the time its own model calls took inside it
            paired, _, _, w, _ = recorded_ours(model, bg, Xex, budget, args.sampler, keep_inputs=False)
            in_run.append(w / paired.wall)
            w, c, _ = time_model_replay(booster, [big], 1)  # (b) one call on all the rows
            single_all.append(w)
            single_call.append(c)
            w, c, _ = time_model_replay(booster, inst.inputs, 1)  # (a) in ours' batches
            replay_all.append(w)
            replay_call.append(c)
            print(
                f"  repeat {r}: ours {ours_w[-1]:.2f} s, model alone on its rows {single_all[-1]:.2f} s, "
                f"shap {shap_w[-1]:.2f} s",
                flush=True,
            )
        del big
        inst.inputs.clear()
        ours_n_evals = int(ours_expl.diagnostics["n_evals"].max())
        replay_w, replay_c, single_w, single_c = map(median, (replay_all, replay_call, single_all, single_call))

        # 3. accuracy over seeds (seed 0 is the timed run)
        ours_rel, shap_rel = [rmse_stats(ours_values, ref, ref_scale)[1]], [rmse_stats(shap_values, ref, ref_scale)[1]]
        seed_times = {"ours_wall_s": [], "shap_wall_s": []}
        for seed in range(1, args.seeds):
            _, e, w, _ = run_ours(model, bg, Xex, budget, seed, args.sampler)
            ours_rel.append(rmse_stats(e.values, ref, ref_scale)[1])
            seed_times["ours_wall_s"].append(w)
            _, e, w, _ = run_shap(model, masker, Xex, budget, seed)
            shap_rel.append(rmse_stats(e.values, ref, ref_scale)[1])
            seed_times["shap_wall_s"].append(w)

        rmse_ours, rel_ours = rmse_stats(ours_values, ref, ref_scale)
        rmse_shap, rel_shap = rmse_stats(shap_values, ref, ref_scale)
        n_perm_shap = budget // (2 * d + 1)
        row["ours"] = {
            "wall_s_median": median(ours_w),
            "cpu_s_median": median(ours_c),
            "wall_s_all": ours_w,
            "cpu_s_all": ours_c,
            "n_evals": int(ours_n_evals),
            "n_antithetic_pairs": int((ours_n_evals - 2) // (2 * (d - 1))),
            "n_model_rows": int(ours_expl.diagnostics["n_model_rows"]),
            "n_model_calls": int(ours_expl.diagnostics["n_model_calls"]),
            "sampler": ours_expl.diagnostics["algorithm"],
            "model_calls": inst.calls,
            "model_call_sizes": sorted(set(sizes)),
            "model_rows_instrumented": inst.rows,
            "model_wall_s_inside_instrumented_run": inst.wall,
            "model_cpu_s_inside_instrumented_run": inst.cpu,
            "instrumented_run_wall_s": inst_wall,
            "instrumented_run_cpu_s": inst_cpu,
            "instrumented_run_identical_values": bool(np.array_equal(inst_expl.values, ours_values)),
            "repeats_identical_values": ours_identical,
            "rmse": rmse_ours,
            "rel_rmse": rel_ours,
            "additivity_maxerr": additivity(ours_expl, fx),
            "rel_rmse_seeds": ours_rel,
            "rel_rmse_mean": float(np.mean(ours_rel)),
            "rel_rmse_std": float(np.std(ours_rel, ddof=1)) if len(ours_rel) > 1 else None,
            "seed_runs_wall_s": seed_times["ours_wall_s"],
        }
        row["shap"] = {
            "wall_s_median": median(shap_w),
            "cpu_s_median": median(shap_c),
            "wall_s_all": shap_w,
            "cpu_s_all": shap_c,
            "npermutations": n_perm_shap,
            "evals_per_row": n_perm_shap * (2 * d + 1),
            "model_rows": shap_counting.rows,
            "model_rows_without_main_effects_bug": args.n_explain * n_perm_shap * (2 * d + 1) * args.n_bg,
            "model_calls": shap_counting.calls,
            "model_wall_s_inside": shap_counting.wall,
            "model_cpu_s_inside": shap_counting.cpu,
            "rmse": rmse_shap,
            "rel_rmse": rel_shap,
            "additivity_maxerr": additivity(shap_expl, fx),
            "rel_rmse_seeds": shap_rel,
            "rel_rmse_mean": float(np.mean(shap_rel)),
            "rel_rmse_std": float(np.std(shap_rel, ddof=1)) if len(shap_rel) > 1 else None,
            "seed_runs_wall_s": seed_times["shap_wall_s"],
        }
        row["ours_threaded"] = {
            "n_jobs": args.n_jobs,
            "wall_s_median": median(threads_w),
            "wall_s_all": threads_w,
            "note": "same explainer with n_jobs model-call threads; identical values (checked)",
        }
        row["pure_model"] = {
            "rows": total_rows,
            "replay_ours_call_sizes": {
                "calls": len(sizes),
                "wall_s_median": replay_w,
                "cpu_s_median": replay_c,
                "wall_s_all": replay_all,
            },
            "single_call": {
                "wall_s_median": single_w,
                "cpu_s_median": single_c,
                "wall_s_all": single_all,
                "cpu_s_all": single_call,
            },
            "rows_per_cpu_s": total_rows / replay_c if replay_c > 0 else None,
        }
        row["ratios"] = {
            "ours_over_shap_wall": median(ours_w) / median(shap_w),
            "ours_over_shap_cpu": median(ours_c) / median(shap_c),
            "overhead_ratio_wall": median(ours_w) / single_w,
            "overhead_ratio_cpu": median(ours_c) / single_c,
            "overhead_ratio_wall_vs_ours_batches": median(ours_w) / replay_w,
            "overhead_ratio_wall_per_repeat": [o / m for o, m in zip(ours_w, single_all, strict=True)],
            "overhead_ratio_wall_in_run": median(in_run),
            "overhead_ratio_wall_in_run_per_repeat": in_run,
            "ours_rel_rmse_mean_over_shap": float(np.mean(ours_rel) / np.mean(shap_rel)),
            # secondary, more samples: the seed runs do the same work, so pool them with the repeats
            "ours_over_shap_wall_all_runs": median(ours_w + seed_times["ours_wall_s"])
            / median(shap_w + seed_times["shap_wall_s"]),
            "overhead_ratio_wall_all_runs": median(ours_w + seed_times["ours_wall_s"]) / single_w,
            "ours_threaded_over_shap_wall": median(threads_w) / median(shap_w),
        }
        budgets_out.append(row)
        print(
            f"  ours {median(ours_w):.2f} s ({row['ours']['n_model_rows']} rows), shap {median(shap_w):.2f} s "
            f"({shap_counting.rows} rows), model alone {single_w:.2f} s (overhead "
            f"{row['ratios']['overhead_ratio_wall']:.3f}, in the run {median(in_run):.3f}); "
            f"rel RMSE ours {np.mean(ours_rel):.4f}, shap {np.mean(shap_rel):.4f}",
            flush=True,
        )
    res["budgets"] = budgets_out

    if args.profile:
        res["profile_ours"] = {
            "max_evals": max(args.budgets),
            **profile_ours(model, bg, Xex, max(args.budgets), args.sampler),
        }

    res["targets"] = {
        "ours_over_shap_wall_max": 0.8,
        "overhead_ratio_wall_max": 1.1,
        "rel_rmse": "ours mean <= shap mean within the seed std",
    }
    res["targets_met"] = {
        str(r["max_evals"]): {
            "speed": r["ratios"]["ours_over_shap_wall"] <= 0.8,
            "overhead": r["ratios"]["overhead_ratio_wall"] <= 1.1,
            "overhead_in_run": r["ratios"]["overhead_ratio_wall_in_run"] <= 1.1,
            "accuracy": r["ours"]["rel_rmse_mean"]
            <= r["shap"]["rel_rmse_mean"] + (r["shap"]["rel_rmse_std"] or 0.0) + (r["ours"]["rel_rmse_std"] or 0.0),
        }
        for r in budgets_out
    }
    res["env_end"] = {"loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}
    res["env_start"]["numba_threading_layer"] = env_info()["numba_threading_layer"]
    res["total_wall_s"] = time.perf_counter() - t_start

    # table
    header = (
        f"{'max_evals':>9} | {'evals/row s/o':>13} | {'shap wall':>9} | {'ours wall':>9} | {'o/s wall':>8} | "
        f"{'o/s cpu':>7} | {'model':>6} | {'ovh wall/cpu/run':>18} | {'relRMSE shap (mean±sd)':>22} | "
        f"{'relRMSE ours (mean±sd)':>22} | {'additivity s/o':>17}"
    )
    print("\n" + header)
    print("-" * len(header))
    for r in budgets_out:
        o, s, m, q = r["ours"], r["shap"], r["pure_model"], r["ratios"]
        print(
            f"{r['max_evals']:>9} | {s['evals_per_row']:>6}/{o['n_evals']:<6} | {s['wall_s_median']:>8.2f}s | "
            f"{o['wall_s_median']:>8.2f}s | {q['ours_over_shap_wall']:>8.3f} | {q['ours_over_shap_cpu']:>7.3f} | "
            f"{m['single_call']['wall_s_median']:>5.2f}s | "
            f"{q['overhead_ratio_wall']:>5.3f}/{q['overhead_ratio_cpu']:.3f}/{q['overhead_ratio_wall_in_run']:<6.3f} | "
            f"{s['rel_rmse_mean']:>.4f}±{(s['rel_rmse_std'] or 0):.4f} ({s['rel_rmse']:.4f}) | "
            f"{o['rel_rmse_mean']:>.4f}±{(o['rel_rmse_std'] or 0):.4f} ({o['rel_rmse']:.4f}) | "
            f"{s['additivity_maxerr']:.1e}/{o['additivity_maxerr']:.1e} | "
            f"n_jobs={args.n_jobs}: {r['ours_threaded']['wall_s_median']:.2f}s "
            f"({q['ours_threaded_over_shap_wall']:.3f})"
        )
    print(
        "(o/s = ours/shap, target wall <= 0.8; ovh = ours / xgboost alone on all of ours' rows in one call "
        "(wall, CPU), and ours' wall / the time its model calls took in the same run (median of the repeats'"
        " ratios), target <= 1.1;"
        " relRMSE = RMSE / RMS(reference), mean±sd over seeds, seed-0 value in parentheses)"
    )
    print(f"targets met: {json.dumps(res['targets_met'])}")
    print(f"total wall time {res['total_wall_s']:.0f} s")

    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
