"""Permutation-walk algorithms: the walk over each registered ordering source, under the source's name.

Chunks hold a fixed number of a row's orderings, so its values never depend on its block.
"""

from __future__ import annotations

import copyreg
import math
from abc import ABCMeta
from typing import Any, ClassVar, cast

import numpy as np

from sklearn_shapq.algorithms._moments import RunningMoments
from sklearn_shapq.algorithms._permutation_walk import walk_units
from sklearn_shapq.algorithms._registry import SHAPLEY_ALGORITHMS, ShapleyAlgorithm, ShapleyEstimate
from sklearn_shapq.algorithms._units import UnitSamples, combine_units
from sklearn_shapq.samplers import ORDERING_SOURCES, OrderingSource

ROW_MASK_BYTES = 4 * 2**20
"""Coalition masks of one row walked at once: fixes a row's chunks, whatever its block."""

TOL_ROUNDS = 10
"""With a tolerance, units are walked in about this many rounds, checking errors after each."""

TOL_MIN_UNITS = 10
"""No row stops before this many units: an error from fewer is too noisy to stop on."""


class PermutationWalkAlgorithm(ShapleyAlgorithm):
    """Walks of the orderings of one ordering source, ``ordering_source`` ("mc", "antithetic", "sobol", …).

    Unbiased and exactly efficient for uniform orderings. With ``tol`` a row stops once all its
    standard errors are below it (checked about :data:`TOL_ROUNDS` times). Not registered itself.
    """

    ordering_source: ClassVar[type[OrderingSource]]
    """The ordering source whose orderings are walked (its ``name`` is the algorithm's)."""

    supports_tol = True

    @classmethod
    def over(cls, source: type[OrderingSource]) -> type[PermutationWalkAlgorithm]:
        """Return the walk over ``source``: a thin subclass named and sourced by it."""
        namespace = {
            "name": source.name,
            "ordering_source": source,
            "__module__": cls.__module__,
            "__qualname__": f"{cls.__qualname__}[{source.__qualname__}]",
            "__doc__": f"Algorithm {source.name!r}: permutation walks of the orderings of {source.__qualname__}.",
        }
        return cast(type[PermutationWalkAlgorithm], _WalkClass(f"{cls.__name__}[{source.__name__}]", (cls,), namespace))

    @classmethod
    def minimum_evals(cls, n_players: int) -> int:
        """v(∅), v(N) and one step of orderings (a pair for paired sources)."""
        return 2 + cls.ordering_source.orderings_per_step * (n_players - 1)

    @classmethod
    def orderings_within(cls, max_evals: int, n_players: int) -> int:
        """Orderings a budget buys (whole steps), before any cap of the source."""
        step = cls.ordering_source.orderings_per_step
        return step * ((max_evals - 2) // (step * (n_players - 1)))

    @classmethod
    def refusal(cls, max_evals: int, n_players: int) -> str | None:
        """Check the minimum budget, and the source's own limits on the orderings it builds."""
        reason = super().refusal(max_evals, n_players)
        if reason is not None:
            return reason
        n = cls.ordering_source.useful_orderings(cls.orderings_within(max_evals, n_players), n_players)
        return cls.ordering_source.too_many(n, n_players)

    @classmethod
    def draws_per_game(cls) -> bool:
        """Return True for per-row sources ("mc", "antithetic", "orthogonal"), False for shared designs."""
        return not cls.ordering_source.shared_design

    def plan(self, max_evals: int) -> int:
        """Build the ordering source of the call; spend 2 + n (d − 1)."""
        d = self.n_players
        n = self.ordering_source.useful_orderings(self.orderings_within(max_evals, d), d)
        options = {key: self.options[key] for key in ("lam", "n_candidates") if key in self.options}
        self.source = self.ordering_source(n, d, self.seed, **options)
        self.tol = self.options.get("tol")
        return 2 + n * (d - 1)

    def _chunk_units(self) -> int:
        """Units per chunk: at most :data:`ROW_MASK_BYTES` of masks per row, at least one unit."""
        d = self.n_players
        return max(1, ROW_MASK_BYTES // max(1, self.source.unit_size * (d - 1) * d))

    def bytes_per_game(self, n_outputs: int) -> int:
        """Masks and contributions of one chunk (at most the row's units), plus the kept units of a weighted design."""
        d = self.n_players
        orderings = min(self._chunk_units(), self.source.n_units) * self.source.unit_size
        kept = 0 if self.source.uniform_weights else self.source.n_units * d * n_outputs * 8
        return orderings * (d - 1) * d + 3 * orderings * (d + 1) * n_outputs * 8 + kept

    def _round_ends(self) -> list[int]:
        """Units after which errors are checked (only the last without ``tol``)."""
        n_units = self.source.n_units
        if self.tol is None:
            return [n_units]
        step = math.ceil(n_units / TOL_ROUNDS)
        return sorted({*range(max(TOL_MIN_UNITS, step), n_units, step), n_units})

    def estimate(self, game: Any, games: np.ndarray, keys: np.ndarray) -> ShapleyEstimate:
        """Walk each row's orderings chunk by chunk, stopping rows early under ``tol``."""
        backend, source = game.backend, self.source
        xp = backend.xp
        n_rows, d, k = len(games), self.n_players, game.n_outputs
        weighted = not source.uniform_weights
        moments = RunningMoments((n_rows, d, k), xp)
        kept: Any = xp.empty((n_rows, source.n_units, d, k)) if weighted else None
        values, stderr = xp.empty((n_rows, d, k)), xp.empty((n_rows, d, k))
        units_used = np.full(n_rows, source.n_units)
        active = np.arange(n_rows)
        first, chunk = 0, self._chunk_units()
        for end in self._round_ends():
            while first < end and active.size:
                last = min(end, first + chunk)
                here = backend.to_device(active)
                orderings = source.orderings(keys[active], first, last, backend)
                bounds = source.bounds(first, last)
                units = walk_units(game, backend.to_device(games[active]), orderings, bounds - bounds[0])
                if weighted:
                    kept[here, first:last] = units
                else:
                    moments.merge(*RunningMoments.of(units, axis=1), where=here)
                first = last
            if not active.size:
                break
            here = backend.to_device(active)
            if weighted:
                weights = backend.to_device(source.unit_weights(end))
                estimate, error = combine_units(UnitSamples(kept[here, :end], weights), xp)
            else:
                part = moments.subset(here)
                estimate, error = part.mean, part.stderr(undefined=np.nan)
            if source.is_exact(end):
                error = xp.zeros_like(error)
            done = np.ones(active.size, dtype=bool)
            if end < source.n_units:
                done = backend.to_numpy(xp.all((error < self.tol).reshape(active.size, -1), axis=1))
            finished, among_active = backend.to_device(active[done]), backend.to_device(np.flatnonzero(done))
            values[finished], stderr[finished] = estimate[among_active], error[among_active]
            units_used[active[done]] = end
            active = active[~done]
        orderings_used = np.minimum(units_used * source.unit_size, source.n_orderings)
        return ShapleyEstimate(values=values, stderr=stderr, n_evals=2 + orderings_used * (d - 1), dof=units_used - 1.0)


class _WalkClass(ABCMeta):
    """Metaclass of the walks :meth:`PermutationWalkAlgorithm.over` makes: they pickle by their source."""


def _walk_over(source: type[OrderingSource]) -> Any:
    """Return the walk over ``source`` (the registered one when ``source`` is registered): unpickles a walk."""
    if ORDERING_SOURCES.get(source.name) is source:
        return SHAPLEY_ALGORITHMS[source.name]
    return PermutationWalkAlgorithm.over(source)


def _pickle_walk(walk: Any) -> Any:
    """Pickle a walk class as the walk over its (importable) source."""
    return _walk_over, (walk.ordering_source,)


copyreg.pickle(_WalkClass, _pickle_walk)
SHAPLEY_ALGORITHMS.derive(ORDERING_SOURCES, PermutationWalkAlgorithm.over)
