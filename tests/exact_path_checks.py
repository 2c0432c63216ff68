"""The check every exact path's tests share: "auto" takes the path, and its values are the enumerated ones."""

import numpy as np

from sklearn_shapq import PermutationShapExplainer
from tests.brute_force import brute_force_shapley, interventional_value


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
