"""make_generator: sklearn random_state semantics, independent streams, the global RNG untouched."""

import numpy as np
import pytest

from sklearn_shapq._random import make_generator


def test_int_seeds_repeat_and_streams_differ():
    assert make_generator(3).random() == make_generator(3).random()
    assert make_generator(3, stream=1).random() == make_generator(3, stream=1).random()
    assert make_generator(3, stream=0).random() != make_generator(3, stream=1).random()
    assert make_generator(3).random() != make_generator(4).random()
    assert make_generator(np.int64(3)).random() == make_generator(3).random()


def test_generators_are_used_and_advanced_and_the_global_state_untouched():
    np.random.seed(123)  # noqa: NPY002 -- the global state must stay untouched
    state = np.random.get_state()  # noqa: NPY002
    generator = np.random.default_rng(5)
    assert make_generator(generator) is generator
    assert isinstance(make_generator(np.random.RandomState(5)), np.random.Generator)
    assert make_generator(np.random.RandomState(5)).random() == make_generator(np.random.RandomState(5)).random()
    assert make_generator(None).random() != make_generator(None).random()
    after = np.random.get_state()  # noqa: NPY002
    assert after[0] == state[0] and np.array_equal(after[1], state[1]) and after[2:] == state[2:]


def test_make_generator_errors():
    with pytest.raises(TypeError):
        make_generator("seed")
    with pytest.raises(TypeError):
        make_generator(True)
    with pytest.raises(TypeError):
        make_generator(1.5)
    with pytest.raises(ValueError, match="non-negative"):
        make_generator(-1)
