"""GSPMD's compiled collectives, in the form ``propagate --json`` lists Shardy's.

The GSPMD compile worker reports the collectives of its partitioned, optimized module
(``hlo.hlo_collectives`` records); they become ``CompiledCollective`` entries as the Shardy
compile's do (``run.compiled.compiled_collective`` and ``describe``). On the module route
every instruction's ``op_name`` is ``shardscope.op.N`` after its program op
(``rewrite.op_id``): each operand is given that op exactly, shown by its location name,
and the line stays the one the instruction's stack frame names.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

from shardscope.backend.gspmd.rewrite import op_id
from shardscope.backend.hlo.hlo_collectives import operand_names
from shardscope.backend.run.compiled import compiled_collective, describe
from shardscope.backend.run.op_index import OpIndex
from shardscope.backend.run.result import CollectiveTensor, CompiledCollective

if TYPE_CHECKING:
    from shardscope.backend.hlo.hlo_collectives import HloCollective
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.sharding.mesh import Mesh


def gspmd_collectives(
    records: list[HloCollective], graph: ProgramGraph, mesh: Mesh
) -> list[CompiledCollective]:
    """The GSPMD compile's collective ``records`` as ``CompiledCollective`` entries, each
    operand with its program op and line."""
    index = OpIndex(graph)

    def find(op_name: str, line: int | None) -> int | None:
        op = op_id(op_name)
        if op is not None:
            return op if 0 <= op < len(graph.ops) else None
        return index.find(op_name, line)

    described = describe([compiled_collective(c) for c in records], graph, mesh, find)
    return [_named(c, graph) for c in described]


def kind_counts(collectives: list[CompiledCollective]) -> dict[str, int]:
    """Instructions per collective kind (``all-reduce``...), kinds in name order."""
    return dict(sorted(Counter(c.kind for c in collectives).items()))


def _named(c: CompiledCollective, graph: ProgramGraph) -> CompiledCollective:
    if not any(op_id(name) is not None for name in operand_names(c.source)) and not any(
        op_id(t.op_name) is not None for t in c.tensors
    ):
        return c
    tensors = tuple(_tensor(t, graph) for t in c.tensors)
    sources = tuple(_location(name, graph) for name in operand_names(c.source))
    own = op_id(c.source)
    if own is not None:
        source = _location(c.source, graph)
    elif tensors:
        source = tensors[0].op_name
    else:
        source = c.source
    return replace(c, tensors=tensors, sources=sources, source=source)


def _tensor(t: CollectiveTensor, graph: ProgramGraph) -> CollectiveTensor:
    if op_id(t.op_name) is None or t.op is None:
        return t
    op = graph.ops[t.op]
    line = t.line if t.line is not None else op.source_line
    file = t.file or (op.source_file or "")
    return CollectiveTensor(op.location_name or t.op_name, t.op, file, line)


def _location(name: str, graph: ProgramGraph) -> str:
    index = op_id(name)
    if index is None or not 0 <= index < len(graph.ops):
        return name
    return graph.ops[index].location_name or name
