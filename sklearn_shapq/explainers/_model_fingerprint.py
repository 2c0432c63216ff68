"""A fingerprint of a fitted model's state: an exact path read at ``fit`` is refused once the model changes.

An exact path keeps what it read from the model (trees, weights, a dual form); a model refitted in place
may still give the same outputs on the background and the explained rows and others on the hybrid rows,
which outputs alone cannot reveal. The fingerprint hashes the model's whole pickled state, every fitted
attribute and parameter, so any such change is seen.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from joblib.hashing import NumpyHasher
from sklearn.neighbors import BallTree, KDTree


class _FittedStateHasher(NumpyHasher):
    """joblib's hasher, with two exceptions that keep a model's hash through a pickle and through its queries.

    A k-NN search tree counts by its arrays (its query counters change at each query); an array by its
    dtype, shape and bytes (joblib's counts its strides, which an empty array changes when unpickled).
    """

    def save(self, obj: Any) -> None:
        if isinstance(obj, (KDTree, BallTree)):
            data, indices, nodes, _ = obj.get_arrays()
            obj = (type(obj).__name__, np.asarray(data), np.asarray(indices), np.asarray(nodes))
        elif isinstance(obj, np.ndarray) and not obj.dtype.hasobject:
            obj = ("ndarray", obj.dtype.str, obj.shape, np.ascontiguousarray(obj).tobytes())
        super().save(obj)


def model_fingerprint(model: Any) -> str:
    """Return a hash of ``model``'s state (its parameters and fitted attributes, nested estimators included).

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> model = Ridge().fit(X, X[:, 0])
    >>> before = model_fingerprint(model)
    >>> before == model_fingerprint(model.fit(X, X[:, 0])), before == model_fingerprint(model.fit(X, X[:, 1]))
    (True, False)
    """
    return str(_FittedStateHasher().hash(model))
