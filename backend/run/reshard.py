"""Resharding one tensor: which device sends which slice to which device (``device_put``).

``plan_reshard(mesh, source, target, shape)`` compares two shardings of a tensor on one
mesh, device by device (tile maps in ``sharding.tiles``, JAX's rules): a device whose new
piece is the piece it holds keeps it (free); one whose new piece lies inside what it
holds slices it locally; any other receives the parts it lacks from devices that hold
them. Each part comes from the device holding that source tile that has sent the fewest
bytes so far (lowest id on a tie), so replicated sources share the sending.

The whole move is ``free`` (the layout does not change), ``local`` (slices only) or
``traffic`` (devices exchange data), with bytes per move and in all. ``check_reshard``
runs ``jax.device_put`` from one sharding to the other for real in a worker and checks
each device's new piece against the plan and against the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.json_form import JsonForm
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec
from shardscope.backend.sharding.tiles import TileMap

Box = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Move(JsonForm):
    """One slice sent from one device to another."""

    source: int
    target: int
    index: Box  # [start, stop) per dimension of the tensor
    bytes: int


@dataclass(frozen=True)
class DeviceStep(JsonForm):
    """What one device does: ``same`` (keeps its piece), ``slice`` (cuts its new piece
    from what it holds), ``receive`` (gets parts from others) or ``empty`` (holds
    nothing afterwards)."""

    device: int
    action: str
    before: Box
    after: Box


@dataclass(frozen=True)
class ReshardPlan(JsonForm):
    """Moving a tensor from one sharding to another on the same mesh."""

    shape: tuple[int, ...]
    source: str  # spec text
    target: str
    kind: str  # free | local | traffic
    steps: tuple[DeviceStep, ...]
    moves: tuple[Move, ...]
    bytes: int  # moved between devices, in all


def _size(box: Box) -> int:
    return math.prod(max(0, b - a) for a, b in box)


def _intersect(a: Box, b: Box) -> Box | None:
    out = tuple((max(x0, y0), min(x1, y1)) for (x0, x1), (y0, y1) in zip(a, b, strict=True))
    return out if all(lo < hi for lo, hi in out) else None


def _inside(inner: Box, outer: Box) -> bool:
    return all(o0 <= i0 and i1 <= o1 for (i0, i1), (o0, o1) in zip(inner, outer, strict=True))


def plan_reshard(
    mesh: Mesh, source: Spec, target: Spec, shape: Sequence[int], itemsize: int = 4
) -> ReshardPlan:
    """The moves that take a ``shape`` tensor from ``source`` to ``target`` on ``mesh``."""
    shape = tuple(int(s) for s in shape)
    before = TileMap.build(mesh, source, shape).device_ranges()
    after = TileMap.build(mesh, target, shape).device_ranges()
    holders: dict[Box, list[int]] = {}
    for device, box in before.items():
        if _size(box):
            holders.setdefault(box, []).append(device)
    sent: dict[int, int] = dict.fromkeys(before, 0)
    steps, moves = [], []
    for device, want in after.items():
        own = before[device]
        if not _size(want):
            steps.append(DeviceStep(device, "same" if not _size(own) else "empty", own, want))
            continue
        if want == own:
            steps.append(DeviceStep(device, "same", own, want))
            continue
        if _inside(want, own):
            steps.append(DeviceStep(device, "slice", own, want))
            continue
        steps.append(DeviceStep(device, "receive", own, want))
        for tile, devices in holders.items():
            part = _intersect(want, tile)
            if part is None or (_size(own) and _inside(part, own)):
                continue
            sender = min(devices, key=lambda d: (sent[d], d))
            size = _size(part) * itemsize
            sent[sender] += size
            moves.append(Move(sender, device, part, size))
    actions = {s.action for s in steps}
    kind = "traffic" if moves else ("local" if actions & {"slice", "empty"} else "free")
    return ReshardPlan(
        shape,
        source.format(),
        target.format(),
        kind,
        tuple(steps),
        tuple(moves),
        sum(m.bytes for m in moves),
    )


def check_reshard(
    mesh: Mesh,
    source: Spec,
    target: Spec,
    shape: Sequence[int],
    dtype: str = "float32",
    *,
    timeout: float = 120.0,
) -> dict:
    """Run ``jax.device_put`` from ``source`` to ``target`` in a worker on ``mesh.size``
    fake CPU devices; per device, the index it ends with and whether its data equal that
    slice of the tensor (``{"devices": {id: {"index": ..., "data_ok": bool}}}``)."""
    job = {
        "kind": "reshard",
        "mesh": mesh.to_json(),
        "source": source.format(),
        "target": target.format(),
        "shape": list(shape),
        "dtype": dtype,
        "cpu_devices": mesh.size,
        "cwd": str(Path.cwd()),
    }
    report = run_json_worker(
        "shardscope.backend.run.worker",
        job,
        what="the reshard check",
        cwd=Path.cwd(),
        timeout=timeout,
        env={"JAX_PLATFORMS": "cpu"},
    )
    return {int(k): v for k, v in report["devices"].items()}
