"""Top-k by Leverage SHAP (not in the top-k paper): one regression per game on its whole budget, no PAC mode."""

from __future__ import annotations

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._leverage import LeverageAlgorithm
from sklearn_shapq.algorithms._registry import ShapleyEstimate
from sklearn_shapq.algorithms._topk_base import TopKAlgorithm
from sklearn_shapq.algorithms._topk_state import Ledger
from sklearn_shapq.samplers import KeyedStream


@register
class LeverageTopK(TopKAlgorithm):
    """Algorithm "leverage": Leverage SHAP's values of every game, in one batched regression."""

    name = "leverage"
    pac = False
    minimum_needs = "v(∅), v(N) and one complementary pair per jackknife group: values and standard errors"

    @classmethod
    def minimum_evals(cls, d: int) -> int:
        """Leverage SHAP's minimum (:meth:`LeverageAlgorithm.minimum_evals`)."""
        return LeverageAlgorithm.minimum_evals(d)

    @classmethod
    def refusal(cls, d: int, max_evals: int | None, t_min: int | None = None, pac: bool = False) -> str | None:
        """Below the minimum, or Leverage SHAP's own refusal (a regression over its memory bound)."""
        if max_evals is None:
            return "algorithm 'leverage' spends a fixed budget: give max_evals."
        return super().refusal(d, max_evals) or LeverageAlgorithm.refusal(int(max_evals), d)

    @classmethod
    def bytes_per_game(cls, d: int, max_evals: float) -> int:
        """Return the working memory of one game's regression (one output); a lone player needs none."""
        if d < 2:  # φ = v(N) − v(∅): the driver regresses nothing
            return super().bytes_per_game(d, max_evals)
        return LeverageAlgorithm(int(min(max_evals, 2.0**d)), d, 0).bytes_per_game(1)

    def run(self, ledger: Ledger, stream: KeyedStream) -> ShapleyEstimate:
        """Regress every game on its budget's pairs (keyed by the game's key); no player statistics."""
        d, xp = ledger.n_players, ledger.xp
        games = xp.arange(ledger.n_games)
        regression = LeverageAlgorithm(int(ledger.budget), d, 0)
        estimate = regression.estimate(ledger.game, games, ledger.game.backend.to_numpy(stream.keys))
        values = estimate.values[games, :, ledger.outputs]
        stderr = estimate.stderr[games, :, ledger.outputs]
        ledger.used[:] = regression.n_evals
        counts = xp.full((ledger.n_games, d), regression.n_evals - 2)
        return ShapleyEstimate(values=values, stderr=stderr, dof=None, n_evals=ledger.used, counts=counts)
