"""The command line ``sklearn-shapq``: argument parsing, and the ``explain`` command.

``sklearn_shapq/__main__.py`` only calls :func:`main`. Nothing heavy is imported at module level:
shap, xgboost, matplotlib and the explainer are imported when a command runs, so ``--version`` and
``--help`` stay fast. A user error (a missing file, a model that does not load, columns that do not
match the model, an unknown extension, a missing optional dependency, a parameter the explainer
refuses) is one line on stderr and exit status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PROG = "sklearn-shapq"

MODEL_LOADERS = {
    ".joblib": "joblib.load",
    ".pkl": "joblib.load",
    ".pickle": "joblib.load",
    ".json": "xgboost",
    ".ubj": "xgboost",
}
"""The model files ``explain`` reads, by extension, and the loader each one goes to."""

TABLE_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
"""The tables ``explain`` reads (DATA, ``--background``) and writes (``--out``), by extension."""

_PARQUET_ENGINES = ("pyarrow", "fastparquet")

_DESCRIPTION = """\
Shapley values of scikit-learn and xgboost models from the command line:
"explain" explains the rows of a table (CSV or Parquet) for a saved model with
PermutationShapExplainer and writes the values and, optionally, shap's plots.
"""

_EPILOG = 'Run "sklearn-shapq COMMAND --help" for the options of a command.'

_EXPLAIN_DESCRIPTION = """\
Explain the rows of DATA for MODEL with PermutationShapExplainer: the
interventional Shapley values of each row, against a background of rows.

MODEL is a fitted model saved with joblib or pickle (.joblib, .pkl, .pickle:
a scikit-learn estimator or Pipeline, an xgboost model, ...), or an xgboost
model file (.json, .ubj). Loading a joblib or pickle file runs code stored in
it: load only files you trust.
DATA is a CSV or Parquet table (.csv, .parquet, .pq) whose columns are the
model's features; a model fitted on a DataFrame names them, and the columns
are put in its order.

The values go to --out (or to stdout as CSV): one column per feature and
base_value, or, for a model with several outputs (a multiclass classifier),
one such block per output, named "OUTPUT__FEATURE" and "OUTPUT__base_value".
The index "row" is the row's position in DATA.
"""

_EXPLAIN_EPILOG = """\
examples:
  sklearn-shapq explain model.joblib data.csv --out values.csv
  sklearn-shapq explain model.json data.parquet --rows 100 --max-evals 500 \\
      --random-state 0 --out values.parquet --plots plots/
  sklearn-shapq explain model.pkl data.csv --background train.csv \\
      --background-size 200 --algorithm leverage --output probability
