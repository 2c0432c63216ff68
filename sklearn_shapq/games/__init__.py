"""Games: value functions v(S) evaluated on batches of coalitions; the only layer that calls models."""

from sklearn_shapq.games._interventional import InterventionalGame
from sklearn_shapq.games._models import OUTPUTS, ModelFunction, make_model_function

__all__ = ["OUTPUTS", "InterventionalGame", "ModelFunction", "make_model_function"]
