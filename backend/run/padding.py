"""Uneven shardings, padded as XLA pads them.

A dimension of size ``n`` split ``k`` ways that ``k`` does not divide is held in tiles of
``ceil(n / k)``: the array XLA's executable takes and gives is ``padded_shape`` (each
such dimension rounded up to ``k`` tiles), the last tiles holding the remainder and
padding. The seeded inputs are ``pad``-ded with zeros, an output's padding is cut off
with ``unpad``, and each device's piece says how much of its tile is padding
(``real_piece``). The executable a module run compiles with GSPMD for a ``[3, 32]``
argument split 2 ways over rows takes a ``[2, 32]`` parameter on every device (its
``entry_computation_layout``), as torch_xla's own compile of the same sharding does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def tile_counts(sharding: Any, rank: int) -> tuple[int, ...]:
    """How many tiles each of the ``rank`` dimensions is split into by JAX sharding
    ``sharding`` (1 for each dimension of a replicated or single-device one)."""
    hlo = sharding._to_xla_hlo_sharding(rank)
    if not hlo.is_tiled():
        return (1,) * rank
    # The tile assignment's leading dimensions are the array's; any after them group
    # replicas (last_tile_dim_replicate, subgroups).
    return tuple(int(k) for k in hlo.tile_assignment_dimensions()[:rank])


def padded_shape(shape: Sequence[int], counts: Sequence[int]) -> tuple[int, ...]:
    """``shape`` with each dimension rounded up to a whole number of its ``counts``
    tiles of ``ceil(n / k)``."""
    return tuple(-(-n // k) * k if k > 1 else n for n, k in zip(shape, counts, strict=True))


def pad(data: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """``data`` grown to ``shape`` with zeros after its own elements (itself when it has
    that shape already)."""
    extra = [(0, int(want) - have) for have, want in zip(data.shape, shape, strict=False)]
    if not any(after for _, after in extra):
        return data
    extra += [(0, 0)] * (data.ndim - len(extra))
    return np.pad(data, extra)


def unpad(data: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """The first ``shape[d]`` elements of ``data`` along each leading dimension ``d``:
    the array without its padding."""
    return data[tuple(slice(0, int(n)) for n in shape)]


def real_piece(
    ranges: Sequence[Sequence[int]], shape: Sequence[int]
) -> tuple[list[list[int]], list[int]]:
    """A tile's ``[start, stop)`` ``ranges`` in the padded array, as the part of the
    real array of ``shape`` it holds (cut at each dimension's end), and how many of its
    elements along each dimension are padding."""
    real, padding = [], []
    for (start, stop), n in zip(ranges, shape, strict=False):
        a, b = min(start, n), min(stop, n)
        real.append([a, b])
        padding.append((stop - start) - (b - a))
    return real, padding
