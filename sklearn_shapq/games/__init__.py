"""Games: value functions v(S) evaluated on batches of coalitions; the only layer that calls models."""

from sklearn_shapq.games._coalition import (
    CallableGame,
    CoalitionGame,
    TableGame,
    UnanimityGame,
    planted_unanimity_game,
)
from sklearn_shapq.games._interventional import InterventionalGame
from sklearn_shapq.games._kernel_expansion import KernelComponent, KernelExpansion, ProductKernelGame
from sklearn_shapq.games._kernel_statistics import HSICWeights, MMDWeights, target_kernel_rows
from sklearn_shapq.games._model_coalition import LocalModelGame, MarginalScoreGame, RetrainGame
from sklearn_shapq.games._models import OUTPUTS, ModelFunction, make_model_function

__all__ = [
    "OUTPUTS",
    "CallableGame",
    "CoalitionGame",
    "LocalModelGame",
    "MarginalScoreGame",
    "RetrainGame",
    "TableGame",
    "UnanimityGame",
    "planted_unanimity_game",
    "HSICWeights",
    "InterventionalGame",
    "KernelComponent",
    "KernelExpansion",
    "MMDWeights",
    "ModelFunction",
    "ProductKernelGame",
    "make_model_function",
    "target_kernel_rows",
]
