"""Short texts about tiles and the devices holding them, as the tile views show them.

Grid labels (``0-7``), device lists (``4 devices 0, 2, 4, 6``), one tile's description,
a tile map's summary line and the caption of a sliced dimension.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardscope.backend.sharding.tiles import DimInfo, TileMap


def tile_label(devices: tuple[int, ...]) -> str:
    """Short label of the devices holding a tile: ``5``, ``0,4,8,12``, ``0-7`` for a run of
    consecutive ids, or ``0,2,…(8)`` when the list is long."""
    devs = list(devices)
    if len(devs) <= 4:
        return ",".join(map(str, devs))
    if devs == list(range(devs[0], devs[0] + len(devs))):
        return f"{devs[0]}-{devs[-1]}"
    return f"{devs[0]},{devs[1]},\u2026({len(devs)})"


def describe_devices(devices: tuple[int, ...] | list[int], limit: int = 16) -> str:
    """``devices 0, 4`` (long lists shortened with a count)."""
    devs = list(devices)
    if not devs:
        return "no device"
    head = ", ".join(str(d) for d in devs[:limit])
    more = f" \u2026 (+{len(devs) - limit})" if len(devs) > limit else ""
    word = "device" if len(devs) == 1 else f"{len(devs)} devices"
    return f"{word} {head}{more}"


def describe_tile(
    key: Sequence[int], ranges: Sequence[tuple[int, int]], devices: Sequence[int]
) -> str:
    """``tile (1, 0) · device 2 · d0[16:32) d1[0:32)``: index, holders and ranges of a tile."""
    rng = " ".join(
        f"d{d}[{a}:{b})" + (" empty" if a == b else "") for d, (a, b) in enumerate(ranges)
    )
    return (
        f"tile ({', '.join(str(k) for k in key)}) \u00b7 {describe_devices(devices)} \u00b7 {rng}"
    )


def tile_map_summary(tile_map: TileMap) -> str:
    """``8 tiles · each on 2 devices · uneven: dim 0 pads 2 · 2 empty shards``."""
    tm = tile_map
    parts = [f"{tm.num_tiles} tile{'s' if tm.num_tiles != 1 else ''}"]
    if tm.replication > 1:
        parts.append(f"each on {tm.replication} devices")
    uneven = [f"dim {d} pads {info.padding}" for d, info in enumerate(tm.dims) if info.is_uneven]
    if uneven:
        parts.append("uneven: " + ", ".join(uneven))
    empty = tm.empty_shards
    if empty:
        parts.append(f"{empty} empty shard{'s' if empty != 1 else ''}")
    return " \u00b7 ".join(parts)


def slice_label(dim: int, info: DimInfo, tile: int) -> str:
    """Caption of a dimension shown one tile at a time: ``dim 2: tile 2/4  [8:16)``."""
    a, b = min(tile * info.tile, info.size), min((tile + 1) * info.tile, info.size)
    return f"dim {dim}: tile {tile + 1}/{info.shards}  [{a}:{b})"
