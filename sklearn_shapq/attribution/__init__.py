"""Exact Shapley attribution of kernel statistics: HSIC (also a feature selector) and MMD²."""

from sklearn_shapq.attribution._hsic import HSICAttribution
from sklearn_shapq.attribution._mmd import MMDAttribution

__all__ = ["HSICAttribution", "MMDAttribution"]
