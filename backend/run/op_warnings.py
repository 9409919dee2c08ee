"""XLA's warnings of a compile, each on the program op it is about.

``op_warnings`` turns XLA's warnings (``report["xla_warnings"]``) into ``OpWarning``
entries on their program op; a full rematerialization gets the bytes one device receives
to hold the whole tensor (``remat_bytes``, from the warning's shape and sharding text).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from shardscope.backend.hlo.hlo_collectives import element_bytes
from shardscope.backend.run.op_index import OpIndex
from shardscope.backend.run.result import OpWarning

if TYPE_CHECKING:
    from shardscope.backend.propagation.result import PropagationResult

_REMAT = "Involuntary full rematerialization"
_FROM_SHARDING = re.compile(r"go from sharding \{(?P<sharding>[^}]*)\}")
_OPERATION = re.compile(r"HLO operation %[\w.\-]+ = (?P<type>[a-z][a-z0-9]*)\[(?P<dims>[0-9,]*)\]")
_TILES = re.compile(r"devices=\[(?P<tiles>[0-9,]+)\]")


def op_warnings(result: PropagationResult, warnings: list[dict], report: dict) -> list[OpWarning]:
    """XLA's warnings, each on its program op (an argument's warning goes to the op the
    compiled collective that reads it serves, else the argument's first user)."""
    graph = result.graph
    ops = OpIndex(graph)
    readers = _readers(report.get("collectives", []))
    out = []
    for w in warnings:
        op_name = w.get("op_name", "")
        op = ops.find(op_name) if op_name else None
        line = None
        if op is None:
            reader = readers.get(w.get("instruction", ""))
            if reader is not None:
                tensor = (reader.get("tensors") or [{}])[0]
                op = ops.find(tensor.get("op_name", ""), tensor.get("line"))
                line = tensor.get("line")
        if op is None and op_name:
            value = graph.value_by_name(op_name)
            if value is not None and value.users:
                op = value.users[0]
        if line is None and op is not None:
            line = graph.ops[op].source_line
        message = w.get("message", "")
        out.append(OpWarning(message, op, op_name, line, remat_bytes(message)))
    return out


def _readers(records: list[dict]) -> dict[str, dict]:
    """Compiled collectives by the instructions they read (first reader kept)."""
    out: dict[str, dict] = {}
    for r in records:
        for name in r.get("inputs", []):
            out.setdefault(name, r)
    return out


def remat_bytes(message: str) -> int:
    """For XLA's full-rematerialization warning: what one device receives to hold the
    whole tensor. The warning prints the partitioned instruction (one device's piece:
    seen on this machine, a (16, 12) argument over a 2 x 4 mesh printed as ``f32[8,3]``)
    and the sharding it comes from, whose tiles give the number of pieces."""
    if _REMAT not in message:
        return 0
    operation = _OPERATION.search(message)
    source = _FROM_SHARDING.search(message)
    if operation is None or source is None:
        return 0
    shape = [int(d) for d in operation["dims"].split(",") if d]
    tiles_m = _TILES.search(source["sharding"])
    tiles = [int(t) for t in tiles_m["tiles"].split(",")] if tiles_m else []
    pieces = math.prod(tiles[: len(shape)]) if tiles else 1
    local = math.prod(shape) * element_bytes(operation["type"])
    return local * (pieces - 1)
