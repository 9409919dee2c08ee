"""What each device holds of an array: index ranges, local shape, checksum, values.

``shard_records`` reads ``jax.Array.addressable_shards``; ``replicas_match`` checks that
the devices holding the same piece hold the same bytes.

Values for the window's heat maps are capped: a shard of at most ``MAX_VALUES`` elements
carries all of them, a larger one its mean over blocks (``pooled``: laid out 2-D, leading
dimensions flattened into rows, at most ``MAX_SIDE`` x ``MAX_SIDE``), so one shard never
carries more than ``MAX_VALUES`` numbers. ``heat_grid`` turns either into the 2-D array
a heat map draws. A PRNG key array's shard is read as its key data (``inputs.host_array``).
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np

from shardscope.backend.run.inputs import host_array, is_key
from shardscope.backend.run.padding import real_piece, unpad

# Shards up to this many elements carry their values (for heatmaps); larger ones their
# block means, at most MAX_SIDE x MAX_SIDE of them.
MAX_VALUES = 4096
MAX_SIDE = 64
# The most values one run reports in all (about 20 MB of JSON); shards past it carry none.
MAX_TOTAL_VALUES = 1_000_000


class ValueBudget:
    """How many more values a run may report."""

    def __init__(self, total: int = MAX_TOTAL_VALUES) -> None:
        self.left = total

    def take(self, n: int) -> bool:
        """Whether ``n`` more values fit; if so they are counted."""
        if n > self.left:
            return False
        self.left -= n
        return True


class ShardRecord(TypedDict):
    """One device's piece of an array (plain data: it crosses processes as JSON)."""

    device: int
    index: list[list[int]]  # [start, stop) per dimension
    shape: list[int]
    checksum: str
    values: list[float | None] | None  # row-major; None past the budget, None for NaN/inf
    values_shape: list[int] | None  # how ``values`` are laid out (``shape`` when all of them)
    # A replica with the same piece and bytes as an earlier record: that record's device,
    # whose values are these (sent once).
    values_from: int | None
    # Per dimension, how many elements of the device's tile are padding past ``index``
    # (an uneven sharding's last tiles, ``padding``); zeros for an even one.
    padding: list[int]


def checksum(data: np.ndarray) -> str:
    """CRC-32 of the array's bytes in row-major order, as 8 hex digits."""
    return f"{zlib.crc32(np.ascontiguousarray(data).tobytes()) & 0xFFFFFFFF:08x}"


def index_ranges(index: tuple[slice, ...], shape: tuple[int, ...]) -> list[list[int]]:
    """``[start, stop)`` per dimension of a shard's index (slices with None ends filled in)."""
    out = []
    for s, n in zip(index, shape, strict=False):
        start, stop, _ = s.indices(n)
        out.append([start, stop])
    return out


