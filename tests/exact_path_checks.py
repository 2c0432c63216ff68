"""The checks every exact path's tests share: "auto" takes the path, its values and pairs are the enumerated ones."""

import numpy as np
import pandas as pd

from sklearn_shapq import PermutationShapExplainer
from tests.brute_force import brute_force_shapley, faith_interactions, interventional_value


def assert_auto_takes_the_enumerated_values(model, output, predict, rows, background, path, rtol=1e-9, atol=1e-12):
    """Fit "auto" on ``background``, check it takes ``path``, and compare the values of ``rows`` with brute force.

    Also checks efficiency against ``predict`` (the explained output written from the model's public API) and
    zero standard errors; returns the explanation for the caller's own checks.
    """
    n, d = rows.shape
    explainer = PermutationShapExplainer(model, output=output, background_size=None, progress=False).fit(background)
    assert (explainer.algorithm_, explainer.max_evals_, explainer.background_parts_) == (path, 0, 1)
    explanation = explainer.explain(rows)
    values = explanation.values.reshape(n, d, -1)
    for x, phi in zip(rows, values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(predict, x, background, s), d)
        np.testing.assert_allclose(phi, expected.reshape(d, -1), rtol=rtol, atol=atol)
    total = values.sum(axis=1) + explanation.base_values.reshape(n, -1)
    np.testing.assert_allclose(total, np.asarray(predict(rows)).reshape(n, -1), rtol=rtol, atol=atol)
    np.testing.assert_array_equal(explanation.error_std, 0.0)
    return explanation


def assert_groups_and_faith_pairs_are_enumerated(model, output, X, predict, background_rows, path):
    """On columns a-e of ``X``: the values of the groups {a, b}, {c}, {d, e} and the exact Faith-Shapley pairs of
    the first two rows, both against brute force over the DataFrame's columns (``predict`` takes arrays)."""
    frame = pd.DataFrame(X, columns=list("abcde"))
    background, d = X[background_rows], X.shape[1]
    grouped = PermutationShapExplainer(
        model, output=output, feature_groups={"ab": ["a", "b"], "de": ["d", "e"]}, background_size=None, progress=False
    ).fit(frame.iloc[background_rows])
    assert grouped.algorithm_ == path
    members = [[0, 1], [2], [3, 4]]  # players by first column: ab, c, de
    for x, phi in zip(X[:2], grouped.explain(frame.iloc[:2]).values, strict=True):

        def value(players, x=x):
            return interventional_value(predict, x, background, [c for p in players for c in members[p]])[()]

        np.testing.assert_allclose(phi, brute_force_shapley(value, 3), rtol=1e-9, atol=1e-12)
    explainer = PermutationShapExplainer(model, output=output, background_size=None, progress=False)
    faith = explainer.fit(frame.iloc[background_rows]).explain_interactions(frame.iloc[:2], index="FSII", max_evals=20)
    assert faith.diagnostics["exact"]
    for x, matrix in zip(X[:2], faith.values, strict=True):
        table = np.array(
            [
                np.atleast_1d(interventional_value(predict, x, background, [j for j in range(d) if code >> j & 1]))
                for code in range(1 << d)
            ]
        )
        np.testing.assert_allclose(matrix, faith_interactions(table)[:, :, 0], rtol=1e-8, atol=1e-10)
