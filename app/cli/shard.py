"""``shard``: show how one tensor is split over a mesh (kind, HLO and Shardy text, tiles)."""

from __future__ import annotations

import argparse
import json
from typing import Protocol

from shardscope.backend.errors import SpecError, shortened

NAME = "shard"
HELP = "Show the tiles, kind and HLO/Shardy text of one tensor under a partition spec."


class ShardArgs(Protocol):
    """What ``shard`` reads of its parsed options."""

    mesh: str
    device_order: str | None
    axis_types: str | None
    shape: str
    spec: str
    strict: bool
    json: bool


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register ``--mesh``, ``--device-order``, ``--axis-types``, ``--shape``, ``--spec``, ``--json``."""
    parser.add_argument("--mesh", required=True, help="axes as name=size, e.g. data=4,model=2")
    parser.add_argument("--device-order", help="device ids filling the mesh, e.g. 0,2,4,6,1,3,5,7")
    parser.add_argument(
        "--axis-types", help="one of Auto/Explicit/Manual per axis, e.g. Auto,Explicit"
    )
    parser.add_argument("--shape", required=True, help="tensor shape, e.g. 16,32")
    parser.add_argument(
        "--spec",
        default="",
        help="one entry per dim: _ (replicated), an axis, or axes joined by + (major first); "
        "a trailing ? marks a dim open, @pN gives a priority. E.g. data,_",
    )
    parser.add_argument(
        "--strict", action="store_true", help="require one spec entry per dim (PyTorch/XLA rule)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


# Tile bounds are computed in int64, and padding can take a bound past the size itself.
MAX_DIM_SIZE = 2**62
# numpy arrays have at most 64 dimensions, and the tile grid is one.
MAX_RANK = 32


def _shape(text: str) -> tuple[int, ...]:
    text = text.strip().strip("()[]")
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # (16,) is a Python 1-tuple
    if parts == [""]:
        return ()
    shown = shortened(text)
    if not all(p.isascii() and p.isdigit() for p in parts):
        raise SpecError(
            f"shape {shown} is not a list of whole numbers >= 0 in digits 0-9 separated by "
            f"single commas: write it like 16,32"
        )
    if len(parts) > MAX_RANK:
        raise SpecError(f"shape has {len(parts)} dims: give at most {MAX_RANK}")
    if any(len(p) > 19 or int(p) > MAX_DIM_SIZE for p in parts):
        raise SpecError(f"shape {shown} has a size over 2**62: give smaller sizes")
    return tuple(int(p) for p in parts)


def run(args: ShardArgs) -> int:
    """Print the sharding of ``--shape`` under ``--spec`` over ``--mesh``."""
    # Imported here: every command's module is imported to build the parser, and the
    # loading commands should not wait for numpy before their worker starts.
    from shardscope.backend.sharding.hlo_text import hlo_sharding_text
    from shardscope.backend.sharding.kinds import sharding_kind
    from shardscope.backend.sharding.mesh import parse_mesh
    from shardscope.backend.sharding.sdy_text import sdy_sharding_text
    from shardscope.backend.sharding.spec import parse_spec, validate_spec
    from shardscope.backend.sharding.tiles import TileMap

    mesh = parse_mesh(args.mesh, args.device_order, args.axis_types)
    shape = _shape(args.shape)
    spec = parse_spec(args.spec)
    warnings = validate_spec(spec, mesh, shape, strict=args.strict)
    rank = len(shape)
    tiles = TileMap.build(mesh, spec, shape)
    kind = sharding_kind(mesh, spec, rank)
    # A compiled module's parameters number devices by mesh position (checked with jax.jit
    # on 8 CPU devices in the order 0,2,4,6,1,3,5,7): that is the form users compare with.
    hlo = hlo_sharding_text(mesh, spec, rank)
    hlo_ids = hlo_sharding_text(mesh, spec, rank, physical=True)
    sdy = sdy_sharding_text(mesh, spec, rank)
    if args.json:
        print(
            json.dumps(
                {
                    "kind": kind.hlo,
                    "torch_xla_kind": kind.torch_xla,
                    "hlo_sharding": hlo,
                    "hlo_sharding_logical": hlo,
                    "hlo_sharding_device_ids": hlo_ids,
                    "sdy_sharding": sdy,
                    "sdy_mesh": mesh.sdy_text(),
                    "tiles": tiles.devices_json(),
                    "replicas": [list(devs) for _, _, devs in tiles.tiles()],
                    "padding": list(tiles.padding),
                    "warnings": warnings,
                }
            )
        )
        return 0
    print(f"mesh:          {mesh.describe()}  ({mesh.size} devices)")
    print(f"spec:          {spec.padded(rank).format() or '(rank 0)'}  on shape {shape}")
    print(f"kind:          {kind.describe()}")
    print(f"hlo_sharding:  {hlo}")
    if hlo_ids != hlo:
        print(f"  (devices by id rather than mesh position: {hlo_ids})")
    print(f"sdy_sharding:  {sdy}")
    print(f"sdy_mesh:      {mesh.sdy_text()}")
    for w in warnings:
        print(f"warning: {w}")
    print()
    print(tiles.table())
    return 0