"""


class CommandError(Exception):
    """A user error: printed as one line on stderr, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sklearn-shapq`` with the arguments ``argv`` (default: ``sys.argv[1:]``).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program's name.

    Returns
    -------
    int
        The exit status: 0 on success, 2 for a user error (one line on stderr).
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(explain_choices="explain" in arguments)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # --help, --version, a usage error: argparse has printed what it has to say
        return exc.code if isinstance(exc.code, int) else 1
    try:
        return int(args.run(args))
    except CommandError as exc:
        print(f"{PROG} {args.command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2


def build_parser(explain_choices: bool = True) -> argparse.ArgumentParser:
    """Return the parser of ``sklearn-shapq`` and its commands ``explain`` and ``demo``.

    ``explain_choices=False`` leaves the algorithm and output names of ``explain`` unchecked by the
    parser (the explainer still checks them): listing them imports the package's algorithms (numba,
    scikit-learn, scipy), which ``--version``, ``--help`` and ``demo`` do without.
    """
    parser = argparse.ArgumentParser(
        prog=PROG, description=_DESCRIPTION, epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    commands = parser.add_subparsers(title="commands", dest="command", required=True, metavar="COMMAND")
    _add_explain(commands, explain_choices)
    _add_demo(commands)
    return parser


def _version() -> str:
    from sklearn_shapq import __version__

    return str(__version__)


def _one_line(message: str) -> str:
    return " ".join(message.split())


# ----------------------------------------------------------------------------------------------- demo


def _add_demo(commands: Any) -> None:
    demo = commands.add_parser(
        "demo",
        help="explain an xgboost model and compare with exact TreeSHAP",
        description="Explain an xgboost model of the diabetes data, compare with exact TreeSHAP, then run "
        "the other classes in short sections. Needs xgboost and matplotlib: "
        'pip install "sklearn_shapq[demo]".',
    )
    demo.add_argument("--out", default="demo_output", help="folder for the PNG plots (default: demo_output)")
    demo.add_argument("--rows", type=int, default=100, help="rows to explain (default: 100)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    demo.set_defaults(run=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    missing = [name for name in ("xgboost", "matplotlib") if not _installed(name)]
    if missing:
        sys.stderr.write(
            f"The demo needs {' and '.join(missing)}, which a plain install leaves out: "
            'pip install "sklearn_shapq[demo]" (or -e ".[demo]" in a clone).\n'
        )
        return 2
    from sklearn_shapq._demo import run_demo

    run_demo(out=args.out, n_rows=args.rows, seed=args.seed)
    return 0


# -------------------------------------------------------------------------------------------- explain


def _add_explain(commands: Any, choices: bool) -> None:
    algorithms, outputs = _explain_choices() if choices else (None, None)
    explain = commands.add_parser(
        "explain",
        help="explain the rows of a table (CSV or Parquet) for a saved model",
        description=_EXPLAIN_DESCRIPTION,
        epilog=_EXPLAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explain.add_argument("model", metavar="MODEL", help="the fitted model: .joblib, .pkl, .pickle, .json or .ubj")
    explain.add_argument("data", metavar="DATA", help="the table to explain: .csv, .parquet or .pq")
    rows = explain.add_argument_group("rows")
    rows.add_argument(
        "--rows",
        type=_row_slice,
        default=slice(None),
        metavar="N|START:STOP",
        help="rows of DATA to explain: the first N, or positions START to STOP - 1 (default: all)",
    )
    rows.add_argument(
        "--background",
        metavar="FILE",
        help="table of background rows (.csv, .parquet, .pq; default: DATA)",
    )
    rows.add_argument(
        "--background-size",
        type=_background_size,
        default=100,
        metavar="N|all",
        help="background rows kept: a reproducible subsample of N rows of the background table "
        "(DATA or --background), or all (default: 100)",
    )
    explainer = explain.add_argument_group("explainer (the parameters of PermutationShapExplainer)")
    explainer.add_argument(
        "--algorithm",
        default="auto",
        choices=None if algorithms is None else ["auto", *algorithms],
        metavar="NAME",
        help=f"the algorithm, auto (the default) or one of: {', '.join(algorithms or ['...'])} (the user "
        "guide compares them)",
    )
    explainer.add_argument(
        "--max-evals",
        type=_max_evals,
        default="auto",
        metavar="N|auto",
        help="evaluations of the value function per explained row (default: auto)",
    )
    explainer.add_argument(
        "--output",
        default="auto",
        choices=outputs,
        help="what is explained: a regressor's prediction, a classifier's margin or log-odds, an outlier "
        "detector's score (auto, the default), or the one named",
    )
    explainer.add_argument(
        "--random-state",
        type=int,
        default=None,
        metavar="SEED",
        help="seed of the background subsample and of every draw; give one for reproducible values (default: none)",
    )
    explainer.add_argument(
        "--n-jobs", type=int, default=None, metavar="N", help="model calls run at once (joblib's meaning; default: 1)"
    )
    explainer.add_argument("--device", default="cpu", metavar="DEVICE", help="cpu (default), cuda, cuda:N or auto")
    explainer.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bar (shown once explaining has run 3 s) and no summary line on stderr",
    )
    written = explain.add_argument_group("results")
    written.add_argument(
        "--out",
        metavar="FILE",
        help="file of the values, by extension: .csv, .parquet or .pq (default: CSV on stdout)",
    )
    written.add_argument(
        "--plots",
        metavar="DIR",
        help="folder for shap's plots as PNG: beeswarm.png, bar.png, waterfall.png (the first explained "
        "row); with several outputs, one of each per output (beeswarm_OUTPUT.png, ...). Needs matplotlib",
    )
    explain.set_defaults(run=run_explain)


def _explain_choices() -> tuple[list[str], list[str]]:
    """Return the registered algorithms' names and the explained outputs (imports the package's algorithms)."""
    from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS
    from sklearn_shapq.explainers import EXACT_PATHS
    from sklearn_shapq.games import OUTPUTS

    return sorted([*SHAPLEY_ALGORITHMS, *EXACT_PATHS]), list(OUTPUTS)


def _row_slice(text: str) -> slice:
    """Parse ``--rows``: "N" (the first N rows) or "START:STOP" (either may be left out)."""
    start: int | None
    stop: int | None
    try:
        if ":" not in text:
            first = int(text)
            if first < 1:
                raise ValueError
            return slice(0, first)
        start_text, stop_text = text.split(":")
        start = int(start_text) if start_text else None
        stop = int(stop_text) if stop_text else None
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected N (a positive number of rows) or START:STOP, got {text!r}"
        ) from None
    if (start is not None and start < 0) or (stop is not None and stop < 0):
        raise argparse.ArgumentTypeError(f"row positions are 0 or more, got {text!r}")
    return slice(start, stop)


def _background_size(text: str) -> int | None:
    if text == "all":
        return None
    return _positive_int(text)


def _max_evals(text: str) -> int | str:
    if text == "auto":
        return "auto"
    return _positive_int(text)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run_explain(args: argparse.Namespace) -> int:
    """Run ``sklearn-shapq explain``: load, explain, write the values and the plots.

    Every check that needs no model call (files, extensions, optional dependencies, columns) runs
    before the explainer does.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of ``explain``.

    Returns
    -------
    int
        0; a user error raises :class:`CommandError`.
    """
    import time

    model_path = _existing_file(args.model, "model", MODEL_LOADERS)
    data_path = _existing_file(args.data, "data", TABLE_FORMATS)
    background_path = None if args.background is None else _existing_file(args.background, "background", TABLE_FORMATS)
    out_path = None if args.out is None else Path(args.out)
    if out_path is not None:
        _format_of(out_path, "--out", TABLE_FORMATS)
        if TABLE_FORMATS[out_path.suffix.lower()] == "parquet":
            _need_parquet("writing Parquet (--out)")
    for table in (data_path, background_path):
        if table is not None and TABLE_FORMATS[table.suffix.lower()] == "parquet":
            _need_parquet(f"reading the Parquet file {table}")
    if args.plots is not None and not _installed("matplotlib"):
        raise CommandError('--plots needs matplotlib: pip install matplotlib (or "sklearn_shapq[plots]")')

    model = load_model(model_path)
    data = _matching_columns(read_table(data_path), model, data_path)
    background = (
        data if background_path is None else _matching_columns(read_table(background_path), model, background_path)
    )
    positions = range(len(data))[args.rows]
    if len(positions) == 0:
        raise CommandError(f"--rows selects no rows of {data_path} ({len(data)} rows)")
    rows = data.iloc[args.rows]

    from sklearn_shapq import DeviceUnavailableError, PermutationShapExplainer

    explainer = PermutationShapExplainer(
        model,
        algorithm=args.algorithm,
        max_evals=args.max_evals,
        output=args.output,
        background_size=args.background_size,
        device=args.device,
        random_state=args.random_state,
        progress=args.progress,
        n_jobs=args.n_jobs,
    )
    start = time.perf_counter()
    try:
        explainer.fit(background)
        explanation = explainer.explain(rows)
    except (ValueError, TypeError, DeviceUnavailableError) as exc:  # parameters or data the explainer refuses
        raise CommandError(f"cannot explain {model_path} on {data_path}: {exc}") from exc
    seconds = time.perf_counter() - start

    frame = values_frame(explainer, explanation, positions)
    if out_path is None:
        frame.to_csv(sys.stdout)
    else:
        write_table(frame, out_path)
    plots = [] if args.plots is None else save_plots(explanation, Path(args.plots))
    if args.progress:
        where = f"; values in {out_path}" if out_path is not None else ""
        drawn = f"; plots in {args.plots}" if plots else ""
        budget = f"max_evals {explainer.max_evals_}, " if explainer.max_evals_ else "exact, "
        print(
            f"{PROG}: explained {len(rows)} rows x {len(explainer.feature_names_)} features of {data_path.name} "
            f"with {explainer.algorithm_} ({budget}{explainer.background_.shape[0]} "
            f"background rows) in {seconds:.1f} s{where}{drawn}",
            file=sys.stderr,
        )
    return 0


def _existing_file(name: str, what: str, formats: dict[str, str]) -> Path:
    path = Path(name)
    if not path.exists():
        raise CommandError(f"{what} file not found: {path}")
    if not path.is_file():
        raise CommandError(f"{what} is not a file: {path}")
    _format_of(path, what, formats)
    return path


def _format_of(path: Path, what: str, formats: dict[str, str]) -> str:
    suffix = path.suffix.lower()
    if suffix not in formats:
        raise CommandError(
            f"{what} {path}: unknown extension {suffix or '(none)'!r}; expected one of {', '.join(formats)}"
        )
    return formats[suffix]


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported (found without importing it)."""
    return importlib.util.find_spec(module) is not None


def _need(module: str, purpose: str, install: str) -> None:
    if not _installed(module):
        raise CommandError(f"{purpose} needs {module}, which is not installed: pip install {install}")


def _need_parquet(purpose: str) -> None:
    if not any(_installed(engine) for engine in _PARQUET_ENGINES):
        raise CommandError(
            f"{purpose} needs pyarrow or fastparquet, neither of which is installed: pip install pyarrow "
            '(or "sklearn_shapq[parquet]")'
        )


def load_model(path: Path) -> Any:
    """Load the fitted model saved at ``path``, by its extension.

    .joblib, .pkl and .pickle go to ``joblib.load`` (which reads plain pickles too). .json and .ubj
    are xgboost model files: saved by an xgboost scikit-learn model (``XGBRegressor``,
    ``XGBClassifier``, ... ``save_model``), they load as that class, so that a classifier's classes
    and the best iteration of early stopping are kept; else as an ``xgboost.Booster``. Both are
    models that ``PermutationShapExplainer`` explains.

    Parameters
    ----------
    path : Path

    Returns
    -------
    object
        The model.
    """
    loader = _format_of(path, "model", MODEL_LOADERS)
    if loader == "xgboost":
        _need("xgboost", f"loading the xgboost model file {path}", '"sklearn_shapq[xgboost]"')
    try:
        if loader == "xgboost":
            return _load_xgboost(path)
        import joblib

        return joblib.load(path)
    except Exception as exc:  # whatever the file holds, its loader's error is the user's to see
        tried = "xgboost.Booster(model_file=...)" if loader == "xgboost" else "joblib.load"
        # a class the pickle names that cannot be imported here is its own message; anything else, the file's format
        unreadable = loader != "xgboost" and not isinstance(exc, ImportError | AttributeError)
        hint = " (is it a file written by joblib.dump or pickle.dump?)" if unreadable else ""
        raise CommandError(f"cannot load the model {path} with {tried}: {type(exc).__name__}: {exc}{hint}") from exc


def _load_xgboost(path: Path) -> Any:
    import json

    import xgboost

    booster = xgboost.Booster(model_file=str(path))
    saved_by = booster.attr("scikit_learn")
    kind = json.loads(saved_by).get("_estimator_type") if saved_by else None
    wrappers = {"classifier": xgboost.XGBClassifier, "regressor": xgboost.XGBRegressor, "ranker": xgboost.XGBRanker}
    if kind not in wrappers:
        return booster
    model = wrappers[kind]()
    model.load_model(str(path))
    return model


def read_table(path: Path) -> Any:
    """Read the CSV or Parquet table at ``path`` as a DataFrame (CSV floats read back bit for bit).

    Parameters
    ----------
    path : Path

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    kind = _format_of(path, "table", TABLE_FORMATS)
    if kind == "parquet":
        _need_parquet(f"reading the Parquet file {path}")
    try:
        if kind == "parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, **exact_csv_options())
    except Exception as exc:  # a malformed file: the reader's error, on one line
        reader = "pandas.read_parquet" if kind == "parquet" else "pandas.read_csv"
        raise CommandError(f"cannot read the table {path} with {reader}: {type(exc).__name__}: {exc}") from exc


def exact_csv_options() -> dict[str, str]:
    """Return the ``pandas.read_csv`` options that read floats back bit for bit.

    pandas before 3.1 needs ``float_precision="round_trip"``; from 3.1 every mode is the round-trip
    converter and the option is deprecated.
    """
    import pandas as pd

    major, minor = (int(part) for part in re.findall(r"\d+", pd.__version__)[:2])
    return {} if (major, minor) >= (3, 1) else {"float_precision": "round_trip"}


def _model_features(model: Any) -> tuple[list[str] | None, int | None]:
    """Return the model's feature names (``feature_names_in_``, a Booster's ``feature_names``) and its width."""
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        names = getattr(model, "feature_names", None) if type(model).__name__ == "Booster" else None
    width = getattr(model, "n_features_in_", None)
    if width is None and hasattr(model, "num_features"):
        width = model.num_features()
    if names is not None:
        names = [str(name) for name in names]
        width = len(names)
    return names, (int(width) if width is not None else None)


def _matching_columns(table: Any, model: Any, path: Path) -> Any:
    """Return ``table`` with the model's columns in the model's order; name the missing and extra ones."""
    columns = [str(column) for column in table.columns]
    table = table.set_axis(columns, axis=1)
    names, width = _model_features(model)
    if names is not None:
        missing = [name for name in names if name not in columns]
        extra = [column for column in columns if column not in names]
        if missing or extra:
            parts = [f"missing {_quoted(missing)}" if missing else "", f"extra {_quoted(extra)}" if extra else ""]
            hint = (
                "; a CSV written with its index has an 'Unnamed: 0' column: write it with index=False"
                if any(column.startswith("Unnamed: ") for column in extra)
                else ""
            )
            raise CommandError(
                f"the columns of {path} do not match the model's features: {'; '.join(p for p in parts if p)} "
                f"(the model takes {_quoted(names)}){hint}"
            )
        return table[names]
    if width is not None and width != len(columns):
        raise CommandError(
            f"the model takes {width} columns (it has no feature names), but {path} has {len(columns)}: "
            f"{_quoted(columns)}"
        )
    return table


def _quoted(names: Sequence[str], most: int = 20) -> str:
    shown = ", ".join(repr(name) for name in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def values_frame(explainer: Any, explanation: Any, positions: Sequence[int]) -> Any:
    """Return the values as a DataFrame: the features' columns and base_value, a block per output.

    Parameters
    ----------
    explainer : PermutationShapExplainer
        Fitted.
    explanation : shap.Explanation
        What its ``explain`` returned.
    positions : sequence of int
        The explained rows' positions in DATA: the index, named "row".

    Returns
    -------
    pandas.DataFrame
        One output: a column per feature (player), then "base_value". Several: for each output,
        its block "OUTPUT__FEATURE", ..., "OUTPUT__base_value", the names of
        ``get_feature_names_out``.
    """
    import numpy as np
    import pandas as pd

    values = np.asarray(explanation.values, dtype=np.float64)
    base = np.asarray(explanation.base_values, dtype=np.float64).reshape(values.shape[0], -1)
    names = [str(name) for name in explainer.get_feature_names_out()]
    if values.ndim == 2:
        blocks, columns = [values, base], [*names, "base_value"]
    else:  # get_feature_names_out: output by output, "OUTPUT__PLAYER"
        d = values.shape[1]
        outputs = explainer.output_names_ or [f"output{j}" for j in range(values.shape[2])]
        blocks, columns = [], []
        for j, output in enumerate(outputs):
            blocks += [values[:, :, j], base[:, j : j + 1]]
            columns += [*names[j * d : (j + 1) * d], f"{output}__base_value"]
    if len(set(columns)) < len(columns):
        raise CommandError("a feature is named 'base_value', the name of the base value's column: rename it")
    index = pd.Index(list(positions), name="row")
    return pd.DataFrame(np.hstack(blocks), index=index, columns=columns)


def write_table(frame: Any, path: Path) -> None:
    """Write ``frame`` (with its index) to ``path`` as CSV or Parquet, by extension."""
    kind = _format_of(path, "--out", TABLE_FORMATS)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if kind == "parquet":
            frame.to_parquet(path)
        else:
            frame.to_csv(path)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc}") from exc


def save_plots(explanation: Any, folder: Path) -> list[Path]:
    """Save shap's beeswarm, bar and waterfall (first row) plots as PNGs in ``folder`` (matplotlib Agg).

    Parameters
    ----------
    explanation : shap.Explanation
    folder : Path
        Created if needed.

    Returns
    -------
    list of Path
        The files written: beeswarm.png, bar.png, waterfall.png, or with several outputs
        beeswarm_OUTPUT.png, ... for each output.
    """
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import shap

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"cannot create the plots folder {folder}: {exc}") from exc
    values = np.asarray(explanation.values)
    if values.ndim == 2:
        parts = [("", explanation)]
    else:
        names = explanation.output_names or [f"output{j}" for j in range(values.shape[2])]
        parts = [
            (f"_{re.sub(r'[^A-Za-z0-9_.-]+', '_', str(name))}", explanation[:, :, j]) for j, name in enumerate(names)
        ]
    written = []
    for suffix, part in parts:
        for kind, plot in (
            ("beeswarm", lambda e: shap.plots.beeswarm(e, show=False)),
            ("bar", lambda e: shap.plots.bar(e, show=False)),
            ("waterfall", lambda e: shap.plots.waterfall(e[0], show=False)),
        ):
            plt.figure()
            with warnings.catch_warnings():  # a string column's data is NaN: beeswarm colours it grey, and says so
                warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
                plot(part)
            path = folder / f"{kind}{suffix}.png"
            plt.gcf().savefig(path, bbox_inches="tight", dpi=100)
            plt.close("all")
            written.append(path)
    return written
