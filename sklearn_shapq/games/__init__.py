"""Games: value functions v(S) on batches of coalitions (:class:`Game`); the only layer that calls models."""

from sklearn_shapq.games._enumeration import (
    MAX_ENUMERATED_PLAYERS,
    coalition_masks,
    shapley_from_table,
    shapley_weights,
)
from sklearn_shapq.games._explicit_games import CallableGame, TableGame, UnanimityGame, planted_unanimity_game
from sklearn_shapq.games._game import Game, prefix_masks
from sklearn_shapq.games._grouped_game import GroupedGame
from sklearn_shapq.games._interventional import InterventionalGame, check_same_outputs
from sklearn_shapq.games._kernel_expansion import KernelComponent, KernelExpansion, ProductKernelGame
from sklearn_shapq.games._kernel_statistics import HSICWeights, MMDWeights, target_kernel_rows
from sklearn_shapq.games._models import (
    OUTPUTS,
    PROBABILITY_CLIP,
    ModelFunction,
    is_xgboost,
    make_model_function,
    takes_missing_values,
)
from sklearn_shapq.games._residual_game import ResidualGame
from sklearn_shapq.games._score_games import MarginalScoreGame, RetrainGame
from sklearn_shapq.games._table_codec import TableCodec, keyed_content, refuse_inexact_integers

__all__ = [
    "MAX_ENUMERATED_PLAYERS",
    "OUTPUTS",
    "PROBABILITY_CLIP",
    "CallableGame",
    "Game",
    "GroupedGame",
    "MarginalScoreGame",
    "ResidualGame",
    "RetrainGame",
    "TableCodec",
    "TableGame",
    "UnanimityGame",
    "planted_unanimity_game",
    "coalition_masks",
    "prefix_masks",
    "shapley_from_table",
    "shapley_weights",
    "HSICWeights",
    "InterventionalGame",
    "KernelComponent",
    "KernelExpansion",
    "MMDWeights",
    "ModelFunction",
    "is_xgboost",
    "ProductKernelGame",
    "check_same_outputs",
    "keyed_content",
    "make_model_function",
    "refuse_inexact_integers",
    "takes_missing_values",
    "target_kernel_rows",
]
