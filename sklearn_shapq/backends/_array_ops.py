"""Backend written against an array namespace ``xp``.

The CUDA backend subclasses :class:`ArrayBackend` with ``xp = cupy`` and swaps in custom kernels;
with ``xp = numpy`` the very same code runs in CI, which is how the GPU code path is tested on
machines without a GPU (DESIGN.md, "Backends").
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from types import ModuleType
from typing import Any

import numpy as np


class ArrayBackend:
    """Array-namespace backend: every operation is plain ``xp`` array code.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``.
    name : str
        Name reported in explanations and errors.
    """

    def __init__(self, xp: ModuleType = np, name: str = "array") -> None:
        self.xp = xp
        self.name = name

    def __reduce__(self) -> tuple:
        # modules do not pickle; rebuild from the namespace name instead
        return (_rebuild_array_backend, (self.xp.__name__, self.name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    @property
    def is_gpu(self) -> bool:
        """Whether arrays of this backend live on a GPU."""
        return self.xp is not np

    def activate(self) -> AbstractContextManager:
        """Context in which this backend's arrays are created (the CUDA device; nothing on CPU)."""
        return nullcontext()

    def to_device(self, a: Any, dtype: Any = None) -> Any:
        """Return ``a`` as an array of this backend."""
        return self.xp.asarray(a, dtype=dtype)

    def to_numpy(self, a: Any) -> np.ndarray:
        """Return ``a`` as a host numpy array."""
        if isinstance(a, np.ndarray):
            return a
        get = getattr(a, "get", None)
        return np.asarray(get() if get is not None else a)

    def masked_rows(self, x: Any, masks: Any, background: Any) -> Any:
        """Model input rows of the interventional game.

        Row ``p * N + n`` holds ``x[p, j]`` where ``masks[p, j]`` is true and ``background[n, j]``
        elsewhere: one block of N rows per (explained row, coalition) pair ``p``.

        Parameters
        ----------
        x : array of shape (P, d)
            The explained row of each pair.
        masks : bool array of shape (P, d)
            The coalition of each pair.
        background : array of shape (N, d)
            Background rows.

        Returns
        -------
        array of shape (P * N, d)
        """
        xp = self.xp
        rows = xp.where(masks[:, None, :], x[:, None, :], background[None, :, :])
        return rows.reshape(masks.shape[0] * background.shape[0], masks.shape[1])

    def background_mean(self, outputs: Any, n_background: int) -> Any:
        """Average ``outputs`` of shape (P * N, k) over consecutive blocks of N rows → (P, k)."""
        k = outputs.shape[1]
        return outputs.reshape(-1, n_background, k).mean(axis=1)


def _rebuild_array_backend(module_name: str, name: str) -> ArrayBackend:
    import importlib

    return ArrayBackend(importlib.import_module(module_name), name)
