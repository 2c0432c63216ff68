"""Exact paths of :class:`PermutationShapExplainer`: its game's values from the model's structure, no sampling.

The interventional game of a row, v_x(S) = mean over background rows z of f(x_S, z_{N∖S}), has exact
Shapley values and pairs in polynomial time, or by enumerating the coalitions of few players, for these
kinds of model:

- "product_kernel": an SVR, KernelRidge, a Gaussian process, … by :class:`ProductKernelShapExplainer`
  (PKeX-Shapley);
- "tree": scikit-learn's trees, forests, baggings and gradient boosting, xgboost and LightGBM, by a walk
  over the leaves each pair of an explained row and a background row reaches
  (:func:`~sklearn_shapq.algorithms.tree_shapley_values`), or through a link by enumeration;
- "linear": linear models, linear discriminants and naive Bayes classifiers (linear in their per-feature
  terms), in closed form or through a link by enumeration;
- "neighbors": k-NN models, by a walk over the coalitions from the training rows;
- "network": multilayer perceptrons, by their layers on every coalition (the first layer's input built
  by doubling over the players), and kernel machines whose kernels are not products (Matérn, rational
  quadratic, polynomial, sigmoid) as networks of one hidden layer, a unit per anchor;
- "quadratic": a quadratic margin (a quadratic discriminant, a linear model on degree-2 polynomial
  features), by enumeration;
- "ensemble": voting ensembles, stacking regressors with a linear final estimator, sigmoid and isotonic
  calibrations and transformed targets, whose output is a weighted sum of their members' outputs, each through a link or
  not (:mod:`~sklearn_shapq.explainers._ensemble_models`): the same weighted sum of the members' exact paths.

Where the structure read from the model gives exactly the outputs the permutation explainer explains
(``output``; checked on the background in ``fit`` and on every explained row), ``algorithm="auto"``
takes these values: the expectation of every estimator, without variance, in no model call but the
check.

shap's interventional TreeSHAP was tried first and dropped: on scikit-learn random forests of depth 6
or more on ``load_diabetes`` (shap 0.51 and 0.54) its values missed efficiency by up to 2 in outputs
of 40, and on a HistGradientBoostingRegressor they were off by 1e-2 where its predictions agreed.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar, cast

import numpy as np
from scipy.special import expit
from sklearn.pipeline import Pipeline

from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq._progress import progress_bar
from sklearn_shapq.algorithms import interaction_matrix, interactions_from_table, tree_interactions, tree_shapley_values
from sklearn_shapq.backends import (
    TreeArrays,
    apply_link,
    linked_linear_table,
    linked_quadratic_table,
    linked_tree_table,
    neighbor_table,
    neighbor_weights,
    network_sums,
    network_table,
    resolve_backend,
    tree_predict,
)
from sklearn_shapq.explainers._affine_steps import affine_weights, split_affine_tail
from sklearn_shapq.explainers._column_maps import DecodedSteps, check_column_sources, column_sources
from sklearn_shapq.explainers._ensemble_models import WeightedEnsemble, extract_ensemble
from sklearn_shapq.explainers._kernel_models import check_outputs, extract_expansion
from sklearn_shapq.explainers._kernel_unit_models import KERNEL_MACHINES, UnitInputs, extract_kernel_units
from sklearn_shapq.explainers._linear_models import extract_linear
from sklearn_shapq.explainers._naive_bayes_models import NaiveBayesTerms, is_naive_bayes
from sklearn_shapq.explainers._neighbor_models import Neighbors, extract_neighbors
from sklearn_shapq.explainers._network_models import Network, extract_network
from sklearn_shapq.explainers._output_links import OutputLink, preprocessed
from sklearn_shapq.explainers._product_kernel_explainer import ProductKernelShapExplainer
from sklearn_shapq.explainers._quadratic_models import (
    extract_polynomial_margin,
    extract_quadratic,
    has_polynomial_features,
)
from sklearn_shapq.explainers._tree_models import extract_trees, own_preprocessing, sum_scale, tree_output
from sklearn_shapq.games import PROBABILITY_CLIP, make_model_function, shapley_from_table

PRODUCT_KERNEL = "product_kernel"
TREE = "tree"
LINEAR = "linear"
NEIGHBORS = "neighbors"
NETWORK = "network"
QUADRATIC = "quadratic"
ENSEMBLE = "ensemble"
EXACT_PATHS = (PRODUCT_KERNEL, TREE, LINEAR, NEIGHBORS, NETWORK, QUADRATIC, ENSEMBLE)
"""The ``algorithm`` names of the exact paths (``algorithm_`` of a permutation explainer that takes one)."""

CHECKED_ROWS = 64
"""Background rows on which ``fit`` compares the dual form's outputs with the explained ones (the trees: all)."""
TREE_BLOCK_ROWS = 256
"""Explained rows the tree and linear paths compute at once (between progress updates)."""
LINKED_MAX_PLAYERS = 16
"""Most players of the tree and linear paths through a link (a boosted classifier's probability): they
enumerate 2^p coalitions per pair of rows, O(p 2^p); at p = 16 about the time of a sampled estimate's model rows."""
LINKED_TABLE_BYTES = 1 << 26
"""Bytes of the tables (rows × 2^p × outputs) the tree and linear paths through a link hold at once."""
PathT = TypeVar("PathT", bound="StructurePath")
"""A structure path of one kind (:func:`_first_that_gives`)."""
KERNEL_RTOL = 1e-8
"""Tolerance of a dual form's outputs relative to max(1, |output|) (:func:`check_outputs`' default)."""
TREE_RTOL = {False: 1e-9, True: 1e-5}
"""Tolerance of the trees' (and weights') outputs relative to max(1, |output|): sums in float64, or in float32
(xgboost)."""
NEIGHBOR_MAX_WORK = 1 << 23
"""Most training rows × 2^p of the neighbours path, its cost per pair of rows: near it (1,900 rows, d = 12) the
path took half the time of "leverage_cv" at its default budget (``benchmarks/bench_linked_paths.py``)."""
NETWORK_MAX_WORK = 1 << 27
"""Most work of the network path per pair of rows, 2^p × its work per coalition (in a later layer's multiply-adds,
:attr:`~sklearn_shapq.explainers._network_models.Network.work_per_coalition`). Near it (100 background rows, 20 rows)
the path took 3.1x the time of "leverage_cv" at its default budget for a tanh MLP of (64, 32) units at d = 12, 5.2x
for a ReLU one of (64, 64) at d = 14, and 1.3-1.8x further below it: exact values for at most a few times the time
of sampling, where sampling had 0.46-0.65x the best peer's error (a tanh MLP's probability at d = 12, 5d to 50d;
shapiq's regression estimators do well on smooth networks). At 2^25, 1.15x for a ReLU (64, 64) at d = 12."""
KERNEL_UNITS_MAX_WORK = 1 << 20
"""Most 2^p × work per coalition and anchor of a kernel machine on the network path (its units; the model's own output
costs the same per anchor, so the bound is on the players alone): a Matérn or RBF kernel to 12 players, a
polynomial one to 14. At 12 players a Matérn process took 1.2x the time of "leverage_cv" at its default budget, with
200 or 800 anchors; at 10 players 0.2-0.4x."""
NEIGHBOR_TIE_RTOL = 1e-6
"""Relative gap of the k-th and (k+1)-th distances below which the model itself decides a coalition (its
distances may be computed otherwise: scikit-learn's brute force expands |x − t|² to 1e-8 or so)."""
_FEWER_PLAYERS = (
    "group the features into at most 16 players (feature_groups=), or sample: algorithm='auto' samples "
    "where no exact path applies ('leverage_cv' by name)."
)
SUM_OF_TREES = OutputLink("predict", "identity")
"""The explained output of a tree path by default: the trees' sum plus the offset."""


