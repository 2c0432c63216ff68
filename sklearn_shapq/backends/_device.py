"""Turn the public ``device=`` parameter into a backend object."""

from __future__ import annotations

import re

from sklearn_shapq.backends._array_ops import ArrayBackend
from sklearn_shapq.backends._cpu import CpuBackend

_CUDA_PATTERN = re.compile(r"^cuda(?::(\d+))?$")


class DeviceUnavailableError(RuntimeError):
    """Raised when ``device="cuda"`` is asked for on a machine without cupy or a CUDA device."""


def _cuda_device_count() -> int:
    try:
        import cupy
    except Exception:  # ImportError, or a broken CUDA install raising at import
        return 0
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # cupy installed but no driver / device
        return 0


def resolve_backend(device: str | ArrayBackend = "cpu") -> ArrayBackend:
    """Return the backend for ``device``.

    Parameters
    ----------
    device : {"cpu", "cuda", "cuda:N", "auto"} or ArrayBackend
        "auto": CUDA device 0 when cupy and a GPU are present, else the CPU.

    Returns
    -------
    ArrayBackend

    Raises
    ------
    ValueError
        An unknown device string.
    DeviceUnavailableError
        CUDA asked for without cupy or a GPU (no silent fallback).

    Examples
    --------
    >>> resolve_backend("cpu").name
    'cpu'
    """
    if isinstance(device, ArrayBackend):
        return device
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cpu', 'cuda', 'cuda:1' or 'auto', got {device!r}")
    spec = device.strip().lower()
    if spec == "cpu":
        return CpuBackend()
    if spec == "auto":
        return _cuda_backend(0) if _cuda_device_count() > 0 else CpuBackend()
    match = _CUDA_PATTERN.match(spec)
    if match is None:
        raise ValueError(f"Unknown device {device!r}; use 'cpu', 'cuda', 'cuda:N' or 'auto'.")
    index = int(match.group(1) or 0)
    count = _cuda_device_count()
    if count == 0:
        raise DeviceUnavailableError(
            f"device={device!r} needs cupy and a CUDA GPU, and none was found. On a machine with a GPU, install "
            "the extra for its CUDA: 'gpu' for CUDA 12, 'gpu-cuda13' for CUDA 13 (from a checkout: "
            "pip install -e '.[gpu]'); or use device='cpu'."
        )
    if index >= count:
        raise DeviceUnavailableError(f"device={device!r}: only {count} CUDA device(s) are visible.")
    return _cuda_backend(index)


def _cuda_backend(index: int) -> ArrayBackend:
    from sklearn_shapq.backends._cuda import CudaBackend

    return CudaBackend(index)
