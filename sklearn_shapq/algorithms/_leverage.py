"""Leverage SHAP (Musco & Witter 2025) and paired KernelSHAP: a regression on complementary pairs.

Exactly efficient, with grouped-jackknife standard errors; design notes in ``doc/architecture.md``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import Any

import numpy as np

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._registry import RowParts, ShapleyAlgorithm, ShapleyEstimate
from sklearn_shapq.samplers import keyed_distinct_items, keyed_sized_coalitions, substream_keys

ENUMERATED_CLASS_SIZE = 2**14
"""Largest size class listed whole, so that rows draw pairs from it without replacement."""

JACKKNIFE_GROUPS = 10
"""Groups of pairs of the jackknife standard errors."""

SPREAD_PURPOSES = 1 << 20
"""Offset of the row sequences' substream purposes (:func:`spread_over_parts`), away from those of unsplit draws."""

ROW_MAX_BYTES = 256 * 2**20
"""Most working memory of one row: its coalitions are regressed on at once, so larger budgets are refused."""


def class_capacities(d: int) -> np.ndarray:
    """Pairs each size class t = 1 … ⌊d/2⌋ holds: C(d, t), or C(d, t) / 2 at t = d / 2 (as floats).

    Examples
    --------
    >>> class_capacities(4).tolist()
    [4.0, 3.0]
    """
    return np.array([comb(d, t) / (2 if 2 * t == d else 1) for t in range(1, d // 2 + 1)], dtype=np.float64)


def leverage_pairs(n_pairs: int, d: int, size_weights: np.ndarray | None = None) -> np.ndarray:
    """Pairs per size class: coalitions per size in proportion to ``size_weights``, up to each class's capacity.

    Parameters
    ----------
    n_pairs : int
        At most 2^(d−1) − 1.
    d : int
    size_weights : ndarray of shape (⌊d/2⌋,), optional
        Default all equal (Leverage SHAP); :func:`shapley_kernel_sizes` gives KernelSHAP's.

    Returns
    -------
    int ndarray of shape (⌊d/2⌋,)
        Pairs of class t = 1 … ⌊d/2⌋, summing to ``n_pairs``.

    Examples
    --------
    >>> leverage_pairs(10, 6).tolist()  # sizes 1-5 get 4, 4, 4, 4, 4 coalitions (class 3: 2 pairs)
    [4, 4, 2]
    >>> leverage_pairs(2**5 - 1, 6).tolist()  # every pair: the classes are enumerated whole
    [6, 15, 10]
    """
    capacity = class_capacities(d)
    share = np.where(2 * np.arange(1, d // 2 + 1) == d, 0.5, 1.0)  # pairs per coalition of a size
    if size_weights is not None:
        share = share * size_weights / size_weights.max()
    low, high = 0.0, float(np.max(capacity / share))  # at high every class is full: Σ ≥ n_pairs
    for _ in range(200):  # bisection on the coalitions per size c: Σ min(share c, capacity) = n_pairs
        middle = (low + high) / 2
        if middle in (low, high):  # adjacent floats: the bisection is done
            break
        if np.minimum(share * middle, capacity).sum() < n_pairs:
            low = middle
        else:
            high = middle
    ideal = np.minimum(share * high, capacity)
    pairs = np.floor(np.minimum(share * low, capacity) + 1e-9).astype(np.int64)
    for t in np.argsort(-(ideal - pairs), kind="stable"):  # the pairs still to place, largest shortfall first
        if pairs.sum() >= n_pairs:
            break
        if pairs[t] < capacity[t]:
            pairs[t] += 1
    return pairs


def shapley_kernel_sizes(d: int) -> np.ndarray:
    """Return the Shapley kernel's mass of each coalition size t = 1 … ⌊d/2⌋, 1 / (t (d − t)) (KernelSHAP's).

    Examples
    --------
    >>> (shapley_kernel_sizes(6) * 5).tolist()  # sizes 1, 2, 3
    [1.0, 0.625, 0.5555555555555556]
    """
    t = np.arange(1, d // 2 + 1, dtype=np.float64)
    return 1.0 / (t * (d - t))


@lru_cache(maxsize=64)
def _listed_class(d: int, t: int) -> np.ndarray:
    """All coalitions S of class t, as bool masks (read-only): the size-t sets, with player 0 at t = d/2."""
    if 2 * t == d:
        members = ((0, *rest) for rest in itertools.combinations(range(1, d), t - 1))
    else:
        members = itertools.combinations(range(d), t)  # type: ignore[assignment]
    index = np.array(list(members), dtype=np.intp).reshape(-1, t)
    masks = np.zeros((index.shape[0], d), dtype=bool)
    np.put_along_axis(masks, index, True, axis=1)
    masks.flags.writeable = False
    return masks


def class_coalitions(keys: np.ndarray, d: int, pairs: np.ndarray, parts: RowParts | None = None) -> np.ndarray:
    """Return the coalitions S of ``pairs[t − 1]`` pairs of each class t for each row key: (B, P, d) bool.

    A class is listed whole at its capacity, else drawn keyed by (row key, t): without replacement
    up to ``ENUMERATED_CLASS_SIZE``, independently above. With ``parts`` (games that are background
    parts of split rows) a class drawn without replacement is spread over each row's parts
    (:func:`spread_over_parts`).

    Examples
    --------
    >>> keys = np.array([3, 4], dtype=np.uint64)
    >>> masks = class_coalitions(keys, 5, np.array([0, 4]))
    >>> masks.shape, bool((masks.sum(-1) == 2).all())
    ((2, 4, 5), True)
    >>> len({m.tobytes() for m in masks[0]}) == 4  # without replacement
    True
    """
    rows = keys.shape[0]
    classes = np.flatnonzero(pairs) + 1
    counts = np.asarray(pairs)[classes - 1].astype(np.int64)
    capacities = class_capacities(d)[classes - 1]
    listed = (counts == capacities) | (capacities <= ENUMERATED_CLASS_SIZE)
    blocks = {}
    for t, n in zip(classes[listed], counts[listed], strict=True):
        members = _listed_class(d, int(t))
        if n == members.shape[0]:
            blocks[t] = np.broadcast_to(members, (rows, n, d))
        elif parts is not None and parts.n_parts > 1:
            blocks[t] = members[spread_over_parts(parts, 1000 + int(t), members.shape[0], int(n))]
        else:  # in the order drawn, so that the jackknife groups (round-robin over the pairs) are a
            # random partition of the drawn pairs, not a systematic sample of the listing
            blocks[t] = members[keyed_distinct_items(substream_keys(keys, 1000 + int(t)), members.shape[0], int(n))]
    drawn = classes[~listed]
    if drawn.size:  # player 0 in S for t = d / 2: no complement twice
        sets = keyed_sized_coalitions(substream_keys(keys, 1000 + drawn), d, drawn, counts[~listed], 2 * drawn == d)
        blocks.update(zip(drawn, np.split(sets, np.cumsum(counts[~listed])[:-1], axis=1), strict=True))
    if not blocks:
        return np.zeros((rows, 0, d), dtype=bool)
    return np.concatenate([blocks[t] for t in classes], axis=1)


def spread_over_parts(parts: RowParts, purpose: int, n_items: int, n: int) -> np.ndarray:
    """``n`` distinct items of ``range(n_items)`` for each game (B, n): its part's window of its row's one sequence.

    Each row draws one sequence of L = min(``n_items``, parts · n) distinct items, keyed by (row key,
    ``purpose``); part j takes positions j·n … j·n + n − 1 (mod L). A row's parts so share out the
    class as evenly as its size allows (each item ⌊parts · n / n_items⌋ or one more times), while
    each part alone is a uniform draw without replacement in random order, as an unsplit game's:
    the error of the game the parts have in common (their mean's) cancels across parts instead of
    adding (``benchmarks/bench_background_parts.py``).

    Examples
    --------
    >>> parts = RowParts(np.array([5, 5, 5], dtype=np.uint64), np.array([0, 1, 2]), 3)
    >>> items = spread_over_parts(parts, 1, 6, 2)  # three parts of two share out six items
    >>> sorted(items.ravel().tolist())
    [0, 1, 2, 3, 4, 5]
    """
    length = min(n_items, parts.n_parts * n)
    row_keys, row_of = np.unique(np.asarray(parts.row_keys, dtype=np.uint64), return_inverse=True)
    sequences = keyed_distinct_items(substream_keys(row_keys, SPREAD_PURPOSES + purpose), n_items, length)
    positions = (np.asarray(parts.part, dtype=np.int64)[:, None] * n + np.arange(n)) % length
    return sequences[row_of.reshape(-1)[:, None], positions]


@dataclass
class _Design:
    """The regression's design for B rows: first coalitions (B, P, d), their sizes, weights and groups (P,)."""

    first_masks: Any
    pair_sizes: np.ndarray
    weights: np.ndarray
    groups: np.ndarray
    backend: Any

    @property
    def n_groups(self) -> int:
        """Groups of pairs, the listed classes' group 0 included."""
        return int(self.groups.max()) + 1


@register
class LeverageAlgorithm(ShapleyAlgorithm):
    """Algorithm "leverage": Leverage SHAP, a regression on complementary pairs (exactly efficient)."""

    name = "leverage"

    @staticmethod
    def size_weights(d: int) -> np.ndarray | None:
        """Relative coalitions per size class (:func:`leverage_pairs`): None, every size alike."""
        return None

    @classmethod
    def minimum_evals(cls, n_players: int) -> int:
        """v(∅), v(N) and 1.5 pairs per unknown (d − 1 of them), at least one per jackknife group; or every pair.

        Near one pair per unknown the regression is barely determined and amplifies the sampling noise: a
        review measured 5x the values' size at 2d evaluations (d = 31), with intervals that covered 0.76.
        """
        pairs = max(JACKKNIFE_GROUPS, -(-3 * (n_players - 1) // 2))
        return 2 + 2 * min(pairs, 2 ** (n_players - 1) - 1)

    @classmethod
    def refusal(cls, max_evals: int, n_players: int) -> str | None:
        """Below the minimum, or a row's regression larger than :data:`ROW_MAX_BYTES` (one output)."""
        reason = super().refusal(max_evals, n_players)
        n_evals = 2 * min((int(max_evals) - 2) // 2, 2 ** (n_players - 1) - 1)
        if reason is None and cls.row_bytes(n_evals, n_players, 1) > ROW_MAX_BYTES:
            reason = (
                f"algorithm {cls.name!r} regresses on a row's {n_evals} coalitions of {n_players} features at once, "
                f"more than {ROW_MAX_BYTES // 2**20} MiB per row: lower max_evals or use a permutation walk "
                "('orthogonal', 'antithetic'), whose memory does not grow with the budget."
            )
        return reason

    def plan(self, max_evals: int) -> int:
        """Place the (max_evals − 2) / 2 pairs in size classes (:func:`leverage_pairs`)."""
        d = self.n_players
        n_pairs = min((int(max_evals) - 2) // 2, 2 ** (d - 1) - 1)
        self.pairs = leverage_pairs(n_pairs, d, self.size_weights(d))
        listed_whole = self.pairs == class_capacities(d)
        self.sampled_pairs = np.repeat(~listed_whole, self.pairs)  # per pair, in the order of coalitions()
        self.exact = not self.sampled_pairs.any()
        return 2 + 2 * n_pairs

    def bytes_per_game(self, n_outputs: int) -> int:
        """Masks and their floats, the values, and the jackknife's normal matrices (:meth:`row_bytes`)."""
        return self.row_bytes(self.n_evals - 2, self.n_players, n_outputs)

    @staticmethod
    def row_bytes(n_coalitions: int, d: int, n_outputs: int) -> int:
        """Working memory of one row's regression: masks and their floats, values, the jackknife's normal matrices.

        The draws of a listed class without replacement take O(``ENUMERATED_CLASS_SIZE``) once per call, whatever
        the number of games (:func:`keyed_distinct_items`): no part of a game's.
        """
        return 8 * n_coalitions * (3 * d + 3 * n_outputs) + 8 * (JACKKNIFE_GROUPS + 2) * d * (d + n_outputs)

    def coalitions(self, keys: np.ndarray, parts: RowParts | None = None) -> np.ndarray:
        """Return the 2P coalitions of each game (B, 2P, d): pair p as rows 2p (S) and 2p + 1 (N ∖ S).

        ``parts``: where the games are background parts, each class is spread over a row's parts
        (:func:`class_coalitions`).
        """
        d = self.n_players
        sets = class_coalitions(keys, d, self.pairs, parts)
        return np.stack([sets, ~sets], axis=2).reshape(keys.shape[0], -1, d)

    def estimate(self, game: Any, games: Any, keys: np.ndarray, parts: RowParts | None = None) -> ShapleyEstimate:
        """Solve every row's regression (the backend's batched solves); jackknife standard errors."""
        masks, values, total = self._evaluate(game, games, keys, parts)
        design = self._design(masks, game.backend)
        phi, stderr, _ = self._regress(design, values, total)
        return self._estimate(phi, stderr)

    def estimate_parts(self, game: Any, games: Any, keys: np.ndarray, parts: RowParts) -> ShapleyEstimate:
        """:meth:`estimate`, each size class spread over the rows' parts (:func:`spread_over_parts`)."""
        return self.estimate(game, games, keys, parts=parts)

    def _evaluate(self, game: Any, games: Any, keys: np.ndarray, parts: RowParts | None = None) -> tuple[Any, Any, Any]:
        """Return the rows' coalitions (B, 2P, d), values (B, 2P, n_outputs) and v(N) − v(∅) (B, n_outputs)."""
        masks = game.backend.to_device(self.coalitions(np.asarray(keys, dtype=np.uint64), parts))
        game.backend.compile_ahead(*self._operations_after_evaluation())
        values = game.grid(games, masks)
        on_device = game.backend.to_device(games)  # host (the explainer's blocks) or device (top-k) indices
        return masks, values, game.full_value[on_device] - game.empty_value[on_device]

    def _operations_after_evaluation(self) -> tuple[str, ...]:
        """Return the backend operations that follow the model's evaluations (compiled while the model runs)."""
        return ("paired_regression",)

    def _design(self, masks: Any, backend: Any) -> _Design:
        """Return the pairs' first coalitions, weights and groups (0: classes listed whole; 1 … G: the jackknife's)."""
        d = self.n_players
        pair_sizes = np.repeat(np.arange(1, self.pairs.size + 1), self.pairs)  # a pair of class t: |S| = t
        weights = 1.0 / (self._coalitions_per_size()[pair_sizes] * pair_sizes * (d - pair_sizes))
        groups = self._jackknife_groups() + 1  # 0: the classes listed whole (no sampling)
        return _Design(masks[:, ::2], pair_sizes, weights, groups, backend)

    def _regress(self, design: _Design, values: Any, total: Any) -> tuple[Any, Any, Any]:
        """Values and standard errors (B, d, n_outputs), centred leave-one-group-out solutions (B, G, d, n_outputs)."""
        xp, d = design.backend.xp, self.n_players
        shift = xp.asarray(2 * design.pair_sizes - d, dtype=xp.float64)[None, :, None] / d
        pair_targets = values[:, ::2] - values[:, 1::2] - shift * total[:, None, :]
        n_groups = design.n_groups - 1  # of the jackknife
        leave_outs = not self.exact and n_groups >= 2
        full, leave_out = design.backend.paired_regression(
            design.first_masks, design.weights, design.groups, design.n_groups, pair_targets, leave_outs
        )
        phi = full + total[:, None, :] / d
        if not leave_outs:
            return phi, (xp.zeros(phi.shape) if self.exact else xp.full(phi.shape, xp.nan)), None
        return phi, jackknife_stderr(leave_out, xp), leave_out

    def _estimate(self, phi: Any, stderr: Any) -> ShapleyEstimate:
        """Return the estimate of B rows, with the jackknife's degrees of freedom."""
        rows, n_groups = int(phi.shape[0]), int(self._jackknife_groups().max()) + 1
        dof = np.full(rows, np.inf if self.exact else max(n_groups - 1, 1), dtype=np.float64)
        return ShapleyEstimate(values=phi, stderr=stderr, n_evals=np.full(rows, self.n_evals, dtype=np.int64), dof=dof)

    def _jackknife_groups(self) -> np.ndarray:
        """Group of each pair: sampled pairs round-robin into at most G groups, listed classes -1."""
        sampled = np.flatnonzero(self.sampled_pairs)
        group = np.full(self.sampled_pairs.size, -1)
        group[sampled] = np.arange(sampled.size) % min(JACKKNIFE_GROUPS, max(sampled.size, 1))
        return group

    def _coalitions_per_size(self) -> np.ndarray:
        """k_s, the coalitions of size s = 0 … d the plan evaluates (∅ and N: 1, unused)."""
        d = self.n_players
        per_size = np.ones(d + 1)
        for t, n in enumerate(self.pairs, start=1):
            per_size[t] = per_size[d - t] = n * (2 if 2 * t == d else 1)
        return np.maximum(per_size, 1)


def jackknife_stderr(replicates: Any, xp: Any) -> Any:
    """Grouped-jackknife standard errors of replicates (B, G, d, n_outputs): (B, d, n_outputs)."""
    n_groups = replicates.shape[1]
    spread = ((replicates - replicates.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return xp.sqrt(spread * (n_groups - 1) / n_groups)


@register
class KernelShapAlgorithm(LeverageAlgorithm):
    """Algorithm "kernel": paired KernelSHAP (Lundberg & Lee 2017; Covert & Lee 2021), Leverage SHAP's regression.

    Coalitions per size in proportion to the Shapley kernel's mass 1 / (s (d − s)), as shap and
    shapiq sample; everything else is :class:`LeverageAlgorithm`'s.
    """

    name = "kernel"

    @staticmethod
    def size_weights(d: int) -> np.ndarray:
        """Return the Shapley kernel's mass per size class (:func:`shapley_kernel_sizes`)."""
        return shapley_kernel_sizes(d)
