"""Backends: device resolution, and the CUDA backend's array code through its numpy twin."""

import os
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest

from sklearn_shapq import DeviceUnavailableError, PermutationShapExplainer
from sklearn_shapq.backends import ArrayBackend, CpuBackend, _cpu, _device, resolve_backend
from sklearn_shapq.backends._array_ops import repeat_counts
from sklearn_shapq.backends._oblivious_fit import _fit_kernel, compile_fit_kernel
from sklearn_shapq.backends._paired_regression import _regression_kernel, compile_regression_kernel

from strict_twin import HostTransferError, StrictBackend


def _has_gpu():
    return _device._cuda_device_count() > 0


def _inputs(seed=0, pairs=7, d=5, n_background=4):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(pairs, d)), rng.random((pairs, d)) < 0.5, rng.normal(size=(n_background, d))


def _reference_rows(x, masks, background):
    rows = []
    for xp_row, mask in zip(x, masks, strict=True):
        for z in background:
            rows.append(np.where(mask, xp_row, z))
    return np.array(rows)


@pytest.mark.parametrize("backend", [CpuBackend(), ArrayBackend(np, "numpy-twin")])
def test_masked_rows_match_reference(backend):
    x, masks, background = _inputs()
    np.testing.assert_array_equal(backend.masked_rows(x, masks, background), _reference_rows(x, masks, background))


@pytest.mark.parametrize("backend", [CpuBackend(), ArrayBackend(np, "numpy-twin")])
def test_masked_rows_fill_a_given_buffer(backend):
    rng = np.random.default_rng(7)
    x, masks, background = rng.normal(size=(3, 4)), rng.random((3, 4)) < 0.5, rng.normal(size=(5, 4))
    out = np.full((15, 4), np.nan)
    assert backend.masked_rows(x, masks, background, out) is out
    np.testing.assert_array_equal(out, backend.masked_rows(x, masks, background))


def test_background_mean():
    outputs = np.arange(12.0).reshape(6, 2)
    np.testing.assert_allclose(ArrayBackend(np).background_mean(outputs, 3), [[2.0, 3.0], [8.0, 9.0]])


def test_resolve_backend():
    assert isinstance(resolve_backend("cpu"), CpuBackend)
    assert resolve_backend(" CPU ").name == "cpu"
    twin = ArrayBackend(np, "twin")
    assert resolve_backend(twin) is twin
    if not _has_gpu():
        assert isinstance(resolve_backend("auto"), CpuBackend)
    with pytest.raises(ValueError, match="Unknown device"):
        resolve_backend("tpu")
    with pytest.raises(TypeError, match="device"):
        resolve_backend(3)


@pytest.mark.skipif(_has_gpu(), reason="a GPU is present")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_without_gpu_is_a_clear_error(device):
    with pytest.raises(DeviceUnavailableError, match="CUDA"):
        resolve_backend(device)
    with pytest.raises(DeviceUnavailableError):
        PermutationShapExplainer(lambda Z: Z.sum(1), device=device).fit(np.zeros((3, 2)))


def test_backends_pickle():
    assert isinstance(pickle.loads(pickle.dumps(CpuBackend())), CpuBackend)
    twin = pickle.loads(pickle.dumps(ArrayBackend(np, "twin")))
    assert twin.xp is np and twin.name == "twin"


def test_compile_ahead_starts_once_the_model_rows_are_written(monkeypatch):
    """Announced kernels compile in a background thread from the next model rows on, once per process."""
    compiled = []
    monkeypatch.setattr(_cpu, "_compiled_ahead", set())
    monkeypatch.setattr(
        _cpu, "_KERNEL_COMPILERS", {"paired_regression": lambda: compiled.append(threading.current_thread().name)}
    )
    with pytest.raises(ValueError, match="no kernel to compile ahead"):
        CpuBackend().compile_ahead("masked_rows")
    ArrayBackend(np).compile_ahead("masked_rows")  # nothing to compile in array code
    for _ in range(2):  # the second backend finds the kernel compiled
        backend = CpuBackend()
        backend.compile_ahead("paired_regression")
        assert not any(thread.name == "sklearn_shapq-compile" for thread in threading.enumerate())
        backend.masked_rows(*_inputs())
        for thread in threading.enumerate():
            if thread.name == "sklearn_shapq-compile":
                thread.join()
    assert compiled == ["sklearn_shapq-compile"]


