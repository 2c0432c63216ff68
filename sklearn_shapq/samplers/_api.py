"""Public entry point ``sample_permutations``: a weighted set of orderings from any sampler."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import RANDOM_STATE
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.samplers._keyed import draw_seed
from sklearn_shapq.samplers._mallows import DEFAULT_LAMBDA
from sklearn_shapq.samplers._sources import DEFAULT_CANDIDATES, ORDERING_SOURCES, make_source


@validate_params(
    {
        "method": [StrOptions(set(ORDERING_SOURCES))],
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
        "lam": [Interval(Real, 0, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def sample_permutations(
    method: str,
    n_permutations: int,
    n_features: int,
    *,
    random_state: Any = None,
    lam: float = DEFAULT_LAMBDA,
    n_candidates: int = DEFAULT_CANDIDATES,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw a weighted set of permutations for Shapley estimation.

    Every method gives orderings that are each uniform on the permutations, so the weighted
    estimator Σ_k w_k g_i(p_k) is unbiased and, since Σ w = 1, exactly efficient. This is the set
    one explained row walks (the row key 0).

    Parameters
    ----------
    method : {"mc", "antithetic", "orthogonal", "sobol", "herding", "sbq"}
        - "mc": i.i.d. uniform orderings from the keyed bijective generator.
        - "antithetic": pairs of an ordering and its reverse (rows 2i, 2i + 1); an odd count ends
          with one extra independent ordering.
        - "orthogonal": orthogonal spherical codes: a Haar-random orthonormal basis of R^{d−1} and
          its antipodes give blocks of 2 (d − 1) orderings (pairs of reverses); the last block is
          cut short when needed (still unbiased).
        - "sobol": scrambled Sobol points on S^{d−2} through the corrected polar map and an exact
          inverse CDF; d = 2 has no angle to sample and alternates the two orderings (exact there).
        - "herding": kernel herding with the Mallows kernel, ``n_candidates`` keyed uniform
          candidates per step.
        - "sbq": sequential Bayesian quadrature with the same kernel and candidates; weights are
          the Bayesian-quadrature weights normalised to sum to 1; at most 2000 orderings.

        Herding and SBQ enumerate all d! orderings instead when ``n_permutations >= d!``
        (d <= 8): their greedy steps would only repeat permutations.
    n_permutations : int
        Number of orderings, at least 1.
    n_features : int
        Number of features d, at least 1.
    random_state : None, int or Generator
        Seed; an int gives the same set on every call.
    lam : float, default=4.0
        Mallows bandwidth of herding and SBQ.
    n_candidates : int, default=25
        Candidates per greedy step of herding and SBQ.

    Returns
    -------
    orderings : int32 array of shape (n_permutations, n_features)
        Row k is the order in which features join the coalition.
    weights : float64 array of shape (n_permutations,)
        Weights summing to 1: uniform except for SBQ (and enumeration with repeats).

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
    refusal = ORDERING_SOURCES[method].too_many(n, d)
    if refusal is not None:
        raise ValueError(refusal)
    source = make_source(method, n, d, draw_seed(rng), lam=lam, n_candidates=n_candidates)
    orderings = source.orderings(np.zeros(1, dtype=np.uint64), 0, source.n_units, CpuBackend())[0]
    return np.ascontiguousarray(orderings, dtype=np.int32), source.ordering_weights(n)
