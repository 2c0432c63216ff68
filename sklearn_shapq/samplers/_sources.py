"""Ordering sources: the orderings every explained row walks in one ``explain`` call.

A source hands out the orderings of any block of rows and any range of sampling units, so the
explainer can walk them block by block (bounded memory, optional early stopping) and get the same
values whatever the blocking:

* per-row sources (mc, antithetic, orthogonal) address every ordering by (seed, row, index) with
  the keyed generator or counter-based normals; rows get independent orderings;
* shared designs (sobol, herding, sbq) are built once per call and walked by every row: their
  construction (scrambling, greedy kernel steps) costs far more per set than a keyed ordering.

A *unit* is the independent sampling unit that standard errors are computed over: an ordering
(mc), an antithetic pair, an orthogonal block of 2 (d − 1) orderings (or a pair when fewer than two
blocks fit, a conservative choice since pairs of one block are negatively correlated), and one
ordering of a shared design (again conservative: the design's orderings are negatively correlated,
so treating them as independent over-states the error).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sklearn_shapq.samplers._api import (
    DEFAULT_CANDIDATES,
    ENUMERATING_SAMPLERS,
    MAX_ENUMERATED_FEATURES,
    enumerated_orderings,
    is_enumerated,
    sample_permutations,
)
from sklearn_shapq.samplers._kernel_designs import sbq_weights
from sklearn_shapq.samplers._keyed import counter_normals, draw_seed, keyed_orderings
from sklearn_shapq.samplers._mallows import DEFAULT_LAMBDA
from sklearn_shapq.samplers._sphere import orthogonal_orderings

PER_ROW_SAMPLERS = ("mc", "antithetic", "orthogonal")
SHARED_DESIGN_SAMPLERS = ("sobol", "herding", "sbq")


@dataclass
class OrderingSource:
    """Orderings of every explained row of one call, cut into sampling units.

    Attributes
    ----------
    method : str
    n_orderings : int
        Orderings per explained row.
    n_features : int
    unit_bounds : int ndarray of shape (m + 1,)
        Unit u holds orderings ``unit_bounds[u]`` … ``unit_bounds[u + 1] − 1``.
    seed : int
        Keyed-generator seed of per-row sources.
    design : ndarray of shape (n_orderings, d) or None
        The shared design, if any.
    design_weights : ndarray of shape (n_orderings,) or None
        Its weights (used by SBQ).
    lam : float
        Mallows bandwidth (for SBQ prefix weights).
    """

    method: str
    n_orderings: int
    n_features: int
    unit_bounds: np.ndarray
    seed: int = 0
    design: np.ndarray | None = None
    design_weights: np.ndarray | None = None
    lam: float = DEFAULT_LAMBDA
    _block_size: int = field(default=0, repr=False)
    _weights_cache: dict = field(default_factory=dict, repr=False)

    @property
    def n_units(self) -> int:
        """Number of sampling units."""
        return len(self.unit_bounds) - 1

    def orderings(self, rows: np.ndarray, first_unit: int, last_unit: int, backend: Any) -> Any:
        """Orderings of units ``first_unit`` … ``last_unit − 1`` for explained rows ``rows``.

        Parameters
        ----------
        rows : int ndarray of shape (B,)
            Indices of the explained rows within the call.
        first_unit, last_unit : int
        backend : backend

        Returns
        -------
        int array of shape (B, n, d) on the backend, n the orderings of those units.
        """
        start, stop = int(self.unit_bounds[first_unit]), int(self.unit_bounds[last_unit])
        d, n_rows, n = self.n_features, len(rows), stop - start
        if self.design is not None:
            block = backend.to_device(self.design[start:stop])
            return backend.xp.broadcast_to(block[None], (n_rows, n, d))
        if self.method == "orthogonal":
            return backend.to_device(self._orthogonal(rows, start, stop))
        xp = backend.xp
        per_key = 2 if self.method == "antithetic" else 1
        first, last = start // per_key, -(-stop // per_key)
        keys_per_row = -(-self.n_orderings // per_key)
        counters = xp.asarray(rows, dtype=xp.int64)[:, None] * keys_per_row + xp.arange(first, last)[None, :]
        keyed = keyed_orderings(self.seed, counters.reshape(-1), d, backend).reshape(n_rows, last - first, d)
        if per_key == 2:
            keyed = xp.stack([keyed, keyed[:, :, ::-1]], axis=2).reshape(n_rows, 2 * (last - first), d)
        offset = start - first * per_key
        return xp.ascontiguousarray(keyed[:, offset : offset + n])

    def _orthogonal(self, rows: np.ndarray, start: int, stop: int) -> np.ndarray:
        """Build orderings start … stop − 1 of orthogonal blocks from only the columns they need.

        Column j of the Gaussian matrix of block b of row r comes from counter
        (r · blocks per row + b) · (d − 1) + j, so any range gives the same orderings.
        """
        size, m = self._block_size, self.n_features - 1
        blocks_per_row = -(-self.n_orderings // size)
        first = start // size
        pieces = []
        for block in range(first, -(-stop // size)):
            needed = min(stop, (block + 1) * size) - block * size
            columns = -(-needed // 2)
            counters = (np.asarray(rows, dtype=np.int64) * blocks_per_row + block)[:, None] * m + np.arange(columns)
            gaussians = counter_normals(self.seed, counters.reshape(-1), m).reshape(len(rows), columns, m)
            pieces.append(orthogonal_orderings(np.swapaxes(gaussians, 1, 2))[:, :needed])
        return np.concatenate(pieces, axis=1)[:, start - first * size :]

    def unit_weights(self, n_units: int) -> np.ndarray:
        """Weights (summing to 1) of the first ``n_units`` units when the walk stops there."""
        return np.add.reduceat(self._ordering_weights(int(self.unit_bounds[n_units])), self.unit_bounds[:n_units])

    def is_exact(self, n_units: int) -> bool:
        """Whether the first ``n_units`` units weigh every permutation 1/d! (exact values)."""
        d, n = self.n_features, int(self.unit_bounds[n_units])
        if self.design is None or d > MAX_ENUMERATED_FEATURES or n < math.factorial(d):
            return False
        codes = self.design[:n].astype(np.int64) @ (d ** np.arange(d))
        _, inverse = np.unique(codes, return_inverse=True)
        totals = np.bincount(inverse, weights=self._ordering_weights(n))
        return len(totals) == math.factorial(d) and np.allclose(totals, 1.0 / math.factorial(d), rtol=1e-9)

    def _ordering_weights(self, n: int) -> np.ndarray:
        if n not in self._weights_cache:
            if self.design is not None and self.method in ENUMERATING_SAMPLERS and is_enumerated(n, self.n_features):
                weights = enumerated_orderings(n, self.n_features)[1]
            elif self.method == "sbq" and self.design is not None:
                weights = self.design_weights if n == self.n_orderings else sbq_weights(self.design[:n], self.lam)
            else:
                weights = np.full(n, 1.0 / n)
            self._weights_cache[n] = weights
        return self._weights_cache[n]


def make_source(
    method: str,
    n_orderings: int,
    n_features: int,
    rng: np.random.Generator,
    *,
    lam: float = DEFAULT_LAMBDA,
    n_candidates: int = DEFAULT_CANDIDATES,
) -> OrderingSource:
    """Build the ordering source of one explain call (shared designs are generated here)."""
    d = n_features
    if d < 2:
        raise ValueError("Permutation walks need at least 2 features (1 feature is exact).")
    seed = draw_seed(rng)
    if method in SHARED_DESIGN_SAMPLERS:
        design, weights = sample_permutations(
            method, n_orderings, d, random_state=rng, lam=lam, n_candidates=n_candidates
        )
        return OrderingSource(method, n_orderings, d, np.arange(n_orderings + 1), seed, design, weights, lam)
    if method == "mc":
        return OrderingSource(method, n_orderings, d, np.arange(n_orderings + 1), seed)
    if method == "antithetic":
        return OrderingSource(method, n_orderings, d, _bounds(n_orderings, 2), seed)
    if method == "orthogonal":
        block = 2 * (d - 1)
        unit = block if n_orderings >= 2 * block else 2
        return OrderingSource(method, n_orderings, d, _bounds(n_orderings, unit), seed, _block_size=block)
    raise ValueError(f"Unknown permutation sampler {method!r}.")


def _bounds(n: int, size: int) -> np.ndarray:
    """Cut n orderings into units of ``size`` (the last one possibly shorter); return the bounds."""
    return np.unique(np.append(np.arange(0, n, size), n))