def test_compile_ahead_sends_later_kernels_not_on_disk_to_a_child(monkeypatch):
    """The first kernel waits for the rows (a thread); a later one not on disk goes to a child now, awaited on use."""
    started, waited = [], []

    class Child:
        def __init__(self, command, **_):
            started.append(command)

        def poll(self):
            return None  # still compiling

        def wait(self, timeout=None):
            waited.append(timeout)

    monkeypatch.setattr(_cpu, "_compiled_ahead", set())
    monkeypatch.setattr(_cpu, "_compiling_elsewhere", {})
    monkeypatch.setattr(_cpu.subprocess, "Popen", Child)
    monkeypatch.setattr(_cpu, "_KERNEL_COMPILERS", {**_cpu._KERNEL_COMPILERS, "paired_regression": lambda: None})
    for on_disk in (True, False):
        monkeypatch.setattr(_cpu, "_on_disk", lambda operation, on_disk=on_disk: on_disk)
        _cpu._compiled_ahead.clear()
        backend = CpuBackend()
        backend.compile_ahead("paired_regression", "fit_oblivious_trees")
        here = ("paired_regression", "fit_oblivious_trees") if on_disk else ("paired_regression",)
        assert backend._compile_after_rows.operations == here
    (command,) = started
    assert command[0] and "compile_fit_kernel()" in command[-1]
    assert "paired_regression" not in _cpu._compiling_elsewhere
    CpuBackend().fit_oblivious_trees(
        np.ones((1, 2, 3), dtype=bool), np.ones((1, 2, 1)), np.ones((1, 2, 1)), 1, 1, 1.0, 1.0
    )
    assert waited == [_cpu._CHILD_COMPILE_TIMEOUT] and not _cpu._compiling_elsewhere


@pytest.mark.parametrize("failure", [OSError("no processes here"), TypeError("expected str, not NoneType")])
def test_compile_ahead_without_a_child_compiles_here(monkeypatch, failure):
    """No process can start (a sandbox, no executable): the kernel stays with this process's thread."""

    def refuse(*args, **kwargs):
        raise failure

    monkeypatch.setattr(_cpu, "_compiled_ahead", set())
    monkeypatch.setattr(_cpu, "_compiling_elsewhere", {})
    monkeypatch.setattr(_cpu.subprocess, "Popen", refuse)
    monkeypatch.setattr(_cpu, "_on_disk", lambda operation: False)
    backend = CpuBackend()
    backend.compile_ahead("paired_regression", "fit_oblivious_trees")
    assert backend._compile_after_rows.operations == ("paired_regression", "fit_oblivious_trees")
    assert not _cpu._compiling_elsewhere


@pytest.mark.parametrize(
    ("executable", "frozen", "runs"),
    [
        ("/usr/bin/python3.11", False, True),
        ("C:\\Python311\\pythonw.exe", False, True),
        ("/opt/pypy3/bin/pypy3", False, True),
        ("/usr/sbin/uwsgi", False, False),  # a host program: -c would start it anew
        ("/app/dist/myapp", True, False),  # a frozen application
        (None, False, False),  # an embedded interpreter
    ],
)
def test_a_child_runs_only_a_python_interpreter(monkeypatch, executable, frozen, runs):
    monkeypatch.setattr(_cpu.multiprocessing.spawn, "get_executable", lambda: executable)
    monkeypatch.setattr(_cpu.sys, "frozen", frozen, raising=False)
    assert (_cpu._python_executable() is not None) == runs