def as_2d(data: np.ndarray) -> np.ndarray:
    """``data`` as rows and columns: a scalar is 1x1, 1-D one row, more dimensions have the
    leading ones flattened into rows (complex numbers as their magnitude)."""
    a = np.asarray(data)
    if np.iscomplexobj(a):
        a = np.abs(a)
    a = a.astype(np.float64)
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def pooled(data: np.ndarray, side: int = MAX_SIDE) -> np.ndarray:
    """``as_2d(data)`` averaged over blocks so that neither side exceeds ``side``
    (NaN and infinities left out of a block's mean; a block of only those is NaN)."""
    a = as_2d(data)
    a = np.where(np.isfinite(a), a, np.nan)
    for axis in (0, 1):
        n = a.shape[axis]
        block = -(-n // side)
        if block <= 1:
            continue
        pad = (-n) % block
        if pad:
            widths = [(0, 0), (0, 0)]
            widths[axis] = (0, pad)
            a = np.pad(a, widths, constant_values=np.nan)
        shape = list(a.shape)
        shape[axis : axis + 1] = [shape[axis] // block, block]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN block's mean is NaN
            a = np.nanmean(a.reshape(shape), axis=axis + 1)
    return a


def preview(data: np.ndarray) -> tuple[list[float | None], list[int]]:
    """The values a shard carries and their layout: all of them in the shard's shape up
    to ``MAX_VALUES``, else ``pooled`` block means."""
    a = np.asarray(data)
    if a.size <= MAX_VALUES:
        flat = as_2d(a).reshape(-1)
        shape = list(a.shape)
    else:
        grid = pooled(a)
        flat, shape = grid.reshape(-1), list(grid.shape)
    return [float(v) if np.isfinite(v) else None for v in flat], shape


def heat_grid(values: Sequence[float | None], shape: Sequence[int]) -> np.ndarray:
    """What a heat map of one shard draws: ``values`` laid out in ``shape``, as 2-D
    (``as_2d``), pooled to at most ``MAX_SIDE`` a side; None becomes NaN."""
    a = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    return pooled(a.reshape(tuple(shape)) if shape else a.reshape(()))


def shard_records(
    array: Any, budget: ValueBudget | None = None, shape: tuple[int, ...] | None = None
) -> list[ShardRecord]:
    """One record per addressable shard of jax.Array ``array``, in device id order.

    Each shard carries its ``preview`` values while ``budget`` lasts; without a budget,
    none does. A replica holding the same piece with the same bytes as one already
    recorded names it in ``values_from`` instead of repeating its values. ``shape``:
    the real array's, where ``array`` is it padded (``padding.padded_shape``); each
    record then covers its tile's real part, and says how much of the tile is padding."""
    out: list[ShardRecord] = []
    padded = tuple(array.shape)
    shape = padded if shape is None else tuple(shape)
    keys = is_key(array)
    carried: dict[tuple, int] = {}  # (index, checksum) -> the device whose record has the values
    for shard in array.addressable_shards:
        device = int(shard.device.id)
        index, padding = real_piece(index_ranges(shard.index, padded), shape)
        data = unpad(host_array(shard.data), [b - a for a, b in index])
        crc = checksum(data)
        # A key's value on the heat maps: the last word of its key data (the seed of
        # ``jax.random.key(seed)``); the checksum covers every word.
        shown = data[..., -1] if keys else data
        key = (tuple(map(tuple, index)), crc)
        values = shape_of = same_as = None
        if budget is not None:
            if key in carried:
                same_as = carried[key]
            elif budget.take(min(shown.size, MAX_VALUES)):
                values, shape_of = preview(shown)
                carried[key] = device
        out.append(
            {
                "device": device,
                "index": index,
                "shape": list(shown.shape),
                "checksum": crc,
                "values": values,
                "values_shape": shape_of,
                "values_from": same_as,
                "padding": padding,
            }
        )
    out.sort(key=lambda r: r["device"])
    return out


def replica_mismatches(records: list[ShardRecord]) -> list[list[int]]:
    """Groups of devices that hold the same piece with different bytes (empty: replicas
    match)."""
    by_piece: dict[tuple, dict[str, list[int]]] = {}
    for r in records:
        key = tuple(map(tuple, r["index"]))
        by_piece.setdefault(key, {}).setdefault(r["checksum"], []).append(r["device"])
    out = []
    for sums in by_piece.values():
        if len(sums) > 1:
            out.append(sorted(d for devices in sums.values() for d in devices))
    return out


def max_relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    """``max |actual - expected| / max |expected|`` (absolute when expected is all zero);
    0.0 for equal arrays, inf where NaNs or shapes differ."""
    a = np.asarray(actual)
    b = np.asarray(expected)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        return float(np.mean(a != b))
    a64 = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    b64 = b.astype(np.complex128 if np.iscomplexobj(b) else np.float64)
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    if (nan_a != nan_b).any():
        return float("inf")
    finite = ~nan_b
    if not finite.any():
        return 0.0
    diff = np.abs(a64[finite] - b64[finite])
    diff = np.where(np.isnan(diff), 0.0, diff)  # inf - inf where both are inf
    scale = float(np.max(np.abs(b64[finite][np.isfinite(b64[finite])]), initial=0.0))
    worst = float(np.max(diff, initial=0.0))
    return worst / scale if scale > 0 else worst


def tensor_report(
    name: str,
    array: Any,
    spec: str,
    hlo: str,
    expected: np.ndarray | None,
    values: ValueBudget | None,
    shape: tuple[int, ...] | None = None,
) -> dict:
    """One argument's or output's entry in a run worker's report: its shards (with their
    values within ``values``), its sharding as ``spec`` and ``hlo`` text, and its error
    against ``expected``, the unsharded run's array (None: no reference). ``shape``: the
    real array's where ``array`` is it padded; the padding is left out of both."""
    shape = tuple(array.shape) if shape is None else tuple(shape)
    records = shard_records(array, values, shape)
    error, finite = None, True
    if expected is not None and is_key(array):
        # Keys are equal or not: the share of their key data's words that differ.
        words = unpad(host_array(array), shape)
        error = float(np.mean(words != expected)) if words.shape == expected.shape else 1.0
    elif expected is not None:
        error = max_relative_error(unpad(np.asarray(array), shape), expected)
        finite = bool(np.isfinite(error))
        error = error if finite else None
    return {
        "name": name,
        "shape": list(shape),
        "dtype": str(array.dtype),
        "spec": spec,
        "hlo_sharding": hlo,
        "shards": records,
        "replica_mismatches": replica_mismatches(records),
        "max_rel_error": error,
        # NaN or infinity where the unsharded run differs: no finite error to give.
        "error_not_finite": not finite,
    }
