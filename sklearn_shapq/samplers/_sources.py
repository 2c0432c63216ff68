"""Ordering sources: the orderings of any rows (by key) and any range of sampling units, registered by name.

Per-row sources ("mc", "antithetic", "orthogonal") key every ordering by the row; shared designs
("sobol", "herding", "sbq") are built once per call and walked by every row.
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from sklearn_shapq._registry import Registry, register
from sklearn_shapq.samplers._kernel_designs import herding_orderings, sbq_orderings, sbq_weights
from sklearn_shapq.samplers._keyed import counter_normals, keyed_orderings
from sklearn_shapq.samplers._mallows import DEFAULT_LAMBDA
from sklearn_shapq.samplers._sphere import orthogonal_orderings, sobol_orderings

DEFAULT_CANDIDATES = 25
"""Uniform candidates per greedy step of herding and SBQ (the paper's value)."""

SBQ_MAX_PERMUTATIONS = 2000
"""Largest SBQ design: its greedy steps cost O(n²) each (``benchmarks/bench_discrepancy.py`` times them)."""

MAX_ENUMERATED_FEATURES = 8
"""Herding and SBQ enumerate all d! orderings instead of choosing n >= d! greedily, up to this d."""

ORDERING_SOURCES: Registry[OrderingSource] = Registry("ordering source")
"""Every ordering source (permutation sampler), by name."""


class OrderingSource(ABC):
    """Orderings of every explained row of one call, cut into sampling units.

    ``n_orderings`` per row over ``n_features`` (>= 2) players, ``seed`` in [0, 2^64); ``lam`` and
    ``n_candidates`` serve the kernel designs. ``unit_size`` is the orderings per unit.
    """

    name: ClassVar[str]
    """The registered name (also that of its walk among the Shapley algorithms)."""
    registry: ClassVar[Registry[OrderingSource]] = ORDERING_SOURCES
    """Where :func:`sklearn_shapq.register` puts a subclass: :data:`ORDERING_SOURCES`."""
    orderings_per_step: ClassVar[int] = 1
    """Orderings a budget buys at once (2 for samplers of reversed pairs)."""
    shared_design: ClassVar[bool] = False
    """Whether every row walks the same orderings (a design built once per call)."""

    def __init__(
        self,
        n_orderings: int,
        n_features: int,
        seed: int,
        *,
        lam: float = DEFAULT_LAMBDA,
        n_candidates: int = DEFAULT_CANDIDATES,
    ) -> None:
        self.n_orderings = int(n_orderings)
        self.n_features = int(n_features)
        self.seed = int(seed)
        self.lam = lam
        self.n_candidates = n_candidates
        self.unit_size = 1

    @property
    def n_units(self) -> int:
        """Number of sampling units."""
        return -(-self.n_orderings // self.unit_size)

    def bounds(self, first_unit: int, last_unit: int) -> np.ndarray:
        """First ordering of units ``first_unit`` … ``last_unit`` (the last entry ends unit last − 1)."""
        return np.minimum(np.arange(first_unit, last_unit + 1, dtype=np.int64) * self.unit_size, self.n_orderings)

    @classmethod
    def too_many(cls, n_orderings: int, n_features: int) -> str | None:
        """Why this sampler refuses to build ``n_orderings`` orderings on d features (None: it does not)."""
        return None

    @classmethod
    def useful_orderings(cls, n_orderings: int, n_features: int) -> int:
        """Orderings worth walking out of ``n_orderings`` (fewer when a complete design is exact)."""
        return n_orderings

    @property
    def uniform_weights(self) -> bool:
        """Whether every prefix of units is weighted uniformly (running moments then suffice)."""
        return True

    @abstractmethod
    def orderings(self, keys: np.ndarray, first_unit: int, last_unit: int, backend: Any) -> Any:
        """Orderings of units ``first_unit`` … ``last_unit − 1`` for the rows with ``keys``.

        ``keys`` (B,) are row keys; returns (B, n, d) on ``backend``, n the orderings of those units.
        """

    def _range(self, first_unit: int, last_unit: int) -> tuple[int, int]:
        start, stop = self.bounds(first_unit, last_unit)[[0, -1]]
        return int(start), int(stop)

    def ordering_weights(self, n: int) -> np.ndarray:
        """Weights (summing to 1) of the first n orderings when a walk stops there."""
        return np.full(n, 1.0 / n)

    def unit_weights(self, n_units: int) -> np.ndarray:
        """Weights (summing to 1) of the first ``n_units`` units when the walk stops there."""
        bounds = self.bounds(0, n_units)
        return np.add.reduceat(self.ordering_weights(int(bounds[-1])), bounds[:-1])

    def is_exact(self, n_units: int) -> bool:
        """Whether the first ``n_units`` units weigh every permutation 1/d! (exact values)."""
        return False


@register
class MonteCarloSource(OrderingSource):
    """Sampler "mc": i.i.d. uniform orderings from the keyed bijective generator, one unit each."""

    name = "mc"
    _per_key = 1

    def orderings(self, keys: np.ndarray, first_unit: int, last_unit: int, backend: Any) -> Any:
        """Keyed orderings: ordering c of the row with key K is keyed ordering K + c of the seed."""
        start, stop = self._range(first_unit, last_unit)
        xp, d, n_rows = backend.xp, self.n_features, len(keys)
        first, last = start // self._per_key, -(-stop // self._per_key)
        counters = keys.astype(np.uint64)[:, None] + np.arange(first, last, dtype=np.uint64)  # wraps mod 2^64
        keyed = keyed_orderings(self.seed, backend.to_device(counters.reshape(-1)), d, backend)
        keyed = keyed.reshape(n_rows, last - first, d)
        if self._per_key == 2:
            keyed = xp.stack([keyed, keyed[:, :, ::-1]], axis=2).reshape(n_rows, 2 * (last - first), d)
        offset = start - first * self._per_key
        return xp.ascontiguousarray(keyed[:, offset : offset + stop - start])


@register
class AntitheticSource(MonteCarloSource):
    """Sampler "antithetic": a keyed ordering and its reverse, one unit per pair (an odd count ends alone)."""

    name = "antithetic"
    orderings_per_step = 2
    _per_key = 2

    def __init__(self, n_orderings: int, n_features: int, seed: int, **options: Any) -> None:
        super().__init__(n_orderings, n_features, seed, **options)
        self.unit_size = 2


@register
class OrthogonalSource(OrderingSource):
    """Sampler "orthogonal": orthogonal spherical codes, blocks of 2 (d − 1) orderings from an orthonormal basis.

    A block is one unit when at least two fit in the budget, else each reversed pair is one.
    """

    name = "orthogonal"
    orderings_per_step = 2

    def __init__(self, n_orderings: int, n_features: int, seed: int, **options: Any) -> None:
        super().__init__(n_orderings, n_features, seed, **options)
        self.block_size = 2 * (self.n_features - 1)
        unit = self.block_size if self.n_orderings >= 2 * self.block_size else 2
        self.unit_size = unit

    def orderings(self, keys: np.ndarray, first_unit: int, last_unit: int, backend: Any) -> Any:
        """Build the orderings from the Gaussian columns they need (counter (K + b) · (d − 1) + j: any range agrees)."""
        start, stop = self._range(first_unit, last_unit)
        size, m = self.block_size, self.n_features - 1
        first = start // size
        pieces = []
        for block in range(first, -(-stop // size)):  # a loop over the few blocks of a range
            needed = min(stop, (block + 1) * size) - block * size
            columns = -(-needed // 2)
            block_keys = keys.astype(np.uint64) + np.uint64(block)
            counters = block_keys[:, None] * np.uint64(m) + np.arange(columns, dtype=np.uint64)
            gaussians = counter_normals(self.seed, counters.reshape(-1), m).reshape(len(keys), columns, m)
            pieces.append(orthogonal_orderings(np.swapaxes(gaussians, 1, 2))[:, :needed])
        return backend.to_device(np.concatenate(pieces, axis=1)[:, start - first * size :])


DESIGN_MAX_BYTES = 256 * 2**20
"""Largest shared design held in memory."""


class DesignSource(OrderingSource):
    """A design of orderings built once per call and walked by every row (one unit per ordering)."""

    shared_design = True

    @classmethod
    def too_many(cls, n_orderings: int, n_features: int) -> str | None:
        """Refuse designs beyond :data:`DESIGN_MAX_BYTES` (the design is built whole)."""
        if n_orderings * n_features * 4 <= DESIGN_MAX_BYTES:
            return None
        return (
            f"sampler {cls.name!r} builds one design of {n_orderings} orderings of {n_features} features, more than "
            f"{DESIGN_MAX_BYTES // 2**20} MiB: lower max_evals or use a per-row sampler ('orthogonal', 'antithetic')."
        )

    def __init__(self, n_orderings: int, n_features: int, seed: int, **options: Any) -> None:
        super().__init__(n_orderings, n_features, seed, **options)
        self.design, self.design_weights = self.build(np.random.default_rng(self.seed))

    @abstractmethod
    def build(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Return the design (n, d) int32 and its weights (n,) summing to 1."""

    def orderings(self, keys: np.ndarray, first_unit: int, last_unit: int, backend: Any) -> Any:
        """Return the design's orderings of those units, the same for every row."""
        start, stop = self._range(first_unit, last_unit)
        block = backend.to_device(self.design[start:stop])
        return backend.xp.broadcast_to(block[None], (len(keys), stop - start, self.n_features))


@register
class SobolSource(DesignSource):
    """Sampler "sobol": scrambled Sobol points on S^{d−2} by the corrected polar map (alternating pairs at d = 2)."""

    name = "sobol"

    def build(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Scramble the Sobol points from ``rng`` and map them to orderings."""
        n, d = self.n_orderings, self.n_features
        if d == 2:  # no angle to sample: the two orderings, alternating (exact)
            design = np.array([[0, 1], [1, 0]], dtype=np.int32)[np.arange(n) % 2]
        else:
            design = sobol_orderings(n, d, rng)
        return design, np.full(n, 1.0 / n)

    def is_exact(self, n_units: int) -> bool:
        """At d = 2 an even number of alternating orderings weighs both permutations ½."""
        return self.n_features == 2 and n_units % 2 == 0 and n_units > 0


def is_enumerated(n: int, d: int) -> bool:
    """Whether herding and SBQ enumerate all d! orderings instead of choosing n greedily."""
    return d <= MAX_ENUMERATED_FEATURES and n >= math.factorial(d)


def enumerated_orderings(n: int, d: int, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All d! orderings in a random order, cycled to n rows; each permutation gets 1/d! in total.

    A prefix is a uniform sample without replacement, so early stopping stays unbiased.
    """
    every = np.array(list(itertools.permutations(range(d))), dtype=np.int32)
    if rng is not None:
        every = every[rng.permutation(len(every))]
    index = np.arange(n) % len(every)
    copies = np.bincount(index, minlength=len(every))
    return every[index], 1.0 / (len(every) * copies[index])


class KernelDesignSource(DesignSource):
    """Greedy Mallows-kernel designs; all d! orderings instead when n >= d! (d <= 8)."""

    @classmethod
    def useful_orderings(cls, n_orderings: int, n_features: int) -> int:
        """At most d! orderings when they can be enumerated (the values are then exact)."""
        return math.factorial(n_features) if is_enumerated(n_orderings, n_features) else n_orderings

    def build(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Enumerate, or run the greedy steps on keyed uniform candidates."""
        n, d = self.n_orderings, self.n_features
        if is_enumerated(n, d):
            return enumerated_orderings(n, d, rng)
        seed, n_candidates = self.seed, self.n_candidates

        def draw(start: int, stop: int) -> np.ndarray:  # step t uses candidates t·c … t·c + c − 1
            counters = np.arange(start * n_candidates, stop * n_candidates)
            return np.asarray(keyed_orderings(seed, counters, d)).reshape(stop - start, n_candidates, d)

        return self.greedy(draw)

    @abstractmethod
    def greedy(self, draw: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the greedy design and its weights from candidate source ``draw``."""

    def ordering_weights(self, n: int) -> np.ndarray:
        """Return enumeration weights when the first n orderings enumerate, else uniform ones."""
        if is_enumerated(n, self.n_features):
            return enumerated_orderings(n, self.n_features)[1]
        return np.full(n, 1.0 / n)

    def is_exact(self, n_units: int) -> bool:
        """Whether the first ``n_units`` orderings weigh every permutation 1/d!."""
        d, n = self.n_features, int(self.bounds(0, n_units)[-1])
        if not is_enumerated(n, d):
            return False
        codes = self.design[:n].astype(np.int64) @ (d ** np.arange(d))
        _, inverse = np.unique(codes, return_inverse=True)
        totals = np.bincount(inverse, weights=self.ordering_weights(n))
        return len(totals) == math.factorial(d) and np.allclose(totals, 1.0 / math.factorial(d), rtol=1e-9)


@register
class HerdingSource(KernelDesignSource):
    """Sampler "herding": kernel herding with the Mallows kernel (uniform weights)."""

    name = "herding"

    def greedy(self, draw: Any) -> tuple[np.ndarray, np.ndarray]:
        """Herd n orderings."""
        n = self.n_orderings
        return herding_orderings(n, self.n_features, draw, self.lam), np.full(n, 1.0 / n)


@register
class SBQSource(KernelDesignSource):
    """Sampler "sbq": sequential Bayesian quadrature with the Mallows kernel (Bayesian-quadrature weights)."""

    name = "sbq"

    @classmethod
    def too_many(cls, n_orderings: int, n_features: int) -> str | None:
        """At most :data:`SBQ_MAX_PERMUTATIONS` greedy orderings (enumeration has no limit)."""
        if n_orderings <= SBQ_MAX_PERMUTATIONS or is_enumerated(n_orderings, n_features):
            return super().too_many(n_orderings, n_features)
        return (
            f"sbq builds at most {SBQ_MAX_PERMUTATIONS} orderings (its cost grows as n³); got {n_orderings}. "
            "Use 'herding' (n²) for larger sets."
        )

    def greedy(self, draw: Any) -> tuple[np.ndarray, np.ndarray]:
        """Choose n orderings by SBQ and weigh them."""
        return sbq_orderings(self.n_orderings, self.n_features, draw, self.lam)

    @property
    def uniform_weights(self) -> bool:
        """SBQ weights are uniform only for an enumeration."""
        return is_enumerated(self.n_orderings, self.n_features)

    def ordering_weights(self, n: int) -> np.ndarray:
        """SBQ weights of the first n orderings (recomputed for a prefix)."""
        if is_enumerated(n, self.n_features):
            return enumerated_orderings(n, self.n_features)[1]
        return self.design_weights if n == self.n_orderings else sbq_weights(self.design[:n], self.lam)


def make_source(
    name: str,
    n_orderings: int,
    n_features: int,
    seed: int,
    *,
    lam: float = DEFAULT_LAMBDA,
    n_candidates: int = DEFAULT_CANDIDATES,
) -> OrderingSource:
    """Build the ordering source ``name`` of one call (shared designs are generated here)."""
    return ORDERING_SOURCES[name](n_orderings, n_features, seed, lam=lam, n_candidates=n_candidates)
