"""Shared test fixtures: the one GPU skip, a dask cluster, hypothesis profiles, the test helpers' folder on the path."""

from __future__ import annotations

import importlib.util
import os

import pytest

try:
    from hypothesis import Phase, settings
except ImportError:  # only the property-based modules need hypothesis
    settings = None
else:
    # "ci" (the default): few examples, derandomized so that a CI run is reproducible, no example database in the
    # working tree, one falsifying example a test (shrinking several is what makes a failing run slow). "long": many
    # random examples, every distinct failure, to hunt for them (HYPOTHESIS_PROFILE=long python -m pytest ...).
    settings.register_profile(
        "ci",
        max_examples=100,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        report_multiple_bugs=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],  # no slow "explain" phase
    )
    settings.register_profile("long", max_examples=2000, deadline=None, database=None, print_blob=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def has_gpu() -> bool:
    """Whether cupy and a CUDA device are usable here."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no cupy, or no driver / device
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every test marked ``gpu`` when no GPU is present (the one GPU skip of the suite), and the doctests of
    ``sklearn_shapq.dask`` when dask is not installed (the ``[dask]`` extra; the test extras have it)."""
    gpu, dask = has_gpu(), importlib.util.find_spec("dask") is not None
    for item in items:
        if "gpu" in item.keywords and not gpu:
            item.add_marker(pytest.mark.skip(reason="needs cupy and a CUDA device"))
        if isinstance(item, pytest.DoctestItem) and item.name.startswith("sklearn_shapq.dask.") and not dask:
            item.add_marker(pytest.mark.skip(reason="needs dask (the [dask] extra)"))


@pytest.fixture(scope="session")
def dask_client():
    """A distributed client on a local cluster of 2 single-threaded in-process workers (tasks are still pickled);
    its tests are skipped where dask's distributed is not installed."""
    distributed = pytest.importorskip("distributed")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=40
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client
