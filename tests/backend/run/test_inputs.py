"""Seeded inputs: same seed, same data; the program file's own arrays as given."""

import jax
import jax.numpy as jnp
import numpy as np

from shardscope.backend.run.inputs import INT_HIGH, input_data, is_concrete, random_array


def test_same_seed_same_data_per_argument():
    a = random_array((4, 3), np.float32, 0)
    assert np.array_equal(a, random_array((4, 3), np.float32, 0))
    assert not np.array_equal(a, random_array((4, 3), np.float32, 1))
    assert not np.array_equal(a, random_array((4, 3), np.float32, 0, seed=1))
    assert a.dtype == np.float32


def test_dtypes():
    ints = random_array((100,), np.int32, 0)
    assert ints.dtype == np.int32 and ints.min() >= 0 and ints.max() < INT_HIGH
    assert random_array((5,), np.bool_, 0).dtype == np.bool_
    assert random_array((5,), jnp.bfloat16, 0).dtype == jnp.bfloat16


def test_concrete_arrays_are_used_as_given():
    given = np.arange(6.0).reshape(2, 3)
    assert is_concrete(given) and is_concrete(jnp.ones(2)) and is_concrete(3.0)
    struct = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    assert not is_concrete(struct)
    assert np.array_equal(input_data(given, 0), given)
    assert input_data(struct, 0).shape == (2, 3)
