"""Feature selection by Shapley values: ``TopKShapley`` (CMCS top-k identification)."""

from sklearn_shapq.selection._topk import TopKShapley

__all__ = ["TopKShapley"]
