"""Inputs for a run: the arrays a program file gives, else seeded random data.

Each flat argument ``i`` without concrete data gets values from
``numpy.random.default_rng([seed, i])``: floats from a standard normal, integers in
``[0, INT_HIGH)`` (small enough to index any axis of the examples), booleans fair coins.
The same seed gives the same inputs in any process.
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
        return np.asarray(leaf)
    return random_array(tuple(leaf.shape), leaf.dtype, index, seed)