class ProductKernelPath:
    """The product-kernel path: a fitted :class:`ProductKernelShapExplainer` of the interventional game.

    Parameters
    ----------
    explainer : ProductKernelShapExplainer
        Fitted on the background in its input units (after ``preprocessing``).
    names : list of str
        The players, in the order the path gives them; one the explainer lacks (its columns all dropped by
        ``preprocessing``) is a null player, of value 0.
    preprocessing : fitted transformer, optional
        A Pipeline's column-wise steps before the kernel model: applied to the explained rows.
    """

    name = PRODUCT_KERNEL
    shares_rounding = False
    """Its values are not completed to the model's outputs: a Gaussian process's predictions of a row move
    (by 1e-9 relative) with the rows predicted beside it, and a row's values must not."""

    def __init__(self, explainer: ProductKernelShapExplainer, names: list[str], preprocessing: Any = None) -> None:
        self.explainer, self.preprocessing = explainer, preprocessing
        # the explainer orders its players by their first column; the path gives them in ``names``' order
        fitted = explainer.feature_groups_.names
        self.order = np.array([fitted.index(name) if name in fitted else -1 for name in names])

    @property
    def checked_model_use(self) -> tuple[int, int]:
        """Model rows and calls of the explainer's own check in each ``explain``: its anchors, one call."""
        return int(self.explainer._checked_rows.shape[0]), 1

    rtol = KERNEL_RTOL
    """Tolerance of the dual form's outputs relative to max(1, |output|)."""

    def outputs(self, rows: np.ndarray) -> np.ndarray:
        """Return the dual form's outputs (n, k) on rows in the model's input units."""
        return np.asarray(self.explainer.expansion_.predict(preprocessed(self.preprocessing, rows)), dtype=np.float64)

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Exact Shapley values of rows (n, d): (n, p, k)."""
        n, p, k = rows.shape[0], self.explainer.feature_groups_.n_players, self.explainer.n_outputs_
        values = self.explainer.explain(preprocessed(self.preprocessing, rows)).values
        return self._in_order(np.asarray(values).reshape(n, p, k), (1,))

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray:
        """Return the exact pairs of rows (n, p, p, k) of ``index``."""
        n, p, k = rows.shape[0], self.explainer.feature_groups_.n_players, self.explainer.n_outputs_
        pairs = self.explainer.explain_interactions(preprocessed(self.preprocessing, rows), index=index).values
        return self._in_order(np.asarray(pairs).reshape(n, p, p, k), (1, 2))

    def _in_order(self, array: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        """``array``'s player ``axes`` in the path's order, zero for the players the explainer lacks."""
        for axis in axes:
            padded = np.concatenate([array, np.zeros_like(np.take(array, [0], axis=axis))], axis=axis)
            array = np.take(padded, self.order, axis=axis)  # −1: the zeros appended last
        return array

    def check(self, rows: np.ndarray, outputs: np.ndarray) -> None:
        """Refuse a model whose outputs ``outputs`` (n, k) on ``rows`` are not the dual form's (a model changed)."""
        try:
            inputs = preprocessed(self.preprocessing, rows)
            check_outputs(self.explainer.expansion_, inputs, outputs, "the model", self.rtol)
        except ValueError as exc:
            raise ValueError(
                "The model's output differs from the dual form read in fit: it was refitted or changed in place "
                f"since fit. Call fit again. ({exc})"
            ) from exc