def test_a_child_that_overruns_is_killed_and_reaped_then_forgotten(monkeypatch):
    """The operation waits at most _CHILD_COMPILE_TIMEOUT, kills the child and waits for its exit; finished children
    are forgotten by the next compile_ahead, whether or not their operation ran."""
    calls = []

    class Slow:
        def wait(self, timeout=None):
            calls.append(("wait", timeout))
            if timeout is not None:
                raise subprocess.TimeoutExpired("python", timeout)

        def kill(self):
            calls.append(("kill", None))

    class Done:
        def poll(self):
            return 0

    monkeypatch.setattr(_cpu, "_compiling_elsewhere", {"fit_oblivious_trees": Slow(), "paired_regression": Done()})
    _cpu._await_compiled_elsewhere("fit_oblivious_trees")
    assert calls == [("wait", _cpu._CHILD_COMPILE_TIMEOUT), ("kill", None), ("wait", None)]
    assert list(_cpu._compiling_elsewhere) == ["paired_regression"]
    monkeypatch.setattr(_cpu, "_compiled_ahead", {"paired_regression", "fit_oblivious_trees"})
    CpuBackend().compile_ahead("paired_regression")
    assert not _cpu._compiling_elsewhere


def test_first_explain_on_an_empty_cache_loads_the_childs_kernel(tmp_path):
    """A fresh process, an empty numba cache: the surrogates' tree kernel comes from the child, through the disk."""
    script = (
        "import numpy as np\n"
        "from sklearn_shapq import PermutationShapExplainer\n"
        "from sklearn_shapq.backends._oblivious_fit import _fit_kernel\n"
        "from sklearn_shapq.backends._paired_regression import _regression_kernel\n"
        "X = np.random.default_rng(0).normal(size=(32, 12))\n"
        "PermutationShapExplainer(lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 2], algorithm='leverage_cv', random_state=0,"
        " progress=False).fit(X[:30]).explain(X[30:])\n"
        "print(sum(_fit_kernel.stats.cache_hits.values()), sum(_fit_kernel.stats.cache_misses.values()),"
        " sum(_regression_kernel.stats.cache_misses.values()))\n"
    )
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environment, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "0", "1"]  # tree kernel loaded (the child's), regression compiled here


def test_kernels_compiled_ahead_are_those_an_explain_runs():
    """The tiny calls that compile ahead give the kernels' one signature: an explain compiles nothing more."""
    compile_regression_kernel()
    compile_fit_kernel()
    signatures = _regression_kernel.signatures, _fit_kernel.signatures
    X = np.random.default_rng(0).normal(size=(32, 12))  # 12 features: pairs sampled, surrogates fitted
    PermutationShapExplainer(lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 2], algorithm="leverage_cv", random_state=0).fit(
        X[:30]
    ).explain(X[30:])
    assert (_regression_kernel.signatures, _fit_kernel.signatures) == signatures
    assert len(signatures[0]) == len(signatures[1]) == 1


@pytest.mark.parametrize(
    "algorithm",
    ["exact", "antithetic", "mc", "orthogonal", "sobol", "herding", "sbq", "owen", "owen_halved", "stratified"],
)
def test_array_twin_explainer_equals_cpu(algorithm):
    """The whole explain path with the array-namespace code the CUDA backend runs (xp = numpy)."""
    rng = np.random.default_rng(1)
    coef = rng.normal(size=6)

    def f(Z):
        return np.tanh(Z @ coef) + Z[:, 0] * Z[:, 3]

    background, X = rng.normal(size=(30, 6)), rng.normal(size=(5, 6))
    budget = 300 if algorithm == "stratified" else 120
    kwargs = dict(algorithm=algorithm, max_evals=budget, random_state=3, background_size=None)
    cpu = PermutationShapExplainer(f, device="cpu", **kwargs).fit(background).explain(X)
    twin = PermutationShapExplainer(f, device=ArrayBackend(np, "twin"), **kwargs).fit(background).explain(X)
    np.testing.assert_allclose(twin.values, cpu.values, atol=1e-13)
    np.testing.assert_allclose(twin.error_std, cpu.error_std, atol=1e-13)


