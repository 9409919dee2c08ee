"""What each device holds of an array: index ranges, local shape, checksum, values.

``shard_records`` reads ``jax.Array.addressable_shards``; ``replicas_match`` checks that
the devices holding the same piece hold the same bytes.
"""

from __future__ import annotations

import zlib
from typing import Any, TypedDict

import numpy as np

# Shards up to this many elements carry their values (for heatmaps); larger ones do not.
MAX_VALUES = 4096
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
    values: list[float | None] | None  # row-major; None past MAX_VALUES, None for NaN/inf


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


def _values(data: np.ndarray) -> list[float | None] | None:
    if data.size > MAX_VALUES:
        return None
    flat = np.asarray(data).reshape(-1)
    if np.issubdtype(flat.dtype, np.complexfloating):
        flat = np.abs(flat)
    return [float(v) if np.isfinite(v) else None for v in flat.astype(np.float64)]


def shard_records(array: Any, budget: ValueBudget | None = None) -> list[ShardRecord]:
    """One record per addressable shard of jax.Array ``array``, in device id order.

    A shard of at most ``MAX_VALUES`` elements carries its values while ``budget`` lasts;
    without a budget, none does."""
    out: list[ShardRecord] = []
    shape = tuple(array.shape)
    for shard in array.addressable_shards:
        data = np.asarray(shard.data)
        out.append(
            {
                "device": int(shard.device.id),
                "index": index_ranges(shard.index, shape),
                "shape": list(data.shape),
                "checksum": checksum(data),
                "values": (
                    _values(data)
                    if budget is not None and data.size <= MAX_VALUES and budget.take(data.size)
                    else None
                ),
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
