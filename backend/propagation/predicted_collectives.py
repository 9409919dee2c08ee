"""Collectives before compiling: Shardy's explicit reshards on the propagated module.

After propagation (and ``sdy-close-shardings``) the module goes through
``sdy-populate-op-sharding-rules``, ``sdy-insert-explicit-reshards{enable-full-version=true}``
and ``sdy-reshard-to-collectives`` (full version: without it the pass only handles calls and
a few special ops). Each ``sdy.all_gather`` / ``all_slice`` / ``all_reduce`` /
``all_to_all`` / ``collective_permute`` / ``reduce_scatter`` it inserts is attached to the
program op it serves: an all-reduce or reduce-scatter finishes the op that produced the
partial sums; the others prepare an operand for the op that reads it.

Bytes per device (``S`` = bytes of the collective's result held by one device, ``N`` =
number of devices in one group, the product of the sizes of the collective's axes):

- ``all_gather``: ``S * (N - 1) / N``: each device receives the N-1 pieces it lacks.
- ``all_slice``: ``0``: each device keeps a slice of what it holds.
- ``all_reduce``: ``2 * S * (N - 1) / N``: a ring reduce-scatter then all-gather.
- ``reduce_scatter``: ``S * (N - 1)``: each device sends N-1 of its N pieces of the input.
- ``all_to_all``: ``S * (N - 1) / N``: each device keeps one of N pieces, sends the rest.
- ``collective_permute``: ``S``: each device sends its whole shard to another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from jaxlib.mlir import ir

from shardscope.backend.json_form import JsonForm
from shardscope.backend.program.mlir import detached_copy, run_passes
from shardscope.backend.propagation import sdyread
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.sdy_text import axes_in
from shardscope.backend.sharding.spec import dims_text
from shardscope.backend.sharding.values import axis_size
from shardscope.backend.units import bytes_text

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.program.mlir import ModuleView
    from shardscope.backend.propagation.program_index import ProgramIndex

EXPLICIT_RESHARDS = (
    "builtin.module(func.func(sdy-populate-op-sharding-rules),"
    "func.func(sdy-insert-explicit-reshards{enable-full-version=true}),"
    "func.func(sdy-reshard-to-collectives))"
)
KINDS = {
    "sdy.all_gather": ("all_gather", "gathering_axes"),
    "sdy.all_slice": ("all_slice", "slicing_axes"),
    "sdy.all_reduce": ("all_reduce", "reduction_axes"),
    "sdy.reduce_scatter": ("reduce_scatter", "reduce_scatter_axes"),
    "sdy.all_to_all": ("all_to_all", "params"),
    "sdy.collective_permute": ("collective_permute", ""),
}


@dataclass(frozen=True)
class Collective(JsonForm):
    """One collective Shardy inserts, attached to the program op it serves.

    Its JSON form is a ``collectives[]`` entry of ``propagate --json``.
    """

    op: int | None
    op_name: str
    kind: str
    axes: tuple[str, ...]
    value: int | None
    out_spec: tuple[tuple[str, ...], ...]
    bytes_per_device: int
    group_size: int


def collective_text(c: Collective, graph: ProgramGraph | None = None) -> str:
    """``all_gather over data on x → [data, _]: 1.5 KiB per device``: one predicted
    collective on one line (the tensor named where ``graph`` is given)."""
    axes = "+".join(c.axes) or "no axis"
    on = ""
    if graph is not None and c.value is not None:
        on = f" on {graph.values[c.value].display_name}"
    return (
        f"{c.kind} over {axes}{on} → {dims_text(c.out_spec)}: "
        f"{bytes_text(c.bytes_per_device)} per device"
    )


def bytes_per_device(kind: str, local_bytes: int, group: int) -> int:
    """Bytes one device moves for a collective (formulas in the module docstring)."""
    if group <= 1 or kind == "all_slice":
        return 0
    if kind == "all_gather" or kind == "all_to_all":
        return local_bytes * (group - 1) // group
    if kind == "all_reduce":
        return 2 * local_bytes * (group - 1) // group
    if kind == "reduce_scatter":
        return local_bytes * (group - 1)
    return local_bytes


def _local_bytes(value: ir.Value, dims: tuple[tuple[str, ...], ...], mesh: dict[str, int]) -> int:
    t = ir.RankedTensorType(value.type)
    shape = list(t.shape)
    width = max(1, _elem_bits(t.element_type) // 8)
    for d, axes in enumerate(dims):
        if d < len(shape):
            n = math.prod(axis_size(a, mesh) for a in axes)
            shape[d] = -(-shape[d] // n)
    return int(np.prod(shape, dtype=np.int64)) * width


def _elem_bits(t: ir.Type) -> int:
    for cls in (ir.IntegerType, ir.FloatType):
        try:
            return cls(t).width
        except (ValueError, AttributeError):
            continue
    return 32


def predict_collectives(
    module: ir.Module | ModuleView, index: ProgramIndex, graph: ProgramGraph, mesh: Mesh
) -> list[Collective]:
    """Run Shardy's explicit-reshard passes on a copy of ``module``; list its collectives.

    ``module`` is the propagated module (end of the propagation pipeline); it is not
    changed.
    """
    view = detached_copy(module)
    run_passes(view, EXPLICIT_RESHARDS)
    shape = mesh.shape
    out = []
    for op in sdyread.walk(view.operation):
        spec = KINDS.get(op.name)
        if spec is None:
            continue
        kind, attr_name = spec
        attrs = op.attributes
        out_sh = sdyread.read_sharding(attrs["out_sharding"])
        axes = axes_in(str(attrs[attr_name])) if attr_name and attr_name in attrs else ()
        if not axes and kind == "collective_permute":
            axes = tuple(a for d in out_sh.dims for a in d)
        group = math.prod(axis_size(a, shape) for a in axes) if axes else 1
        if kind == "collective_permute":
            group = 2 if axes else 1
        local = _local_bytes(op.results[0], out_sh.dims, shape)
        served, source = _served_op(op, kind)
        op_id = index.graph_op(served)
        out.append(
            Collective(
                op_id,
                graph.ops[op_id].name if op_id is not None else "func.return",
                kind,
                axes,
                index.graph_id(sdyread.value_key(source)) if source is not None else None,
                out_sh.dims,
                bytes_per_device(kind, local, group),
                group,
            )
        )
    return out


def _served_op(op: ir.Operation, kind: str) -> tuple[int | None, ir.Value | None]:
    """The tag of the program op a collective serves, and the program value it moves."""
    source = op.operands[0]
    while not isinstance(source, ir.BlockArgument) and ir.OpResult(source).owner.name in KINDS:
        source = ir.OpResult(source).owner.operands[0]
    if kind in ("all_reduce", "reduce_scatter") and not isinstance(source, ir.BlockArgument):
        tag = sdyread.tag_of(ir.OpResult(source).owner)
        if tag is not None and tag >= 0:
            return tag, source
    user = _first_tagged_user(op.results[0])
    return user, source


def _first_tagged_user(value: ir.Value) -> int | None:
    for use in value.uses:
        owner = use.owner
        owner = owner.operation if hasattr(owner, "operation") else owner
        tag = sdyread.tag_of(owner)
        if tag is not None and tag >= 0:
            return tag
        if owner.name in KINDS or owner.name == "sdy.reshard":
            found = _first_tagged_user(owner.results[0])
            if found is not None:
                return found
    return None
