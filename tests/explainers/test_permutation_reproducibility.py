"""random_state semantics: identical results for an int seed, global RNG untouched."""

import numpy as np

from sklearn_shapq import PermutationShapExplainer


def _model(Z):
    return Z[:, 0] * Z[:, 1] * Z[:, 2] + np.sin(Z[:, 3])


def _explainer(**kwargs):
    rng = np.random.default_rng(0)
    params = dict(algorithm="mc", max_evals=60, background_size=20) | kwargs
    return PermutationShapExplainer(_model, **params).fit(rng.normal(size=(100, 6))), rng.normal(size=(8, 6))


def test_same_seed_identical_every_call_and_global_rng_untouched():
    np.random.seed(123)  # noqa: NPY002 -- the global state must stay untouched
    state = np.random.get_state()  # noqa: NPY002
    explainer, X = _explainer(random_state=42)
    first = explainer.explain(X)
    second = explainer.explain(X)
    np.testing.assert_array_equal(first.values, second.values)
    np.testing.assert_array_equal(first.error_std, second.error_std)
    other, _ = _explainer(random_state=42)
    np.testing.assert_array_equal(other.explain(X).values, first.values)
    after = np.random.get_state()  # noqa: NPY002
    assert after[0] == state[0] and np.array_equal(after[1], state[1]) and after[2:] == state[2:]


def test_results_do_not_depend_on_batch_size():
    a, X = _explainer(random_state=7, batch_size=20)
    b, _ = _explainer(random_state=7, batch_size="auto")
    np.testing.assert_allclose(a.explain(X).values, b.explain(X).values, atol=1e-13)


def test_different_seeds_differ_and_none_is_random():
    a, X = _explainer(random_state=1)
    b, _ = _explainer(random_state=2)
    assert not np.allclose(a.explain(X).values, b.explain(X).values)
    c, _ = _explainer(random_state=None)
    assert not np.allclose(c.explain(X).values, c.explain(X).values)


def test_generator_and_randomstate_accepted():
    gen = np.random.default_rng(5)
    explainer, X = _explainer(random_state=gen)
    assert not np.allclose(explainer.explain(X).values, explainer.explain(X).values)  # the generator advances
    explainer, X = _explainer(random_state=np.random.RandomState(5))
    assert explainer.explain(X).values.shape == (8, 6)


def test_background_subsample_reproducible():
    a, _ = _explainer(random_state=3)
    b, _ = _explainer(random_state=3)
    np.testing.assert_array_equal(a.background_, b.background_)
    assert a.background_.shape == (20, 6)
    full, _ = _explainer(random_state=3, background_size=None)
    assert full.background_.shape == (100, 6)
