"""Compute backends: device resolution, array namespace and hot-loop kernels.

``resolve_backend(device)`` turns the public ``device=`` parameter into a backend object that the
games and estimators receive. Every backend offers the same small set of operations:

* ``xp``: the array namespace (numpy or cupy);
* ``masked_rows(x, masks, background)``: the model input rows of an interventional game;
* ``background_mean(outputs, n_background)``: average model outputs over background rows;
* ``to_device`` / ``to_numpy``: move arrays in and out.

No module here imports cupy at import time, so the package imports without a GPU.
"""

from sklearn_shapq.backends._array_ops import ArrayBackend
from sklearn_shapq.backends._cpu import CpuBackend
from sklearn_shapq.backends._device import DeviceUnavailableError, resolve_backend

__all__ = ["ArrayBackend", "CpuBackend", "DeviceUnavailableError", "resolve_backend"]
