"""Public entry point ``sample_permutations``: a weighted set of orderings from any sampler."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, validate_params

from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import RANDOM_STATE, RegistryNames
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.samplers._keyed import draw_seed
from sklearn_shapq.samplers._mallows import DEFAULT_LAMBDA
from sklearn_shapq.samplers._sources import DEFAULT_CANDIDATES, ORDERING_SOURCES, make_source


@validate_params(
    {
        "source": [RegistryNames(ORDERING_SOURCES)],
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
        "lam": [Interval(Real, 0, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def sample_permutations(
    source: Any,  # a registered name (str); the body rebinds it to the OrderingSource it makes
    n_permutations: int,
    n_features: int,
    *,
    random_state: Any = None,
    lam: float = DEFAULT_LAMBDA,
    n_candidates: int = DEFAULT_CANDIDATES,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw a weighted set of permutations for Shapley estimation.

    Each ordering is uniform on the permutations and the weights sum to 1, so estimates are unbiased
    and exactly efficient. This is the set one explained row walks (row key 0).

    Parameters
    ----------
    source : {"mc", "antithetic", "orthogonal", "sobol", "herding", "sbq"}
        - "mc": i.i.d. uniform orderings.
        - "antithetic": an ordering and its reverse (rows 2i, 2i + 1).
        - "orthogonal": blocks of 2 (d − 1) orderings from a Haar-random orthonormal basis and its antipodes.
        - "sobol": scrambled Sobol points on S^{d−2} through the polar map.
        - "herding": kernel herding with the Mallows kernel.
        - "sbq": sequential Bayesian quadrature, weighted; at most 2000 orderings.

        Herding and SBQ enumerate all d! orderings when ``n_permutations >= d!``.
    n_permutations : int
        At least 1.
    n_features : int
        At least 1.
    random_state : None, int or Generator
        An int gives the same set on every call.
    lam : float, default=4.0
        Mallows bandwidth of herding and SBQ.
    n_candidates : int, default=25
        Candidates per greedy step of herding and SBQ.

    Returns
    -------
    orderings : int32 array of shape (n_permutations, n_features)
        The order in which features join.
    weights : float64 array of shape (n_permutations,)
        Summing to 1; uniform except for SBQ.

    Examples
    --------
    >>> orderings, weights = sample_permutations("antithetic", 4, 5, random_state=0)
    >>> bool((orderings[1] == orderings[0][::-1]).all()), float(weights.sum())
    (True, 1.0)
    >>> orderings, weights = sample_permutations("sbq", 20, 10, random_state=0)
    >>> orderings.shape, round(float(weights.sum()), 12)
    ((20, 10), 1.0)
    """
    n, d = int(n_permutations), int(n_features)
    rng = make_generator(random_state, stream=1)
    if d == 1:
        return np.zeros((n, 1), dtype=np.int32), np.full(n, 1.0 / n)
    refusal = ORDERING_SOURCES[source].too_many(n, d)
    if refusal is not None:
        raise ValueError(refusal)
    source = make_source(source, n, d, draw_seed(rng), lam=lam, n_candidates=n_candidates)
    orderings = source.orderings(np.zeros(1, dtype=np.uint64), 0, source.n_units, CpuBackend())[0]
    return np.ascontiguousarray(orderings, dtype=np.int32), source.ordering_weights(n)
