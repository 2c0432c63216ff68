"""ProductKernelModel: a dual form used as a fitted model."""

import numpy as np
import pytest

from sklearn_shapq import ProductKernelModel, ProductKernelShapExplainer


def test_predict_shapes_repr_and_fitted():
    rng = np.random.default_rng(0)
    X_fit = rng.normal(size=(6, 3))
    model = ProductKernelShapExplainer.from_dual(rng.normal(size=(6, 2)), X_fit, gamma=0.5, intercept=[1.0, -1.0]).model
    assert isinstance(model, ProductKernelModel)
    assert model.__sklearn_is_fitted__()
    x = rng.normal(size=(4, 3))
    kernel = np.exp(-0.5 * ((x[:, None] - X_fit[None]) ** 2).sum(axis=2))
    np.testing.assert_allclose(model.predict(x), kernel @ model.expansion.components[0].weights + [1.0, -1.0])
    assert repr(model) == "ProductKernelModel(n_anchors=6, n_features=3, n_outputs=2)"
    one = ProductKernelShapExplainer.from_dual(np.ones(6), X_fit).model
    assert one.predict(x).shape == (4,)
    with pytest.raises(ValueError, match="features"):
        one.predict(x[:, :2])
