"""The command line ``sklearn-shapq``: --version, --help, explain end to end, its errors.

A few runs go through ``python -m sklearn_shapq`` in a subprocess (the real entry point, exit
status, stderr without traceback); the rest call ``main([...])`` in process (fast).
"""

from __future__ import annotations

import io
import pickle
import subprocess
import sys

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import sklearn_shapq
from sklearn_shapq import PermutationShapExplainer, _cli
from sklearn_shapq._cli import exact_csv_options, main, read_table

N_ROWS = 40
SETTINGS = ["--algorithm", "antithetic", "--max-evals", "20", "--random-state", "3", "--background-size", "15"]
"""d = 5 players: antithetic pairs (2 + 6 (d - 1) evaluations would be 26; 20 pays 4 orderings), a sampled estimate."""


def _table(n: int = N_ROWS, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.normal(40, 10, n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "income": rng.lognormal(3, 1, n),
            "score": rng.uniform(size=n),
            "height": rng.normal(170, 10, n),
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A Pipeline (one-hot on a string column + Ridge) saved with joblib, its data as CSV and Parquet."""
    folder = tmp_path_factory.mktemp("cli")
    X = _table()
    y = 0.1 * X["age"] + (X["colour"] == "red") + np.log(X["income"]) * X["score"]
    model = make_pipeline(
        ColumnTransformer([("onehot", OneHotEncoder(), ["colour"])], remainder="passthrough"), Ridge()
    ).fit(X, y)
    paths = {"model": folder / "model.joblib", "csv": folder / "data.csv", "folder": folder}
    joblib.dump(model, paths["model"])
    X.to_csv(paths["csv"], index=False)
    return paths


def _python_api(model_path, data, rows, background=None, **params):
    """The values the Python API gives for the command line's SETTINGS."""
    params = {"algorithm": "antithetic", "max_evals": 20, "random_state": 3, "background_size": 15} | params
    explainer = PermutationShapExplainer(joblib.load(model_path), progress=False, **params)
    explainer.fit(data if background is None else background)
    return explainer, explainer.explain(rows)


def _read_csv(path):
    return pd.read_csv(path, index_col="row", **exact_csv_options())


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "sklearn_shapq", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def _error(capsys, argv):
    """Run main(argv) expecting a user error: exit status 2 and one line on stderr, which is returned."""
    assert main([str(arg) for arg in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# ------------------------------------------------------------------------------------- version, help


def test_version_in_a_subprocess_imports_no_heavy_module():
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sklearn_shapq", "--version"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0
    assert result.stdout == f"sklearn-shapq {sklearn_shapq.__version__}\n"
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert not imported & {"shap", "xgboost", "matplotlib", "matplotlib.pyplot", "sklearn", "numba", "scipy"}


def test_version_and_help_in_process(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"sklearn-shapq {sklearn_shapq.__version__}\n"
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "explain" in out and "demo" in out and "``" not in out
    assert main(["explain", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--background", "--background-size", "--rows", "--algorithm", "--max-evals", "--output"):
        assert option in out
    for option in ("--random-state", "--n-jobs", "--device", "--no-progress", "--out", "--plots"):
        assert option in out
    assert "``" not in out and ":class:" not in out
    assert main(["demo", "--help"]) == 0
    assert "--seed" in capsys.readouterr().out


def test_usage_errors_exit_2(capsys):
    assert main([]) == 2
    assert main(["explain", "model.joblib", "data.csv", "--rows", "0"]) == 2
    assert main(["explain", "model.joblib", "data.csv", "--algorithm", "nope"]) == 2
    assert main(["explain", "model.joblib", "data.csv", "--max-evals", "-3"]) == 2
    capsys.readouterr()


# -------------------------------------------------------------------- explain: the Python API's values


def test_explain_in_a_subprocess_gives_the_python_api_values(files, tmp_path):
    out = tmp_path / "values.csv"
    result = _run("explain", files["model"], files["csv"], "--rows", "8", "--out", out, *SETTINGS)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    data = read_table(files["csv"])
    explainer, expected = _python_api(files["model"], data, data.iloc[:8])
    values = _read_csv(out)
    assert list(values.columns) == [*explainer.get_feature_names_out(), "base_value"]
    assert list(values.columns[:5]) == ["age", "colour", "income", "score", "height"]
    assert values.index.tolist() == list(range(8))
    np.testing.assert_array_equal(values.to_numpy()[:, :-1], expected.values)
    np.testing.assert_array_equal(values["base_value"].to_numpy(), expected.base_values)


def test_explain_in_process_background_file_row_range_and_stdout(files, tmp_path, capsys):
    data = read_table(files["csv"])
    background = _table(30, seed=1)[["height", "score", "income", "colour", "age"]]  # another order: reordered
    background_path = tmp_path / "background.csv"
    background.to_csv(background_path, index=False)
    argv = ["explain", files["model"], files["csv"], "--rows", "5:12", "--background", background_path, *SETTINGS]
    assert main([str(arg) for arg in argv + ["--no-progress"]]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # --no-progress: no bar, no summary line
    out = tmp_path / "stdout.csv"
    out.write_text(captured.out)
    background = read_table(background_path)[list(data.columns)]
    _, expected = _python_api(files["model"], data, data.iloc[5:12], background=background)
    values = _read_csv(out)
    assert values.index.tolist() == list(range(5, 12))
    np.testing.assert_array_equal(values.to_numpy()[:, :-1], expected.values)
    np.testing.assert_array_equal(values["base_value"].to_numpy(), expected.base_values)


def test_parquet_in_and_out_round_trip(files, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    data = read_table(files["csv"])
    data_path, out = tmp_path / "data.parquet", tmp_path / "values.parquet"
    data.to_parquet(data_path)
    assert main([str(a) for a in ["explain", files["model"], data_path, "--rows", "6", "--out", out, *SETTINGS]]) == 0
    assert "explained 6 rows" in capsys.readouterr().err  # the summary line
    _, expected = _python_api(files["model"], data, data.iloc[:6])
    values = pd.read_parquet(out)
    assert values.index.name == "row" and values.index.tolist() == list(range(6))
    assert values.dtypes.eq(np.float64).all()
    np.testing.assert_array_equal(values.to_numpy()[:, :-1], expected.values)
    np.testing.assert_array_equal(values["base_value"].to_numpy(), expected.base_values)


def test_xgboost_model_files(tmp_path, capsys):
    """A classifier's .json loads as XGBClassifier (a block per class); a raw Booster's .ubj as a Booster."""
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    y = np.digitize(X["a"] + X["b"], [-0.5, 0.5])
    data_path = tmp_path / "data.csv"
    X.to_csv(data_path, index=False)
    data = read_table(data_path)

    classifier = xgboost.XGBClassifier(n_estimators=3, max_depth=2).fit(X, y)
    classifier.save_model(tmp_path / "classifier.json")
    out = tmp_path / "classes.csv"
    argv = ["explain", tmp_path / "classifier.json", data_path, "--rows", "4", "--random-state", "0", "--out", out]
    assert main([str(a) for a in argv]) == 0
    loaded = xgboost.XGBClassifier()
    loaded.load_model(tmp_path / "classifier.json")
    explainer = PermutationShapExplainer(loaded, random_state=0, progress=False).fit(data)
    expected = explainer.explain(data.iloc[:4])
    values = _read_csv(out)
    names = list(explainer.get_feature_names_out())
    assert list(values.columns) == [
        *names[:3],
        "0__base_value",
        *names[3:6],
        "1__base_value",
        *names[6:],
        "2__base_value",
    ]
    for j in range(3):
        block = values[[*names[3 * j : 3 * j + 3], f"{j}__base_value"]].to_numpy()
        np.testing.assert_array_equal(block[:, :3], expected.values[:, :, j])
        np.testing.assert_array_equal(block[:, 3], expected.base_values[:, j])

    booster = xgboost.train({"objective": "reg:squarederror"}, xgboost.DMatrix(X.to_numpy(), label=y), 3)
    booster.save_model(tmp_path / "booster.ubj")
    argv = ["explain", tmp_path / "booster.ubj", data_path, "--rows", "3", "--random-state", "0", "--out", out]
    assert main([str(a) for a in argv]) == 0
    values = _read_csv(out)
    assert list(values.columns) == ["a", "b", "c", "base_value"]
    np.testing.assert_allclose(values.sum(axis=1), booster.predict(xgboost.DMatrix(X.to_numpy()[:3])), atol=1e-5)
    capsys.readouterr()


def test_plots_write_pngs(files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    folder = tmp_path / "plots"
    assert main([str(a) for a in ["explain", files["model"], files["csv"], "--plots", folder, *SETTINGS]]) == 0
    capsys.readouterr()
    names = sorted(path.name for path in folder.iterdir())
    assert names == ["bar.png", "beeswarm.png", "waterfall.png"]
    for path in folder.iterdir():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------------------------------- errors


def test_error_in_a_subprocess_is_one_line_without_traceback(files, tmp_path):
    result = _run("explain", tmp_path / "missing.joblib", files["csv"])
    assert result.returncode == 2
    assert result.stderr == f"sklearn-shapq explain: error: model file not found: {tmp_path / 'missing.joblib'}\n"
    assert result.stdout == ""


def test_missing_files(files, tmp_path, capsys):
    err = _error(capsys, ["explain", tmp_path / "missing.pkl", files["csv"]])
    assert "model file not found" in err and "missing.pkl" in err
    err = _error(capsys, ["explain", files["model"], tmp_path / "missing.csv"])
    assert "data file not found" in err and "missing.csv" in err
    err = _error(capsys, ["explain", files["model"], files["csv"], "--background", tmp_path / "bg.parquet"])
    assert "background file not found" in err


def test_unknown_extensions(files, tmp_path, capsys):
    model_txt = tmp_path / "model.txt"
    model_txt.write_text("x")
    err = _error(capsys, ["explain", model_txt, files["csv"]])
    assert "unknown extension '.txt'" in err and ".joblib" in err and ".ubj" in err
    data_xlsx = tmp_path / "data.xlsx"
    data_xlsx.write_text("x")
    err = _error(capsys, ["explain", files["model"], data_xlsx])
    assert "unknown extension '.xlsx'" in err and ".csv" in err and ".parquet" in err
    err = _error(capsys, ["explain", files["model"], files["csv"], "--out", tmp_path / "values.json"])
    assert "--out" in err and "unknown extension '.json'" in err


def test_models_that_do_not_load(files, tmp_path, capsys):
    bad_pickle = tmp_path / "model.pkl"
    bad_pickle.write_bytes(b"not a pickle")
    err = _error(capsys, ["explain", bad_pickle, files["csv"]])
    assert f"cannot load the model {bad_pickle} with joblib.load" in err
    assert "is it a file written by joblib.dump or pickle.dump?" in err
    pytest.importorskip("xgboost")
    bad_json = tmp_path / "model.json"
    bad_json.write_text('{"not": "a model"}')
    err = _error(capsys, ["explain", bad_json, files["csv"]])
    assert f"cannot load the model {bad_json} with xgboost.Booster" in err


def test_columns_that_do_not_match_the_model(files, tmp_path, capsys):
    data = pd.read_csv(files["csv"]).drop(columns=["income"]).assign(target=1.0)
    wrong = tmp_path / "wrong.csv"
    data.to_csv(wrong, index=False)
    err = _error(capsys, ["explain", files["model"], wrong])
    assert "do not match the model's features: missing 'income'; extra 'target'" in err
    # a model fitted without feature names: the number of columns is checked
    X = _table().drop(columns=["colour"]).to_numpy()
    unnamed = tmp_path / "unnamed.pkl"
    with open(unnamed, "wb") as file:  # a plain pickle, loaded by joblib.load too
        pickle.dump(Ridge().fit(X[:, :3], X[:, 3]), file)
    err = _error(capsys, ["explain", unnamed, files["csv"]])
    assert "the model takes 3 columns (it has no feature names), but" in err and "has 5" in err


def test_an_unnamed_model_explains_its_columns(tmp_path, capsys):
    X = _table().drop(columns=["colour"]).to_numpy()
    model = Ridge().fit(X[:, :3], X[:, 3])
    path, data_path = tmp_path / "ridge.pickle", tmp_path / "data.csv"
    with open(path, "wb") as file:
        pickle.dump(model, file)
    pd.DataFrame(X[:, :3], columns=["p", "q", "r"]).to_csv(data_path, index=False)
    assert main([str(a) for a in ["explain", path, data_path, "--rows", "2", "--random-state", "0"]]) == 0
    values = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col="row")
    assert list(values.columns) == ["p", "q", "r", "base_value"]
    np.testing.assert_allclose(values.sum(axis=1), model.predict(X[:2, :3]))


def test_what_the_explainer_refuses_is_one_line(files, capsys):
    err = _error(capsys, ["explain", files["model"], files["csv"], "--output", "probability"])
    assert "cannot explain" in err and "predict_proba" in err
    err = _error(capsys, ["explain", files["model"], files["csv"], "--rows", "100:"])
    assert "--rows selects no rows" in err


@pytest.mark.parametrize(
    ("missing", "argv_tail", "message"),
    [
        ("pyarrow", ["--out", "values.parquet"], "needs pyarrow or fastparquet"),
        ("matplotlib", ["--plots", "plots"], "--plots needs matplotlib"),
    ],
)
def test_missing_optional_dependencies(files, tmp_path, capsys, monkeypatch, missing, argv_tail, message):
    absent = {missing, "fastparquet"} if missing == "pyarrow" else {missing}
    real = _cli._installed
    monkeypatch.setattr(_cli, "_installed", lambda module: module not in absent and real(module))
    tail = [str(tmp_path / argv_tail[1]) if i == 1 else arg for i, arg in enumerate(argv_tail)]
    err = _error(capsys, ["explain", files["model"], files["csv"], *tail])
    assert message in err and "pip install" in err


def test_missing_parquet_engine_for_data_and_xgboost_for_json(files, tmp_path, capsys, monkeypatch):
    real = _cli._installed
    monkeypatch.setattr(_cli, "_installed", lambda m: m not in {"pyarrow", "fastparquet", "xgboost"} and real(m))
    data = tmp_path / "data.parquet"
    data.write_bytes(b"PAR1")
    err = _error(capsys, ["explain", files["model"], data])
    assert "reading the Parquet file" in err and "pip install pyarrow" in err
    model = tmp_path / "model.json"
    model.write_text("{}")
    err = _error(capsys, ["explain", model, files["csv"]])
    assert "needs xgboost" in err and "pip install" in err


def test_demo_keeps_its_options(monkeypatch):
    import sklearn_shapq._demo

    calls = []
    monkeypatch.setattr(sklearn_shapq._demo, "run_demo", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(_cli, "_installed", lambda module: True)  # the demo's xgboost and matplotlib
    assert main(["demo", "--out", "plots", "--rows", "5", "--seed", "2"]) == 0
    assert main(["demo"]) == 0
    assert calls == [{"out": "plots", "n_rows": 5, "seed": 2}, {"out": "demo_output", "n_rows": 100, "seed": 0}]
