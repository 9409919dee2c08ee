"""Inputs for a run: the arrays a program file gives, else seeded random data.

Each flat argument ``i`` without concrete data gets values from
``numpy.random.default_rng([seed, i])``: floats from a standard normal, integers in
``[0, INT_HIGH)`` (small enough to index any axis of the examples), booleans fair coins.
The same seed gives the same inputs in any process.

A typed PRNG key array (``jax.random.key``) is held on the host as its key data
(``jax.random.key_data``: unsigned words, the key's shape followed by its
implementation's); seeded keys get random words. ``device_array`` wraps them again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SEED = 0
INT_HIGH = 8


def is_concrete(leaf: Any) -> bool:
    """Whether ``leaf`` holds data (a NumPy or JAX array, a Python number), not only a
    shape and dtype."""
    if isinstance(leaf, np.ndarray | np.generic | int | float | complex | bool):
        return True
    # A jax.Array has data; a ShapeDtypeStruct has shape and dtype only.
    return hasattr(leaf, "addressable_shards")


def is_key(leaf: Any) -> bool:
    """Whether ``leaf`` (an array or a ``ShapeDtypeStruct``) is a typed PRNG key array."""
    return str(getattr(leaf, "dtype", "")).startswith("key<")


def host_array(array: Any) -> np.ndarray:
    """The data of a JAX (or NumPy) array as NumPy: a key array's key data."""
    if is_key(array):
        import jax

        return np.asarray(jax.random.key_data(array))
    return np.asarray(array)


def device_array(data: np.ndarray, leaf: Any) -> Any:
    """What a run hands JAX for flat argument ``leaf`` with host ``data``: a key array
    wrapped from its key data, any other data as it is."""
    if not is_key(leaf):
        return data
    import jax

    return jax.random.wrap_key_data(data, impl=leaf.dtype._impl)


def host_form(leaf: Any) -> tuple[tuple[int, ...], Any]:
    """The shape and dtype ``host_array`` gives an array of ``leaf``'s shape and dtype."""
    if is_key(leaf):
        impl = leaf.dtype._impl
        return tuple(leaf.shape) + tuple(impl.key_shape), np.dtype(np.uint32)
    return tuple(leaf.shape), leaf.dtype


def random_array(shape: tuple[int, ...], dtype: Any, index: int, seed: int = SEED) -> np.ndarray:
    """Seeded data for flat argument ``index``: normal floats, small ints, fair booleans."""
    rng = np.random.default_rng([seed, index])
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, INT_HIGH, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def input_data(leaf: Any, index: int, seed: int = SEED) -> np.ndarray:
    """The host data for flat argument ``index``: its own values, or seeded random data
    of its shape and dtype."""
    if is_concrete(leaf):
        return host_array(leaf)
    if is_key(leaf):
        words = tuple(leaf.shape) + tuple(leaf.dtype._impl.key_shape)
        rng = np.random.default_rng([seed, index])
        return rng.integers(0, 2**32, size=words, dtype=np.uint64).astype(np.uint32)
    return random_array(tuple(leaf.shape), leaf.dtype, index, seed)