@pytest.mark.gpu
def test_cuda_masked_rows_kernel_equals_numpy_twin():
    import cupy

    backend = resolve_backend("cuda")
    x, masks, background = _inputs(pairs=257, d=13, n_background=31)
    gpu = backend.masked_rows(cupy.asarray(x), cupy.asarray(masks), cupy.asarray(background))
    np.testing.assert_array_equal(cupy.asnumpy(gpu), ArrayBackend(np).masked_rows(x, masks, background))


@pytest.mark.gpu
@pytest.mark.parametrize("algorithm", ["antithetic", "orthogonal", "sbq", "stratified"])
def test_cuda_explainer_equals_cpu_with_xgboost(algorithm):
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8))
    y = X[:, 0] * X[:, 1] + X[:, 2]
    model = xgboost.XGBRegressor(n_estimators=20, max_depth=3).fit(X, y)
    kwargs = dict(algorithm=algorithm, max_evals=520, random_state=0, background_size=50)
    cpu = PermutationShapExplainer(model, device="cpu", **kwargs).fit(X).explain(X[:10])
    gpu = PermutationShapExplainer(model, device="cuda", **kwargs).fit(X).explain(X[:10])
    if algorithm != "stratified":
        np.testing.assert_allclose(gpu.values, cpu.values, atol=1e-5)
        return
    # stratified spreads its second phase by the first phase's variances: xgboost's float32 outputs differ
    # between the devices in the last bits, so can one stratum's share (seen on an H100): within the errors
    allowed = 5 * np.hypot(gpu.error_std, cpu.error_std) + 1e-5
    assert (np.abs(gpu.values - cpu.values) <= allowed).all()


def test_strict_twin_refuses_what_cupy_refuses_and_counts_what_comes_back():
    """The strict twin (tests/strict_twin.py) that GPU-path tests run on: host arrays, lists and
    implicit conversions are refused; explicit copies and scalars are counted."""
    backend = StrictBackend()
    xp = backend.xp
    a = xp.arange(4)
    refused = (
        lambda: a + np.arange(4),
        lambda: xp.concatenate([[0], a]),
        lambda: np.asarray(a),
        lambda: a[np.array([0, 1])],
        lambda: a.__setitem__(slice(None), np.zeros(4)),
    )
    for mix in refused:
        with pytest.raises(HostTransferError):
            mix()
    assert int(a[-1]) == 3 and bool((a < 4).all()) and backend.transfers.scalars == 2
    np.testing.assert_array_equal(backend.to_numpy(xp.where(a > 1, a * 2, 0)), [0, 0, 4, 6])
    assert backend.transfers.arrays == [(4,)]


@pytest.mark.parametrize("backend", [ArrayBackend(np), StrictBackend()], ids=["numpy", "strict twin"])
def test_repeat_counts_is_numpy_repeat(backend):
    rng = np.random.default_rng(0)
    values, counts = rng.integers(0, 100, 50), rng.integers(0, 4, 50)
    repeated = repeat_counts(backend.to_device(values), backend.to_device(counts), backend.xp)
    np.testing.assert_array_equal(backend.to_numpy(repeated), np.repeat(values, counts))
    empty = repeat_counts(backend.to_device(values[:0]), backend.to_device(counts[:0]), backend.xp)
    assert empty.shape == (0,)


def test_cuda_sources_include_no_headers():
    """NVRTC, which compiles cupy's kernels, has no C++ standard headers: ``#include <cfloat>`` failed on an H100."""
    from sklearn_shapq.backends import _cuda
    from sklearn_shapq.backends._feistel import CUDA_KEYED_ORDERINGS
    from sklearn_shapq.backends._product_kernel import CUDA_PAIR_QUADRATURE

    for source in (_cuda._MASKED_ROWS_SOURCE, CUDA_KEYED_ORDERINGS, CUDA_PAIR_QUADRATURE):
        assert "#include" not in source
