"""Public entry point ``sample_permutations``."""

from __future__ import annotations

import numpy as np

from sklearn_shapq._random import make_generator
from sklearn_shapq.samplers._random_orderings import antithetic_orderings, random_orderings

SAMPLERS = ("mc", "antithetic")


def sample_permutations(
    method: str,
    n_permutations: int,
    n_features: int,
    *,
    random_state: None | int | np.random.Generator = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw a weighted set of permutations for Shapley estimation.

    Parameters
    ----------
    method : {"mc", "antithetic"}
        "mc": i.i.d. uniform orderings. "antithetic": pairs of an ordering and its reverse; an odd
        ``n_permutations`` ends with one extra independent uniform ordering (still unbiased).
    n_permutations : int
        Number of orderings, at least 1.
    n_features : int
        Number of features d, at least 1.
    random_state : None, int or Generator
        Seed; an int gives the same set on every call.

    Returns
    -------
    orderings : int32 array of shape (n_permutations, n_features)
        Row k is the order in which features join the coalition.
    weights : float64 array of shape (n_permutations,)
        Non-negative weights summing to 1 (uniform for these methods).

    Examples
    --------
    >>> orderings, weights = sample_permutations("antithetic", 4, 5, random_state=0)
    >>> bool((orderings[1] == orderings[0][::-1]).all()), float(weights.sum())
    (True, 1.0)
    """
    if method not in SAMPLERS:
        raise ValueError(f"Unknown permutation sampler {method!r}; choose one of {SAMPLERS}.")
    if int(n_permutations) < 1 or int(n_features) < 1:
        raise ValueError("n_permutations and n_features must be at least 1.")
    rng = make_generator(random_state, stream=1)
    if method == "mc":
        orderings = random_orderings(rng, 1, n_permutations, n_features)[0]
    else:
        pairs = antithetic_orderings(rng, 1, n_permutations // 2, n_features)[0]
        extra = random_orderings(rng, 1, n_permutations % 2, n_features)[0]
        orderings = np.concatenate([pairs, extra])
    return orderings, np.full(n_permutations, 1.0 / n_permutations)
