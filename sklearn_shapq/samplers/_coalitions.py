"""Random coalitions from uniform draws: uniform among the coalitions of a given size."""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.samplers._keyed import uniform_ranks


def sized_coalitions(uniforms: Any, sizes: Any, excluded: Any = None, xp: Any = np) -> Any:
    """Coalitions uniform among those of the given sizes: the ``sizes[r]`` players of smallest draw.

    Parameters
    ----------
    uniforms : float array of shape (r, d)
    sizes : int array of shape (r,)
    excluded : int array of shape (r,), optional
        A player never in coalition r, for samples of N ∖ {i}.
    xp : module, default=numpy

    Returns
    -------
    bool array of shape (r, d)

    Examples
    --------
    >>> u = np.array([[0.5, 0.1, 0.9, 0.3]])
    >>> sized_coalitions(u, np.array([2])).astype(int), sized_coalitions(u, np.array([2]), np.array([1])).astype(int)
    (array([[0, 1, 0, 1]]), array([[1, 0, 0, 1]]))
    """
    if excluded is not None:
        uniforms = uniforms.copy()
        uniforms[xp.arange(uniforms.shape[0]), xp.asarray(excluded)] = xp.inf
    return uniform_ranks(uniforms, xp) < xp.asarray(sizes)[:, None]
