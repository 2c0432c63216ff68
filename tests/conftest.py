"""Shared test fixtures: the one GPU skip, a dask cluster, and the test helpers' folder on the import path."""

from __future__ import annotations

import pytest


def has_gpu() -> bool:
    """Whether cupy and a CUDA device are usable here."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no cupy, or no driver / device
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every test marked ``gpu`` when no GPU is present (the one GPU skip of the suite)."""
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs cupy and a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def dask_client():
    """A distributed client on a local cluster of 2 single-threaded in-process workers (tasks are still pickled)."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=40
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client
