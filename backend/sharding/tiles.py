"""Tile maps: which index range of a tensor each device holds.

Uneven dimensions follow XLA's padding: a dim of size n split s ways has tiles of
ceil(n / s); the last tiles are shorter or empty. Everything is vectorised over devices
so a 4096-device mesh costs a few numpy passes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from shardscope.backend.errors import SpecError
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec, check_spec


def mesh_coords(mesh: Mesh) -> np.ndarray:
    """Coordinates of every mesh position, shape (devices, axes), row-major."""
    sizes = mesh.axis_sizes
    return np.indices(sizes, dtype=np.int64).reshape(len(sizes), -1).T


def shard_indices(mesh: Mesh, spec: Spec, rank: int) -> np.ndarray:
    """Tile index per dim for every mesh position, shape (devices, rank).

    A dim split by axes (a1, ..., am) takes the mixed-radix number of the device's
    coordinates along them, a1 most significant (JAX's major-to-minor tuple rule).
    """
    spec = spec.padded(rank)
    coords = mesh_coords(mesh)
    out = np.zeros((mesh.size, rank), dtype=np.int64)
    for d, dim in enumerate(spec.dims):
        idx = np.zeros(mesh.size, dtype=np.int64)
        for a in dim.axes:
            i = mesh.axis_index(a)
            idx = idx * mesh.axis_sizes[i] + coords[:, i]
        out[:, d] = idx
    return out


def torch_xla_tile_assignment(mesh: Mesh, spec: Spec, rank: int | None = None) -> np.ndarray:
    """Device ids laid out as PyTorch/XLA's ``mark_sharding`` builds its tile assignment.

    The tiled mesh axes (tuple entries flattened, in spec order) are permuted first and
    the untouched axes appended; the logical mesh is transposed by that permutation,
    each tuple's adjacent axes are merged into one, replicated dims get size 1 and the
    untouched axes are merged into one trailing replication dim. Shape: (t_0, ..., R).
    """
    rank = len(spec.dims) if rank is None else rank
    spec = spec.padded(rank)
    perm = [mesh.axis_index(a) for a in spec.used_axes]
    missing = sorted(set(range(len(mesh.axes))) - set(perm))
    grid = mesh.device_grid().transpose(perm + missing)
    sizes = mesh.shape
    tile_dims = [math.prod(sizes[a] for a in d.axes) for d in spec.dims]
    replicas = math.prod(mesh.axis_sizes[i] for i in missing)
    return grid.reshape(tile_dims + [replicas])


@dataclass(frozen=True)
class DimInfo:
    """How one tensor dim is split: shard count, tile length and padding."""

    size: int
    shards: int
    tile: int
    padding: int

    @property
    def is_uneven(self) -> bool:
        """The shards do not divide the dim, so XLA pads the last tiles."""
        return self.padding > 0


class TileMap:
    """Per-device index ranges of a tensor under a sharding, and the replicas of each tile.

    ``starts``/``stops`` are (devices, rank) arrays in mesh-position order;
    ``device_ids[i]`` is the device at position i. Build with ``TileMap.build``.
    """

    def __init__(
        self,
        shape: Sequence[int],
        device_ids: np.ndarray,
        tile_index: np.ndarray,
        shards: Sequence[int],
    ) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.device_ids = np.asarray(device_ids, dtype=np.int64)
        self.tile_index = np.asarray(tile_index, dtype=np.int64).reshape(
            len(self.device_ids), len(self.shape)
        )
        sizes = np.asarray(self.shape, dtype=np.int64)
        counts = np.asarray(shards, dtype=np.int64)
        tile = -(-sizes // np.maximum(counts, 1))
        self.dims = tuple(
            DimInfo(int(n), int(s), int(t), int(t * s - n))
            for n, s, t in zip(sizes, counts, tile, strict=True)
        )
        self.starts = np.minimum(self.tile_index * tile, sizes)
        self.stops = np.minimum((self.tile_index + 1) * tile, sizes)
        self._row_of_id = {int(d): i for i, d in enumerate(self.device_ids)}
        self._groups: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def build(
        cls, mesh: Mesh, spec: Spec, shape: Sequence[int], *, strict: bool = False
    ) -> TileMap:
        """The tile map of a ``shape`` tensor sharded by ``spec`` over ``mesh`` (JAX rules)."""
        shape = tuple(int(s) for s in shape)
        spec = check_spec(spec, mesh, shape, strict=strict)
        sizes = mesh.shape
        shards = [math.prod(sizes[a] for a in d.axes) for d in spec.dims]
        ids = np.asarray(mesh.device_order, dtype=np.int64)
        return cls(shape, ids, shard_indices(mesh, spec, len(shape)), shards)

    @classmethod
    def from_tile_assignment(cls, shape: Sequence[int], assignment: np.ndarray) -> TileMap:
        """A tile map from an HLO-style tile assignment of device ids, shape (t_0, ..., [R]).

        Any trailing dims beyond the tensor's rank are replication groups.
        """
        shape = tuple(int(s) for s in shape)
        rank = len(shape)
        assignment = np.asarray(assignment, dtype=np.int64)
        if assignment.ndim < rank:
            raise SpecError(
                f"tile assignment has {assignment.ndim} dims for a rank-{rank} tensor: "
                f"give at least one tile dim per tensor dim"
            )
        tile_dims = assignment.shape[:rank]
        idx = np.indices(assignment.shape, dtype=np.int64).reshape(assignment.ndim, -1).T[:, :rank]
        return cls(shape, assignment.reshape(-1), idx, tile_dims)

    @property
    def rank(self) -> int:
        """Rank of the tensor."""
        return len(self.shape)

    @property
    def is_uneven(self) -> tuple[bool, ...]:
        """Per dim: whether XLA pads it (shards do not divide it)."""
        return tuple(d.is_uneven for d in self.dims)

    @property
    def padding(self) -> tuple[int, ...]:
        """Per dim: elements of padding XLA adds to make the dim divide evenly."""
        return tuple(d.padding for d in self.dims)

    def ranges(self, device_id: int) -> tuple[tuple[int, int], ...]:
        """[start, stop) per dim of the tile held by ``device_id``."""
        try:
            row = self._row_of_id[int(device_id)]
        except KeyError:
            raise SpecError(
                f"device {device_id} is not in this mesh: pick one of its device ids"
            ) from None
        return tuple(
            (int(a), int(b)) for a, b in zip(self.starts[row], self.stops[row], strict=True)
        )

    def device_ranges(self) -> dict[int, tuple[tuple[int, int], ...]]:
        """Every device id (ascending) to its per-dim [start, stop) ranges."""
        return {
            int(self.device_ids[r]): self.ranges(int(self.device_ids[r]))
            for r in np.argsort(self.device_ids)
        }

    def _grouped(self) -> tuple[np.ndarray, np.ndarray]:
        if self._groups is None:
            if self.rank == 0:
                keys = np.zeros((1, 0), dtype=np.int64)
                inverse = np.zeros(len(self.device_ids), dtype=np.int64)
            else:
                keys, inverse = np.unique(self.tile_index, axis=0, return_inverse=True)
            self._groups = (keys, np.asarray(inverse).reshape(-1))
        return self._groups

    @property
    def num_tiles(self) -> int:
        """Number of distinct tiles."""
        return len(self._grouped()[0])

    @property
    def replication(self) -> int:
        """How many devices hold each tile (the same for every tile)."""
        return len(self.device_ids) // max(self.num_tiles, 1)

    @property
    def empty_shards(self) -> int:
        """How many devices hold an empty tile (no elements along some dim: all padding)."""
        if self.rank == 0:
            return 0
        sizes = np.asarray(self.stops - self.starts)
        return int(np.count_nonzero((sizes == 0).any(axis=1)))

    def tiles(self) -> list[tuple[tuple[int, ...], tuple[tuple[int, int], ...], tuple[int, ...]]]:
        """Each distinct tile: (tile index, per-dim [start, stop), device ids holding it).

        Tiles are in row-major tile-index order; devices within a tile ascend.
        """
        keys, inverse = self._grouped()
        order = np.lexsort((self.device_ids, inverse))
        bounds = np.searchsorted(inverse[order], np.arange(len(keys) + 1))
        sizes = np.asarray(self.shape, dtype=np.int64)
        tile_len = np.asarray([d.tile for d in self.dims], dtype=np.int64)
        out = []
        for k, key in enumerate(keys):
            start = np.minimum(key * tile_len, sizes)
            stop = np.minimum((key + 1) * tile_len, sizes)
            devs = tuple(int(d) for d in self.device_ids[order[bounds[k] : bounds[k + 1]]])
            rng = tuple((int(a), int(b)) for a, b in zip(start, stop, strict=True))
            out.append((tuple(int(i) for i in key), rng, devs))
        return out

    def devices_json(self) -> dict[str, list[list[int]]]:
        """Device id (as a string) to a list of [start, stop] pairs, one per dim."""
        order = np.argsort(self.device_ids)
        starts = self.starts[order].tolist()
        stops = self.stops[order].tolist()
        return {
            str(int(d)): [[a, b] for a, b in zip(s, e, strict=True)]
            for d, s, e in zip(self.device_ids[order].tolist(), starts, stops, strict=True)
        }

    def to_json(self) -> dict[str, Any]:
        """Shape, per-dim split info, per-device ranges and per-tile replicas, JSON-able."""
        return {
            "shape": list(self.shape),
            "dims": [
                {
                    "size": d.size,
                    "shards": d.shards,
                    "tile": d.tile,
                    "padding": d.padding,
                    "uneven": d.is_uneven,
                }
                for d in self.dims
            ],
            "devices": self.devices_json(),
            "tiles": [
                {"index": list(k), "ranges": [list(r) for r in rng], "devices": list(devs)}
                for k, rng, devs in self.tiles()
            ],
        }

    def table(self, max_rows: int = 64) -> str:
        """A human-readable table: one row per distinct tile, with the devices holding it."""
        tiles = self.tiles()
        rows = [("tile", "ranges", "devices")]
        for key, rng, devs in tiles[:max_rows]:
            rows.append(
                (
                    "(" + ",".join(str(k) for k in key) + ")",
                    "[" + ", ".join(f"{a}:{b}" for a, b in rng) + "]",
                    ",".join(str(d) for d in devs),
                )
            )
        widths = [max(len(r[c]) for r in rows) for c in range(2)]
        lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]}" for r in rows]
        if len(tiles) > max_rows:
            lines.append(f"... {len(tiles) - max_rows} more tiles")
        return "\n".join(lines)
