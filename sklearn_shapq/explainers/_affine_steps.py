"""Steps that mix columns affinely (a PCA) before a linear model or a network's first layer: folded into its weights.

A linear model after an affine map u ↦ A u + c of its inputs (a PCA, a truncated SVD, random
projections, and the affine scalers around them) is a linear model of the inputs, with weights
A w: the linear path reads it on the columns before the map, where each column is still one
player's (:func:`split_affine_tail`, :func:`affine_weights`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.decomposition import PCA, FactorAnalysis, FastICA, IncrementalPCA, TruncatedSVD
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler
from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection

from sklearn_shapq.explainers._output_links import preprocessed

MIXING_STEPS = (
    PCA,
    IncrementalPCA,
    TruncatedSVD,
    FactorAnalysis,
    FastICA,
    GaussianRandomProjection,
    SparseRandomProjection,
)
"""Steps whose output columns are affine maps of all their input columns."""
AFFINE_SCALERS = (StandardScaler, MaxAbsScaler, RobustScaler, MinMaxScaler)
"""Column-wise affine steps, which may stand between mixing steps (``MinMaxScaler`` without ``clip``)."""
AFFINE_RTOL = 1e-9
"""Tolerance of the check that the map read is the steps' own on the background, relative to its scale."""


def split_affine_tail(model: Any) -> tuple[Any, Pipeline | None]:
    """Return ``model`` without the affine steps just before its last, and those steps (None where no column mixes).

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> head, tail = split_affine_tail(make_pipeline(StandardScaler(), PCA(2), Ridge()))
    >>> type(head).__name__, [name for name, _ in tail.steps]
    ('Ridge', ['standardscaler', 'pca'])
    """
    if not isinstance(model, Pipeline) or len(model.steps) < 2:
        return model, None
    start = len(model.steps) - 1
    while start > 0 and _is_affine(model.steps[start - 1][1]):
        start -= 1
    tail = model.steps[start:-1]
    if not any(isinstance(step, MIXING_STEPS) for _, step in tail):
        return model, None
    head = model.steps[:start] + model.steps[-1:]
    return (Pipeline(head) if len(head) > 1 else head[0][1]), Pipeline(tail)


def _is_affine(step: Any) -> bool:
    if type(step) in MIXING_STEPS:
        return True
    if type(step) is MinMaxScaler:
        return not step.clip
    identity = type(step) is FunctionTransformer and step.func is None
    return type(step) in AFFINE_SCALERS or identity or (isinstance(step, str) and step == "passthrough")


def affine_weights(tail: Pipeline, inputs: np.ndarray) -> np.ndarray:
    """Return A (m, m') of the affine map ``tail`` (u ↦ A u + c on rows u of m columns), checked on ``inputs``.

    A is read from the images of the inputs' mean and of steps of each column's range from it.

    Raises
    ------
    TypeError
        ``tail`` does not give ``inputs`` @ A + c on the rows ``inputs`` (N, m): not read as affine.
    """
    m = inputs.shape[1]
    centre = inputs.mean(axis=0) if inputs.shape[0] else np.zeros(m)  # probed near the data: no cancellation
    steps = np.where(np.ptp(inputs, axis=0) > 0, np.ptp(inputs, axis=0), 1.0) if inputs.shape[0] else np.ones(m)
    images = preprocessed(tail, np.vstack([centre, centre + np.diag(steps), inputs]))
    at_centre, mapped = images[0], images[m + 1 :]
    basis = (images[1 : m + 1] - at_centre) / steps[:, None]
    scale = max(1.0, float(np.abs(mapped).max(initial=0.0)))
    if not np.allclose((inputs - centre) @ basis + at_centre, mapped, rtol=0.0, atol=AFFINE_RTOL * scale):
        raise TypeError("The Pipeline's steps before the model are not the affine map read from them.")
    return basis