def compare_outputs(predicted: np.ndarray, expected: np.ndarray, rtol: float, reader: str, name: str) -> None:
    """Raise ValueError where ``predicted`` is not ``expected`` (n, k) to ``rtol`` relative to max(1, |expected|)."""
    difference = float(np.max(np.abs(predicted - expected), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    if not difference <= rtol * scale:
        raise ValueError(
            f"{reader} does not give {name}: max |difference| {difference:.3g} on {expected.shape[0]} rows, "
            f"relative {difference / scale:.3g} > rtol={rtol:g}."
        )


class StructurePath(ABC):
    """What the tree and linear paths share: a structure's sum plus an offset, through a link, over a background.

    Parameters
    ----------
    offset : ndarray of shape (n_outputs,)
        The model's raw output minus the structure's sum (an initial score, an intercept).
    background : ndarray of shape (N, d)
        In the structure's input units (after ``preprocessing``).
    groups : FeatureGroups
    preprocessing : fitted transformer or None
        A Pipeline's column-wise steps before the model: applied to the explained rows.
    progress : bool
        A bar over the explained rows, worked in blocks (a row's values do not depend on its block).
    output : OutputLink
        How the explained output follows from the sum plus ``offset``. Through a link (not the identity,
        or log-odds), every coalition of at most :data:`LINKED_MAX_PLAYERS` players is enumerated.
    """

    name = ""
    structure = ""
    """What the path reads and how it gives the output, for messages."""
    checked_model_use = (0, 0)
    """No model rows or calls beyond the permutation explainer's check."""
    float32_sums = False
    """Whether the model sums in float32 (its outputs are known to :data:`TREE_RTOL` ``[True]`` only)."""

    def __init__(
        self,
        offset: np.ndarray,
        background: np.ndarray,
        groups: FeatureGroups,
        preprocessing: Any,
        progress: bool,
        output: OutputLink,
    ) -> None:
        self.offset, self.background, self.groups = offset, background, groups
        self.knots: np.ndarray | None = None  # the "interp" link's (an isotonic calibration's, :meth:`through`)
        self.preprocessing, self.progress, self.output = preprocessing, progress, output

    @property
    def shares_rounding(self) -> bool:
        """Whether the model's float32 sums (xgboost) are shared by the players: values efficient to its outputs.

        The share is bounded: every background row and every explained row is checked to :data:`TREE_RTOL`.
        """
        return self.float32_sums

    @property
    def linked(self) -> bool:
        """Whether the explained output is a link of the sum (the game is enumerated)."""
        return self.output.link != "identity" or self.output.log_odds or self.output.after != (1.0, 0.0)

    @property
    def rtol(self) -> float:
        """Tolerance of the path's outputs relative to max(1, |output|): :data:`TREE_RTOL` of its sums."""
        return TREE_RTOL[self.float32_sums]

    def through(
        self,
        link: str,
        scale: float = 1.0,
        shift: float = 0.0,
        knots: np.ndarray | None = None,
        log_odds: bool = False,
    ) -> StructurePath:
        """Return this path's output through ``link`` of ``scale · (sum + offset) + shift`` (a calibration's sigmoid).

        ``knots``: the "interp" link's (2, K) increasing x and their y (an isotonic calibration's); ``log_odds``:
        then the log-odds of the result.

        Raises
        ------
        ValueError
            The path's output is a link of its sum already.
        """
        if self.output.link != "identity" or self.output.log_odds:
            raise ValueError(f"The {self.name} path's output is a link of its sum already: it takes no second link.")
        path = copy.copy(self)
        path._scale_structure(scale)
        path.offset = scale * self.offset + shift
        path.output, path.knots = OutputLink("margin", link, log_odds), knots
        return path

    def _scale_structure(self, scale: float) -> None:
        """Multiply the structure's sum by ``scale`` (in place, on a copy of the path)."""
        raise ValueError(f"The {self.name} path's structure is not a sum to scale.")

    def outputs(self, rows: np.ndarray) -> np.ndarray:
        """Return the explained output (n, k) of rows in the model's input units."""
        return self.predict(preprocessed(self.preprocessing, rows))

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        """Return the explained output (n, k) of rows in the structure's input units: the link of the sum."""
        sums = self._sums(inputs) + self.offset
        if not self.linked:
            return sums
        linked = apply_link(sums, self.output.link, self.output.log_odds, PROBABILITY_CLIP, self.knots)
        return self.output.apply_after(linked)

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Exact Shapley values of rows (n, d): (n, p, k), from the games on all coalitions."""
        return self._blocks(rows, "explaining", lambda block: shapley_from_table(self._finite_table(block), np))

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray:
        """Return the exact pairs of rows (n, p, p, k) of ``index``, from the games on all coalitions."""
        return self._blocks(
            rows,
            "explaining interactions",
            lambda block: interaction_matrix(*interactions_from_table(self._finite_table(block), index), index),
        )

    def _finite_table(self, inputs: np.ndarray) -> np.ndarray:
        """:meth:`_table`, refused where a coalition's game is not finite (the link overflowed, as the model's would).

        Raises
        ------
        ValueError
            As a sampled estimate refuses the model's NaN or infinite outputs on the hybrid rows.
        """
        return self._checked_finite(self._table(inputs))

    def _checked_finite(self, table: np.ndarray, parts: int = 1) -> np.ndarray:
        """Return the games ``table`` (n · parts, 2^p, k), refused where one is not finite (:meth:`_finite_table`)."""
        finite = np.isfinite(table).all(axis=(1, 2)).reshape(-1, parts).all(axis=1)  # by explained row
        if not finite.all():
            raise ValueError(
                f"The model's output is NaN or infinite on hybrid rows of {int((~finite).sum())} of {finite.shape[0]} "
                f"explained rows (the first: row {int(np.argmin(finite))} of its block), as read from the model "
                f"({self.structure}): Shapley values of such outputs are not defined."
            )
        return table

    def check(self, rows: np.ndarray, outputs: np.ndarray) -> None:
        """Refuse a model whose outputs ``outputs`` (n, k) on ``rows`` are not the path's (a model changed)."""
        try:
            self._check_explained(preprocessed(self.preprocessing, rows), outputs)
        except ValueError as exc:
            raise ValueError(
                f"The model's output differs from what was read from it in fit ({self.structure}): it was refitted "
                f"or changed in place since fit. Call fit again. ({exc})"
            ) from exc

    def _check_explained(self, inputs: np.ndarray, outputs: np.ndarray) -> None:
        """Compare the path's outputs on the explained rows (in its input units) with the model's."""
        self.check_inputs(inputs, outputs, "the model")

    def check_inputs(self, inputs: np.ndarray, expected: np.ndarray, name: str) -> None:
        """Check that the path gives ``expected`` (n, k) on ``inputs`` (its input units) to :data:`TREE_RTOL`.

        Raises
        ------
        ValueError
            The difference exceeds the tolerance or is not finite.
        """
        self._compare(self.predict(inputs), expected, name)

    @property
    def explains_log_odds(self) -> bool:
        """Whether the explained output is a log-odds (compared as the probabilities it is the logit of)."""
        return self.output.log_odds

    def _compare(self, predicted: np.ndarray, expected: np.ndarray, name: str) -> None:
        """Raise ValueError where ``predicted`` is not ``expected`` (n, k) to :data:`TREE_RTOL`.

        A log-odds is compared as its probability: the model's own log-odds of a probability near 0 or 1 carry its
        rounding divided by p (1 − p) (1e-7 at a log-odds of 21), which says nothing of the reading.
        """
        if self.explains_log_odds:
            predicted, expected = expit(predicted), expit(expected)
        compare_outputs(predicted, expected, self.rtol, f"What was read from the model ({self.structure})", name)

    def _blocks(self, rows: np.ndarray, desc: str, compute: Any) -> np.ndarray:
        """Return ``compute`` of the inputs of ``rows``, block by block, with a bar over the rows."""
        inputs = preprocessed(self.preprocessing, rows)
        step = TREE_BLOCK_ROWS
        if self.linked:  # bound the tables
            table_bytes = 8 * (1 << self.groups.n_players) * self.offset.shape[0]
            step = max(1, min(step, LINKED_TABLE_BYTES // table_bytes))
        blocks = []
        with progress_bar(self.progress, inputs.shape[0], desc, "row") as bar:
            for start in range(0, max(inputs.shape[0], 1), step):  # no rows: one empty block
                blocks.append(compute(inputs[start : start + step]))
                bar.update(blocks[-1].shape[0])
        return np.concatenate(blocks)

    @abstractmethod
    def _sums(self, inputs: np.ndarray) -> np.ndarray:
        """Return the structure's sum (n, k) on rows in its input units (without the offset)."""

    @abstractmethod
    def _table(self, inputs: np.ndarray) -> np.ndarray:
        """Return the games of rows (in the input units) on all 2^p coalitions, through the link: (n, 2^p, k)."""


class LinkedSumPath(StructurePath):
    """A sum through a link whose backend tables the games of any players: trees, weights, a quadratic margin."""

    @abstractmethod
    def _table_source(self) -> tuple[Callable[..., np.ndarray], Any]:
        """Return the backend's table function of the sum through a link and the structure it reads."""

    def _table(self, inputs: np.ndarray) -> np.ndarray:
        return self._linked_table(inputs, self.groups.player_of_column, self.groups.n_players)

    def part_tables(self, inputs: np.ndarray, player_of_column: np.ndarray, n_players: int, parts: int) -> np.ndarray:
        """Return rows' games on all 2^p coalitions of their own players, one per part of the background.

        Parameters
        ----------
        inputs : ndarray of shape (n, d)
            Rows in the structure's input units.
        player_of_column : int ndarray of shape (n, d)
            Each row's player of each column; −1 for a column in no coalition (the background row's value).
        n_players : int
            p.
        parts : int
            Consecutive equal parts of the background.

        Returns
        -------
        ndarray of shape (n · parts, 2^p, k)
            Game ``r · parts + j``: row r's on part j, through the link.

        Raises
        ------
        ValueError
            A game is not finite (:meth:`_finite_table`).
        """
        return self._checked_finite(self._linked_table(inputs, player_of_column, n_players, parts), parts)

    def _linked_table(
        self, inputs: np.ndarray, player_of_column: np.ndarray, n_players: int, parts: int = 1
    ) -> np.ndarray:
        """Return the backend's table (:meth:`_table_source`) of rows' games, one per part of the background."""
        table_function, structure = self._table_source()
        table = table_function(
            structure,
            inputs,
            self.background,
            self.offset,
            player_of_column,
            n_players,
            self.output.link,
            self.output.log_odds,
            PROBABILITY_CLIP,
            self.knots,
            parts,
        )
        return self.output.apply_after(table)


class TreePath(LinkedSumPath):
    """The tree path: the trees read from the model, the offset that completes their sum, the background.

    Parameters
    ----------
    trees : TreeArrays
    offset, background, groups, preprocessing, progress, output
        As :class:`StructurePath`; ``output`` by default the trees' sum.
    """

    name = TREE
    structure = "its trees, their sum plus a constant through the link"

    def __init__(
        self,
        trees: TreeArrays,
        offset: np.ndarray,
        background: np.ndarray,
        groups: FeatureGroups,
        preprocessing: Any = None,
        progress: bool = False,
        output: OutputLink = SUM_OF_TREES,
    ) -> None:
        super().__init__(offset, background, groups, preprocessing, progress, output)
        self.trees = trees
        self.float32_sums = trees.float32_sums

    def _sums(self, inputs: np.ndarray) -> np.ndarray:
        return tree_predict(self.trees, inputs)

    def _scale_structure(self, scale: float) -> None:
        self.trees = replace(self.trees, value=self.trees.value * scale)

    def _table_source(self) -> tuple[Callable[..., np.ndarray], Any]:
        return linked_tree_table, self.trees

    def sum_values(self, inputs: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        """Exact values (n, p, k) of the trees' sum (no link) of rows in its input units, by the leaf tables.

        ``background``: rows in its input units to take the values against; by default the path's.
        """
        background = self.background if background is None else background
        return tree_shapley_values(self.trees, inputs, background, self.groups.player_of_column, self.groups.n_players)

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Exact Shapley values of rows (n, d): (n, p, k); of the trees' sum by the leaf tables."""
        return super().values(rows) if self.linked else self._blocks(rows, "explaining", self.sum_values)

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray:
        """Return the exact pairs of rows (n, p, p, k) of ``index``; of the trees' sum by the leaf tables."""
        if self.linked:
            return super().interactions(rows, index)
        players = self.groups.player_of_column, self.groups.n_players
        return self._blocks(
            rows,
            "explaining interactions",
            lambda block: tree_interactions(self.trees, block, self.background, *players, index),
        )


class LinearPath(LinkedSumPath):
    """The linear path: a linear model's weights, its intercept as the offset, the background.

    Parameters
    ----------
    coef : ndarray of shape (d, n_outputs)
        The margin's weights.
    offset, background, groups, preprocessing, progress, output
        As :class:`StructurePath`.
    """

    name = LINEAR
    structure = "its weights, their margin plus a constant through the link"

    def __init__(
        self,
        coef: np.ndarray,
        offset: np.ndarray,
        background: np.ndarray,
        groups: FeatureGroups,
        preprocessing: Any,
        progress: bool,
        output: OutputLink,
    ) -> None:
        super().__init__(offset, background, groups, preprocessing, progress, output)
        self.coef = coef

    def _sums(self, inputs: np.ndarray) -> np.ndarray:
        return inputs @ self.coef

    def _scale_structure(self, scale: float) -> None:
        self.coef = self.coef * scale

    def _table_source(self) -> tuple[Callable[..., np.ndarray], Any]:
        return linked_linear_table, self.coef

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Exact Shapley values of rows (n, d): (n, p, k); of the margin itself in closed form."""
        return super().values(rows) if self.linked else self._blocks(rows, "explaining", self.sum_values)

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray:
        """Return the exact pairs of rows (n, p, p, k); of the margin itself: none, its values on the diagonal."""
        if self.linked:
            return super().interactions(rows, index)

        def additive(block: np.ndarray) -> np.ndarray:
            values = self.sum_values(block)
            n, p, k = values.shape
            return interaction_matrix(np.zeros((n, p, p, k)), values, index)

        return self._blocks(rows, "explaining interactions", additive)

    def sum_values(self, inputs: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        """Exact values (n, p, k) of the margin (no link) of rows in its input units, the game being additive.

        φ_i = Σ_{j ∈ player i} w_j (x_j − mean_z z_j); ``background``: the z, by default the path's.
        """
        background = self.background if background is None else background
        columns = (inputs - background.mean(axis=0))[:, :, None] * self.coef[None]  # (n, d, k)
        membership = np.eye(self.groups.n_players)[self.groups.player_of_column]  # (d, p): a column's player
        return np.einsum("ndk,dp->npk", columns, membership)


class ClippedLogOddsPath(LinearPath):
    """A binary log-odds that is a linear margin m wherever the probability it is the logit of is not clipped.

    The explained log-odds clips the probability to [c, 1 − c] (c = PROBABILITY_CLIP) first, so it is m only
    where |m| ≤ logit(1 − c). A row whose coalitions may reach that (bounded by every player's term at the larger,
    or the smaller, of the row's and a background row's) takes the values of ``clipped``, the same margin
    through the clipped link (every coalition enumerated); without it (too many players) it is refused.

    Parameters
    ----------
    coef, offset, background, groups, preprocessing, progress
        As :class:`LinearPath`; the output is the margin itself.
    clipped : LinearPath or None
        The margin through the sigmoid and the clipped log-odds, or None where the players are too many.
    """

    def __init__(
        self,
        coef: np.ndarray,
        offset: np.ndarray,
        background: np.ndarray,
        groups: FeatureGroups,
        preprocessing: Any,
        progress: bool,
        clipped: LinearPath | None,
    ) -> None:
        super().__init__(coef, offset, background, groups, preprocessing, progress, OutputLink("margin", "identity"))
        self.clipped = clipped

    @property
    def explains_log_odds(self) -> bool:
        """Whether the explained output is a log-odds: always (the margin stands for it)."""
        return True

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Exact Shapley values (n, p, k): of the margin, or through the clip where a row's coalitions may reach it."""
        values = super().values(rows)
        reached = self._reaches_clip(preprocessed(self.preprocessing, rows))
        if reached.any():
            values[reached] = self._clipped_path(reached).values(_take_rows(rows, reached))
        return values

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray:
        """Exact pairs (n, p, p, k): the margin's, or through the clip where a row's coalitions may reach it."""
        pairs = super().interactions(rows, index)
        reached = self._reaches_clip(preprocessed(self.preprocessing, rows))
        if reached.any():
            pairs[reached] = self._clipped_path(reached).interactions(_take_rows(rows, reached), index)
        return pairs

    def _clipped_path(self, reached: np.ndarray) -> LinearPath:
        if self.clipped is None:
            raise ValueError(
                f"The log-odds of {int(reached.sum())} explained row(s) reach, on some coalitions, the clip of the "
                f"probability at {PROBABILITY_CLIP:g}, where they are no longer the model's margin; their exact values "
                f"then enumerate the 2^p coalitions, for p <= {LINKED_MAX_PLAYERS} players (here "
                f"{self.groups.n_players}). Explain output='probability', {_FEWER_PLAYERS}"
            )
        return self.clipped

    def _reaches_clip(self, inputs: np.ndarray) -> np.ndarray:
        """Whether each row's coalitions with some background row may have |m| ≥ logit(1 − c): bool (n,).

        m(x_S, z_rest) lies between the offset plus every player's smaller term of x and z and the offset plus
        the larger; the rows go in chunks of at most 2^22 (row, background row, player) terms.
        """
        limit = np.log((1.0 - PROBABILITY_CLIP) / PROBABILITY_CLIP) - 1e-6
        players = self.groups.player_of_column
        groups = np.where(players >= 0, players, self.groups.n_players + np.arange(players.size))  # none: its own
        membership = np.zeros((players.size, int(groups.max(initial=-1)) + 1))
        membership[np.arange(players.size), groups] = 1.0
        background_terms = (self.background * self.coef[:, 0]) @ membership  # (N, g)
        step = max(1, (1 << 22) // max(1, background_terms.size))
        reached = []
        for start in range(0, inputs.shape[0], step):  # chunks of rows: the bound's memory
            row_terms = ((inputs[start : start + step] * self.coef[:, 0]) @ membership)[:, None, :]  # (b, 1, g)
            high = np.maximum(row_terms, background_terms).sum(axis=2) + self.offset[0]
            low = np.minimum(row_terms, background_terms).sum(axis=2) + self.offset[0]
            reached.append((np.maximum(np.abs(high), np.abs(low)) >= limit).any(axis=1))
        return np.concatenate(reached) if reached else np.zeros(0, dtype=bool)


def _take_rows(rows: Any, chosen: np.ndarray) -> Any:
    """Return the rows where ``chosen`` (an array's or a table's)."""
    return rows.iloc[chosen] if hasattr(rows, "iloc") else rows[chosen]


class QuadraticPath(LinkedSumPath):
    """The quadratic path: a quadratic margin xᵀ A x + bᵀ x, its constant as the offset, the background.

    The game of a quadratic margin has pairs, so every coalition is enumerated (at most
    :data:`LINKED_MAX_PLAYERS` players), through the link or not.

    Parameters
    ----------
    quadratic : ndarray of shape (d, d, n_outputs)
        A of each output.
    linear : ndarray of shape (d, n_outputs)
        b of each output.
    offset, background, groups, preprocessing, progress, output
        As :class:`StructurePath`.
    """

    name = QUADRATIC
    structure = "its quadratic margin plus a constant through the link"

    def __init__(
        self,
        quadratic: np.ndarray,
        linear: np.ndarray,
        offset: np.ndarray,
        background: np.ndarray,
        groups: FeatureGroups,
        preprocessing: Any,
        progress: bool,
        output: OutputLink,
    ) -> None:
        super().__init__(offset, background, groups, preprocessing, progress, output)
        self.quadratic, self.linear = quadratic, linear

    @property
    def linked(self) -> bool:
        """Always enumerated: the margin's own game has pairs."""
        return True

    def _sums(self, inputs: np.ndarray) -> np.ndarray:
        return np.einsum("nj,jmk,nm->nk", inputs, self.quadratic, inputs) + inputs @ self.linear

    def _scale_structure(self, scale: float) -> None:
        self.quadratic, self.linear = self.quadratic * scale, self.linear * scale

    def _table_source(self) -> tuple[Callable[..., np.ndarray], Any]:
        return linked_quadratic_table, (self.quadratic, self.linear)


class NeighborsPath(StructurePath):
    """The neighbours path: a k-NN model's training rows; each pair of rows enumerated, near ties asked of the model.

    Parameters
    ----------
    model : fitted KNeighborsRegressor or KNeighborsClassifier
        The final estimator (after ``preprocessing``), which decides near ties.
    neighbors : Neighbors
    background, groups, preprocessing, progress
        As :class:`StructurePath`.
    """

    name = NEIGHBORS
    structure = "its training rows, the mean target of the k nearest (weighed by 1 / distance or alike)"

    def __init__(
        self,
        model: Any,
        neighbors: Neighbors,
        background: np.ndarray,
        groups: FeatureGroups,
        preprocessing: Any,
        progress: bool,
    ) -> None:
        offset = np.zeros(neighbors.targets.shape[1])
        super().__init__(offset, background, groups, preprocessing, progress, OutputLink("predict", "identity"))
        self.model, self.neighbors = model, neighbors
        self._model_use = (0, 0)

    @property
    def linked(self) -> bool:
        """Always: the game is enumerated."""
        return True

    @property
    def checked_model_use(self) -> tuple[int, int]:  # type: ignore[override]
        """Model rows and calls of the last explain's near ties (the hybrid rows the model decides)."""
        return self._model_use

    def _sums(self, inputs: np.ndarray) -> np.ndarray:
        """Return the mean target of each row's k nearest training rows (near ties by training order): (n, k)."""
        return self._predict_with_ties(inputs)[0]

    def check_inputs(self, inputs: np.ndarray, expected: np.ndarray, name: str, all_may_tie: bool = False) -> None:
        """Check the rows whose k-th neighbour is no near tie (the model's own choice decides the others).

        ``all_may_tie``: rows that all tie pass (the explained rows; the background was checked in fit).

        Raises
        ------
        ValueError
            The predictions differ, or every row is a near tie (nothing to check) and not ``all_may_tie``.
        """
        predicted, tied = self._predict_with_ties(inputs)
        if tied.size and tied.all() and not all_may_tie:
            raise ValueError(f"every row's k-th neighbour is a near tie: {name} cannot be checked against it.")
        self._compare(predicted[~tied], expected[~tied], name)

    def _check_explained(self, inputs: np.ndarray, outputs: np.ndarray) -> None:
        """Compare the explained rows whose neighbours do not tie (all may: the background was checked in fit)."""
        self.check_inputs(inputs, outputs, "the model", all_may_tie=True)

    def _predict_with_ties(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return the k-NN predictions (n, k) and whether each row's k-th and (k+1)-th distances nearly tie."""
        neighbors, predictions, ties = self.neighbors, [], []
        k = neighbors.k
        step = max(1, LINKED_TABLE_BYTES // (8 * neighbors.train.size))  # rows × training rows × columns bounded
        for start in range(0, inputs.shape[0], step):
            block = inputs[start : start + step]
            distances = (np.abs(block[:, None, :] - neighbors.train[None]) ** neighbors.power).sum(axis=2)
            order = np.argsort(distances, axis=1, kind="stable")
            ordered = np.take_along_axis(distances, order[:, : k + 1], axis=1)
            weights = neighbor_weights(ordered[:, :k], neighbors.power, neighbors.distance_weights)
            predictions.append(np.einsum("nr,nrc->nc", weights, neighbors.targets[order[:, :k]]))
            gap = ordered[:, -1] - ordered[:, k - 1] if ordered.shape[1] > k else np.full(len(block), np.inf)
            ties.append(gap <= NEIGHBOR_TIE_RTOL * np.maximum(ordered[:, -1], 1e-300))
        if not predictions:
            return np.zeros((0, neighbors.targets.shape[1])), np.zeros(0, dtype=bool)
        return np.concatenate(predictions), np.concatenate(ties)

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Exact Shapley values of rows (n, d): (n, p, k)."""
        self._model_use = (0, 0)
        return super().values(rows)

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray:
        """Return the exact pairs of rows (n, p, p, k) of ``index``."""
        self._model_use = (0, 0)
        return super().interactions(rows, index)

    def _table(self, inputs: np.ndarray) -> np.ndarray:
        neighbors, n_players = self.neighbors, self.groups.n_players
        sums, ties, tie_values = neighbor_table(
            neighbors.train,
            neighbors.targets,
            inputs,
            self.background,
            self.groups.player_of_column,
            n_players,
            neighbors.k,
            neighbors.power,
            NEIGHBOR_TIE_RTOL,
            distance_weights=neighbors.distance_weights,
        )
        n_ties = sum(len(row_ties) for row_ties in ties)
        if n_ties:  # the model's own choice: its outputs on those hybrid rows replace ours
            row = np.repeat(np.arange(inputs.shape[0]), [len(row_ties) for row_ties in ties])
            background_row, coalition = np.concatenate(ties).T
            members = (coalition[:, None] >> self.groups.player_of_column[None, :]) & 1  # (ties, d)
            hybrids = np.where(members.astype(bool), inputs[row], self.background[background_row])
            np.add.at(sums, (row, coalition), self._model_outputs(hybrids) - np.concatenate(tie_values))
            rows_used, calls = self._model_use
            self._model_use = (rows_used + n_ties, calls + 1)
        return sums / self.background.shape[0]

    def _model_outputs(self, inputs: np.ndarray) -> np.ndarray:
        """Return the final estimator's explained output (n, k) on rows in its input units."""
        names = getattr(self.model, "feature_names_in_", None)
        if names is not None:
            import pandas as pd

            inputs = pd.DataFrame(inputs, columns=list(names))
        if hasattr(self.model, "classes_"):
            proba = np.asarray(self.model.predict_proba(inputs), dtype=np.float64)
            return proba[:, 1:] if proba.shape[1] == 2 and self.neighbors.targets.shape[1] == 1 else proba
        return np.asarray(self.model.predict(inputs), dtype=np.float64).reshape(inputs.shape[0], -1)


class NetworkPath(StructurePath):
    """The network path: a multilayer perceptron's layers on every coalition of each pair of rows.

    Parameters
    ----------
    network : Network
    background, groups, preprocessing, progress
        As :class:`StructurePath`; the output's link is the network's.
    structure : str, optional
        What the path reads, for messages (a kernel machine's units); default the layers'.
    """

    name = NETWORK
    structure = "its layers' weights, the last layer's score through the output's link"

    def __init__(
        self,
        network: Network,
        background: np.ndarray,
        groups: FeatureGroups,
        preprocessing: Any,
        progress: bool,
        structure: str | None = None,
    ) -> None:
        offset = np.zeros(network.weights[-1].shape[1])
        self.structure = structure or self.structure
        super().__init__(offset, background, groups, preprocessing, progress, network.link)
        self.network = network

    @property
    def linked(self) -> bool:
        """Always: the game is enumerated."""
        return True

    def _scale_structure(self, scale: float) -> None:
        network = self.network
        last = (scale * network.weights[-1], scale * network.biases[-1])
        self.network = replace(
            network, weights=(*network.weights[:-1], last[0]), biases=(*network.biases[:-1], last[1])
        )

    def _sums(self, inputs: np.ndarray) -> np.ndarray:
        network = self.network
        return network_sums(
            network.weights, network.biases, network.activation, inputs, network.parameter, network.distance
        )

    def _table(self, inputs: np.ndarray) -> np.ndarray:
        network, link = self.network, self.output
        table = network_table(
            network.weights,
            (*network.biases[:-1], network.biases[-1] + self.offset),
            network.activation,
            inputs,
            self.background,
            self.groups.player_of_column,
            self.groups.n_players,
            link.link,
            link.log_odds,
            PROBABILITY_CLIP,
            network.parameter,
            self.knots,
            network.distance,
        )
        return link.apply_after(table)


class EnsemblePath:
    """The ensemble path: a weighted sum of its members' exact paths (Shapley values are linear in the game).

    Parameters
    ----------
    ensemble : WeightedEnsemble
        The weights and intercept read from the model.
    members : list of ProductKernelPath, StructurePath or EnsemblePath
        Each member's exact path, fitted on the background in the ensemble's input units.
    preprocessing : fitted transformer or None
        A Pipeline's column-wise steps before the ensemble.
    """

    name = ENSEMBLE

    def __init__(self, ensemble: WeightedEnsemble, members: list[ExactPath], preprocessing: Any) -> None:
        self.ensemble, self.members, self.preprocessing = ensemble, members, preprocessing
        self.structure = f"{ensemble.description} of its members' paths ({', '.join(m.name for m in members)})"

    @property
    def shares_rounding(self) -> bool:
        """Whether a member's float32 sums (xgboost) are shared by the players, as a tree path's are."""
        return any(member.shares_rounding for member in self.members)

    @property
    def rtol(self) -> float:
        """Tolerance of the outputs relative to max(1, |output|): the loosest member's, or the ensemble's own."""
        return max(self.ensemble.rtol, *(member.rtol for member in self.members))

    @property
    def checked_model_use(self) -> tuple[int, int]:
        """Model rows and calls of the members' own checks in each ``explain`` (a dual form's anchors)."""
        uses = [member.checked_model_use for member in self.members]
        return sum(rows for rows, _ in uses), sum(calls for _, calls in uses)

    def outputs(self, rows: np.ndarray) -> np.ndarray:
        """Return the ensemble's output (n, k) on rows in its input units, from its members' paths."""
        inputs = preprocessed(self.preprocessing, rows)
        total = sum(w * member.outputs(inputs) for w, member in zip(self.ensemble.weights, self.members, strict=True))
        return np.asarray(total, dtype=np.float64) + self.ensemble.intercept

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Exact Shapley values of rows (n, d): (n, p, k), the weighted sum of the members'."""
        inputs = preprocessed(self.preprocessing, rows)
        return self._weighted(member.values(inputs) for member in self.members)

    def interactions(self, rows: np.ndarray, index: str) -> np.ndarray:
        """Return the exact pairs of rows (n, p, p, k) of ``index``, the weighted sum of the members'."""
        inputs = preprocessed(self.preprocessing, rows)
        return self._weighted(member.interactions(inputs, index) for member in self.members)

    def _weighted(self, parts: Iterable[np.ndarray]) -> np.ndarray:
        return np.asarray(sum(w * part for w, part in zip(self.ensemble.weights, parts, strict=True)))

    def check(self, rows: np.ndarray, outputs: np.ndarray) -> None:
        """Refuse a model whose outputs ``outputs`` (n, k) on ``rows`` are not the members' weighted sum."""
        try:
            self.check_rows(rows, outputs, "the model")
        except ValueError as exc:
            raise ValueError(
                f"The model's output differs from what was read from it in fit ({self.structure}): it was refitted "
                f"or changed in place since fit. Call fit again. ({exc})"
            ) from exc

    def check_rows(self, rows: np.ndarray, expected: np.ndarray, name: str) -> None:
        """Check that the path gives ``expected`` (n, k) on ``rows`` (the model's input units) to :attr:`rtol`."""
        reader = f"What was read from the model ({self.structure})"
        compare_outputs(self.outputs(rows), expected, self.rtol, reader, name)


ExactPath = ProductKernelPath | StructurePath | EnsemblePath
"""What :func:`exact_path` returns."""


def exact_path(
    algorithm: str,
    model: Any,
    output: str,
    background: np.ndarray,
    background_outputs: np.ndarray,
    groups: FeatureGroups,
    device: Any,
    progress: bool,
    codec: Any = None,
    refusals: list[str] | None = None,
) -> ExactPath | None:
    """Return the exact path ``algorithm`` asks for where it gives the explained outputs, else None.

    Parameters
    ----------
    algorithm : str
        "auto" (the product-kernel, tree, linear, neighbours, quadratic or ensemble path, the first that applies,
        else None), or one
        of :data:`EXACT_PATHS` (that path, or an error saying why not); another name: None.
    model : fitted estimator
    output : str
        The explained output, resolved ("predict", "margin", "probability" or "log_odds").
    background : ndarray of shape (N, d)
        The background rows, in the model's input units.
    background_outputs : ndarray of shape (N, n_outputs)
        The explained output of the model (``output``) on ``background``.
    groups : FeatureGroups
        The players.
    device, progress
        The permutation explainer's.
    codec : TableCodec, optional
        A raw table's codes: ``background`` holds codes, decoded for a Pipeline's first step.
    refusals : list, optional
        With "auto", each path that took the model's kind but not its output appends "name: reason" (a
        probability past the players it enumerates, say).

    Returns
    -------
    ProductKernelPath, TreePath, LinearPath, NeighborsPath, NetworkPath, QuadraticPath, EnsemblePath or None
        Fitted on the background; its outputs on the first :data:`CHECKED_ROWS` background rows are
        ``background_outputs``.

    Raises
    ------
    TypeError
        An exact path asked for by name whose model is not of its kind.
    ValueError
        An exact path asked for by name whose structure does not give the explained output (a
        probability, say).
    """
    if algorithm not in ("auto", *EXACT_PATHS):
        return None
    read_model = (model, output, background, background_outputs, groups)
    kernel = (model, background, background_outputs, groups, device, progress, codec)
    readers: list[tuple[str, Callable[[], ExactPath]]] = [
        (PRODUCT_KERNEL, partial(_product_kernel_path, *kernel)),
        (TREE, partial(_tree_path, *read_model, progress, codec)),
        (LINEAR, partial(_linear_path, *read_model, progress, codec)),
        (NEIGHBORS, partial(_neighbors_path, *read_model, progress, codec)),
        (NETWORK, partial(_network_path, *read_model, progress, codec)),
        (QUADRATIC, partial(_quadratic_path, *read_model, progress, codec)),
        (ENSEMBLE, partial(_ensemble_path, *read_model, device, progress, codec)),
    ]
    for name, read in readers:
        if algorithm not in ("auto", name):
            continue
        try:
            return read()
        except (TypeError, ValueError) as exc:
            if algorithm != "auto":
                raise
            if refusals is not None and isinstance(exc, ValueError):  # a model of its kind, not read
                refusals.append(f"{name}: {exc}")
    return None


def _product_kernel_path(
    model: Any,
    background: np.ndarray,
    outputs: np.ndarray,
    groups: FeatureGroups,
    device: Any,
    progress: bool,
    codec: Any = None,
) -> ProductKernelPath:
    preprocessing, final, inputs = None, model, background
    try:  # a kernel model, or a Pipeline of scalers folded into its kernel's scales
        if codec is not None:
            raise TypeError("a raw table's codes reach a kernel model through the Pipeline's steps only.")
        expansion = extract_expansion(model)
    except TypeError:
        if not isinstance(model, Pipeline):
            raise
        preprocessing, final, inputs, groups = _column_wise_inputs(model, background, groups, codec)
        expansion = extract_expansion(final)  # each encoded column a factor of the kernel, its player's
    check_outputs(expansion, inputs[:CHECKED_ROWS], outputs[:CHECKED_ROWS], "the explained output (output=)")
    feature_groups = {
        name: members.tolist() for name, members in zip(groups.names, groups.members, strict=True) if members.size
    }
    explainer = ProductKernelShapExplainer(
        final,
        value_function="interventional",
        background_size=None,
        feature_groups=feature_groups,
        device=device,
        progress=progress,
    )
    return ProductKernelPath(explainer.fit(inputs), groups.names, preprocessing)


def _tree_path(
    model: Any,
    output: str,
    background: np.ndarray,
    outputs: np.ndarray,
    groups: FeatureGroups,
    progress: bool,
    codec: Any = None,
    player_limit: bool = True,
) -> StructurePath:
    preprocessing, final, inputs, groups = _column_wise_inputs(model, background, groups, codec)
    link = tree_output(final, output, outputs.shape[1])
    refusal = _enumeration_refusal(model, output, link, "trees' sum", groups.n_players)
    if refusal is not None and player_limit:
        raise refusal
    trees = extract_trees(final, outputs.shape[1], output, link)
    raw = _raw_outputs(model, link, output, background, outputs, codec)
    offset = (raw - tree_predict(trees, inputs)).mean(axis=0)  # every background row checked: all are used
    scale = sum_scale(final, link)  # AdaBoost's softmax of its votes over K − 1
    path: StructurePath = TreePath(
        trees, offset, inputs, groups, preprocessing, progress, link if scale == 1.0 else SUM_OF_TREES
    )
    if scale != 1.0:
        path = path.through(link.link, scale, log_odds=link.log_odds)
    path.check_inputs(inputs, outputs, "the explained output (output=)")
    return path


def linked_structure(
    model: Any, output: str, background: np.ndarray, outputs: np.ndarray, groups: FeatureGroups, codec: Any = None
) -> TreePath | LinearPath:
    """Return the tree or linear path of a model's sum through a link, whatever its players (to enumerate a few).

    Its :meth:`~TreePath.sum_values` (the sum's own values, without the link) are in closed form at any number of
    players.

    Raises
    ------
    TypeError
        Neither a tree ensemble nor a linear model read here.
    ValueError
        Its explained output is not a link of its sum read here, or is the sum itself (the path takes it exactly
        at any number of players).
    """
    read = (model, output, background, outputs, groups, False, codec)
    try:
        path: StructurePath = _tree_path(*read, player_limit=False)
    except TypeError:
        path = _linear_path(*read, player_limit=False)
    if type(path) not in (TreePath, LinearPath) or not path.linked:
        raise ValueError("Not a sum through a link read here (the path takes the sum itself exactly).")
    return cast(TreePath | LinearPath, path)


def _linear_path(
    model: Any,
    output: str,
    background: np.ndarray,
    outputs: np.ndarray,
    groups: FeatureGroups,
    progress: bool,
    codec: Any = None,
    player_limit: bool = True,
) -> LinearPath:
    head, tail = split_affine_tail(model)  # a PCA before the model: its map folds into the weights
    preprocessing, final, inputs, groups = _column_wise_inputs(head, background, groups, codec)
    if is_naive_bayes(final) and tail is None:  # linear in its per-feature terms, their features' players
        return _naive_bayes_path(model, final, preprocessing, output, background, outputs, groups, progress)
    coef, links = extract_linear(final, outputs.shape[1], output)
    if tail is not None:
        coef = affine_weights(tail, inputs) @ coef

    def candidates() -> Iterator[LinearPath | ValueError]:
        for link in links:
            refusal = _enumeration_refusal(model, output, link, "linear margin", groups.n_players)
            if refusal is not None and player_limit:
                yield refusal
                continue
            offset = (_raw_outputs(model, link, output, background, outputs, codec) - inputs @ coef).mean(axis=0)
            yield LinearPath(coef, offset, inputs, groups, preprocessing, progress, link)

    return _first_that_gives(candidates(), inputs, outputs)


def _naive_bayes_path(
    model: Any,
    final: Any,
    preprocessing: Any,
    output: str,
    background: np.ndarray,
    outputs: np.ndarray,
    groups: FeatureGroups,
    progress: bool,
) -> LinearPath:
    """Return the linear path of a naive Bayes: its margin in per-feature terms (:class:`NaiveBayesTerms`)."""
    terms = NaiveBayesTerms(final, outputs.shape[1], preprocessing)
    if output not in terms.links:
        raise ValueError(f"{terms.name}'s output {output!r} is not read from its terms (a class label).")
    inputs = terms.transform(background)

    players = terms.groups(groups)

    def through(link: OutputLink) -> LinearPath | ValueError:
        refusal = _enumeration_refusal(model, output, link, "per-feature log-likelihoods", groups.n_players)
        return refusal or LinearPath(terms.coef, terms.offset, inputs, players, terms, progress, link)

    if output == "log_odds" and terms.binary:  # the margin itself, but where the probability is clipped
        clipped = through(terms.links[output][0])
        margin = ClippedLogOddsPath(
            terms.coef,
            terms.offset,
            inputs,
            players,
            terms,
            progress,
            None if isinstance(clipped, ValueError) else clipped,
        )
        return _first_that_gives([margin], inputs, outputs)
    return _first_that_gives((through(link) for link in terms.links[output]), inputs, outputs)


def _quadratic_path(
    model: Any,
    output: str,
    background: np.ndarray,
    outputs: np.ndarray,
    groups: FeatureGroups,
    progress: bool,
    codec: Any = None,
) -> QuadraticPath:
    if has_polynomial_features(model):  # a linear model on degree-2 polynomial features, after one-to-one steps
        if codec is not None:
            raise TypeError("A raw table's codes are not read through polynomial features.")
        preprocessing, quadratic, linear, links = extract_polynomial_margin(model, outputs.shape[1], output)
        inputs = preprocessed(preprocessing, background)
    else:  # a quadratic discriminant
        preprocessing, final, inputs, groups = _column_wise_inputs(model, background, groups, codec)
        quadratic, linear, link = extract_quadratic(final, outputs.shape[1], output)
        links = (link,)
    if groups.n_players > LINKED_MAX_PLAYERS:
        raise ValueError(
            f"The quadratic path enumerates the 2^p coalitions of {groups.n_players} players: it takes at most "
            f"{LINKED_MAX_PLAYERS}. {_FEWER_PLAYERS}"
        )
    sums = np.einsum("nj,jmk,nm->nk", inputs, quadratic, inputs) + inputs @ linear

    def candidates() -> Iterator[QuadraticPath]:
        for link in links:
            offset = (_raw_outputs(model, link, output, background, outputs, codec) - sums).mean(axis=0)
            yield QuadraticPath(quadratic, linear, offset, inputs, groups, preprocessing, progress, link)

    return _first_that_gives(candidates(), inputs, outputs)


def _first_that_gives(candidates: Iterable[PathT | ValueError], inputs: np.ndarray, outputs: np.ndarray) -> PathT:
    """Return the first candidate path whose outputs on every background row (``inputs``) are ``outputs``.

    A candidate is a path or the reason one link cannot be taken; with none that gives them, the first reason
    (or the first check's failure) is raised.
    """
    refusals: list[ValueError] = []
    for candidate in candidates:  # lazily: a later candidate's model call only where the earlier ones fail
        if isinstance(candidate, ValueError):
            refusals.append(candidate)
            continue
        try:
            candidate.check_inputs(inputs, outputs, "the explained output (output=)")
        except ValueError as exc:
            refusals.append(exc)
            continue
        return candidate
    raise refusals[0]


def _refuse_beyond_work(how: str, n_players: int, work: int, work_name: str, max_work: int) -> None:
    """Raise ValueError past :data:`LINKED_MAX_PLAYERS` players, or where 2^p × ``work`` (per coalition) > ``max_work``.

    ``how``: what the path enumerates, for the message.
    """
    if n_players > LINKED_MAX_PLAYERS or work << n_players > max_work:
        most = min(LINKED_MAX_PLAYERS, max(0, (max_work // max(work, 1)).bit_length() - 1))  # the p this bound takes
        advice = _FEWER_PLAYERS.replace(f"at most {LINKED_MAX_PLAYERS}", f"at most {most}")
        raise ValueError(
            f"{how}: for p <= {LINKED_MAX_PLAYERS} players and 2^p × {work} ({work_name}) <= {max_work} (here p = "
            f"{n_players}). {advice[0].upper() + advice[1:]}"
        )


def _neighbors_path(
    model: Any,
    output: str,
    background: np.ndarray,
    outputs: np.ndarray,
    groups: FeatureGroups,
    progress: bool,
    codec: Any = None,
) -> NeighborsPath:
    preprocessing, final, inputs, groups = _column_wise_inputs(model, background, groups, codec)
    neighbors = extract_neighbors(final, outputs.shape[1], output)
    n_train = neighbors.train.shape[0]
    how = f"{type(final).__name__}'s exact values enumerate the 2^p coalitions against its training rows"
    _refuse_beyond_work(how, groups.n_players, n_train, "its training rows", NEIGHBOR_MAX_WORK)
    path = NeighborsPath(final, neighbors, inputs, groups, preprocessing, progress)
    path.check_inputs(inputs, outputs, "the explained output (output=)")
    return path


def _network_path(
    model: Any,
    output: str,
    background: np.ndarray,
    outputs: np.ndarray,
    groups: FeatureGroups,
    progress: bool,
    codec: Any = None,
) -> NetworkPath:
    head, tail = split_affine_tail(model)  # a PCA before the model: its map folds into the first layer
    preprocessing, final, inputs, groups = _column_wise_inputs(head, background, groups, codec)
    if type(final) in KERNEL_MACHINES:  # its kernel's units: a network of one hidden layer
        units = extract_kernel_units(final, outputs.shape[1], output)
        if units.network.distance and tail is not None:
            raise ValueError(
                f"{type(final).__name__}'s kernel is a distance, after steps that mix the columns (a PCA): not a sum "
                "of one term per player."
            )
        if units.network.distance:  # scaled as the kernel scales its rows
            preprocessing, inputs = UnitInputs(preprocessing, units), units.inputs(inputs)
        network, structure = units.network, "its kernel's units (one per anchor) and their dual weights"
        how = f"{type(final).__name__}'s exact values run its kernel's units (one per anchor) on the 2^p coalitions"
        work, work_name, max_work = units.work_per_anchor, "its work per coalition and anchor", KERNEL_UNITS_MAX_WORK
    else:
        network, structure = extract_network(final, outputs.shape[1], output), None
        how = f"{type(final).__name__}'s exact values run its layers on the 2^p coalitions"
        work, work_name, max_work = network.work_per_coalition, "its work per coalition", NETWORK_MAX_WORK
    _refuse_beyond_work(how, groups.n_players, work, work_name, max_work)
    if tail is not None:  # u ↦ u A + c before the first layer: weights A W, intercepts c W + b
        mixing = affine_weights(tail, inputs)
        shift = preprocessed(tail, inputs).mean(axis=0) - inputs.mean(axis=0) @ mixing
        first, bias = network.weights[0], network.biases[0]
        network = replace(
            network, weights=(mixing @ first, *network.weights[1:]), biases=(shift @ first + bias, *network.biases[1:])
        )
    path = NetworkPath(network, inputs, groups, preprocessing, progress, structure)
    path.check_inputs(inputs, outputs, "the explained output (output=)")
    return path


def _ensemble_path(
    model: Any,
    output: str,
    background: np.ndarray,
    outputs: np.ndarray,
    groups: FeatureGroups,
    device: Any,
    progress: bool,
    codec: Any = None,
) -> EnsemblePath:
    """Read the ensemble's weights and each member's exact path; check their weighted sum on every background row.

    Raises
    ------
    TypeError
        Not an ensemble :func:`~sklearn_shapq.explainers._ensemble_models.extract_ensemble` reads (after
        column-wise steps).
    ValueError
        Its output is not a weighted sum of its members' outputs, or a member has no exact path (the member's
        reason is chained).
    """
    member_codec = None
    if isinstance(model, Pipeline) and len(model.steps) == 1:
        model = model.steps[0][1]
    if codec is not None and not isinstance(model, Pipeline):  # the members may encode the raw table themselves
        preprocessing, final, inputs, member_codec = None, model, background, codec
    else:
        preprocessing, final, inputs, groups = _column_wise_inputs(model, background, groups, codec)
    ensemble = extract_ensemble(final, output)
    if ensemble.member_link is not None and groups.n_players > LINKED_MAX_PLAYERS:
        raise ValueError(
            f"The {ensemble.description} enumerates the 2^p coalitions of each member's output through its "
            f"{ensemble.member_link}, for p <= {LINKED_MAX_PLAYERS} players (here {groups.n_players}). "
            f"{_FEWER_PLAYERS[0].upper() + _FEWER_PLAYERS[1:]}"
        )
    affine = ensemble.affine or (None,) * len(ensemble.members)
    knots = ensemble.knots or (None,) * len(ensemble.members)
    members: list[ExactPath] = []
    for position, (member, scale_shift, curve) in enumerate(zip(ensemble.members, affine, knots, strict=True)):
        member_outputs = np.asarray(
            make_model_function(member, ensemble.member_output, resolve_backend("cpu"), member_codec)(inputs),
            dtype=np.float64,
        )
        reason, why = None, ""
        try:
            member_path = (
                member,
                ensemble.member_output,
                inputs,
                member_outputs,
                groups,
                device,
                progress,
                member_codec,
            )
            final = member.steps[-1][1] if isinstance(member, Pipeline) else member
            # under a link, a kernel machine's units (a sum to scale), not its product-kernel path (none)
            units = ensemble.member_link is not None and type(final) in KERNEL_MACHINES
            path = exact_path(NETWORK if units else "auto", *member_path)
            if ensemble.member_link is not None and scale_shift is not None:  # only a structure's sum is rescaled
                if isinstance(path, StructurePath):
                    path = path.through(ensemble.member_link, *scale_shift, curve)
                elif path is not None:
                    why = f" (its {path.name} path has no sum to take through the {ensemble.member_link})"
                    path = None
        except (TypeError, ValueError) as exc:  # a member asked for by "auto" raises only its own errors
            path, reason = None, exc
        if path is None or isinstance(path, NeighborsPath) or member_outputs.shape != outputs.shape:
            # k-NN: its near ties are decided by the model's own calls, which the ensemble's check cannot redo
            why = " (a k-NN member's near ties are the model's own calls)" if isinstance(path, NeighborsPath) else why
            raise ValueError(
                f"{ensemble.description}'s member {position} ({type(member).__name__}) has no exact path of its "
                f"{ensemble.member_output!r} that the ensemble can sum{why}."
            ) from reason
        members.append(path)
    path = EnsemblePath(ensemble, members, preprocessing)
    path.check_rows(background, outputs, "the explained output (output=)")
    return path


def _column_wise_inputs(
    model: Any, background: np.ndarray, groups: FeatureGroups, codec: Any = None
) -> tuple[Any, Any, np.ndarray, FeatureGroups]:
    """Split ``model`` into its steps and its last; return them, the background through the steps, the players.

    The players of the steps' output columns: each the player of the column it comes from. With ``codec``
    (a raw table's codes), the steps get the decoded table.

    Raises
    ------
    TypeError
        A step whose output columns are not each from one input column (:func:`column_sources`), checked on
        background rows (:func:`check_column_sources`); a raw table without a Pipeline to encode it.
    """
    if isinstance(model, Pipeline) and len(model.steps) == 1:
        model = model.steps[0][1]
    named_steps, final = (list(model.steps[:-1]), model.steps[-1][1]) if isinstance(model, Pipeline) else ([], model)
    own = own_preprocessing(final)  # a histogram gradient boosting model's encoding of its categorical features
    if own is not None:
        named_steps.append(("own_preprocessing", own))
    if not named_steps:
        if codec is not None:
            raise TypeError(
                f"{type(model).__name__} gets a raw table's category or string columns itself: the exact paths take "
                "numeric data, or a Pipeline whose steps encode the table."
            )
        return None, model, background, groups
    # the path's own copy: steps refitted in place later leave it, so the check at explain sees the change
    steps = copy.deepcopy(Pipeline(named_steps))
    sources = column_sources(steps, background.shape[1])
    preprocessing = steps if codec is None else DecodedSteps(codec, steps)
    inputs = preprocessed(preprocessing, background)
    if inputs.shape[1] != sources.size:
        raise TypeError(f"The Pipeline's steps give {inputs.shape[1]} columns, not the {sources.size} traced.")
    check_column_sources(lambda rows: preprocessed(preprocessing, rows), background, inputs, sources)
    return preprocessing, final, inputs, FeatureGroups(groups.names, groups.player_of_column[sources])


def _enumeration_refusal(model: Any, output: str, link: OutputLink, sum_name: str, n_players: int) -> ValueError | None:
    """Return why a link of the ``sum_name`` is not enumerated for ``n_players`` (more than :data:`LINKED_MAX_PLAYERS`).

    None where the link is the identity (no enumeration) or the players are few enough.
    """
    if not (link.link != "identity" or link.log_odds) or n_players <= LINKED_MAX_PLAYERS:
        return None
    article = "an" if link.link == "exp" else "a"
    described = f"{article} {link.link} link of its {sum_name}" if link.link != "identity" else f"its {sum_name}"
    described = f"the log-odds of {described}" if link.log_odds else described
    advice = _FEWER_PLAYERS[0].upper() + _FEWER_PLAYERS[1:]
    if output != "margin":  # the raw score, where the model has one and it is not the linked output, stays exact
        try:
            make_model_function(model, "margin", resolve_backend("cpu"), None)
            advice = f"Explain its raw score (output='margin'), {_FEWER_PLAYERS}"
        except (TypeError, ValueError):
            pass
    return ValueError(
        f"{type(model).__name__}'s output {output!r} is {described}: its exact values enumerate the 2^p coalitions, "
        f"for p <= {LINKED_MAX_PLAYERS} players (here {n_players}). {advice}"
    )


def _raw_outputs(
    model: Any, link: OutputLink, output: str, background: np.ndarray, outputs: np.ndarray, codec: Any = None
) -> np.ndarray:
    """Return the model's raw sums (N, k) on the background (their mean excess over the structure's: the offset).

    ``codec``: the background holds a raw table's codes.
    """
    if link.raw_output is None:  # a log link
        with np.errstate(divide="ignore", invalid="ignore"):  # a non-positive output fails the check
            return np.log(link.undo_after(outputs))
    if link.raw_output == output:
        return outputs
    raw = np.asarray(make_model_function(model, link.raw_output, resolve_backend("cpu"), codec)(background))
    if raw.size != outputs.size:
        raise ValueError(
            f"The model's {link.raw_output} has {raw.size // max(1, outputs.shape[0])} columns where the explained "
            f"output has {outputs.shape[1]} (two classes scored by a softmax, say): not read here."
        )
    return raw.astype(np.float64).reshape(outputs.shape)
