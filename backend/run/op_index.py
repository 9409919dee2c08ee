"""Program ops found by the names the compiled module gives them.

A compiled HLO instruction's metadata names the program op it came from (``op_name``)
from the top-level function down; the program graph names an op inside a loop body, a
checkpoint, a nested jit or a callee relative to that body. ``OpIndex`` finds the op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph


class OpIndex:
    """Program ops by location name: an HLO op name is the op's name from the top-level
    function; an op in a loop body, checkpoint, nested jit or callee is named relative
    to that body, so the longest ending of the HLO name that names ops finds it, the
    op on the same line first. A constant JAX made for an op (a reduction's initial
    value) shares its name and line; the op itself comes before it."""

    def __init__(self, graph: ProgramGraph) -> None:
        self._graph = graph
        self._by_name: dict[str, list[int]] = {}
        for op in graph.ops:
            if op.location_name:
                self._by_name.setdefault(op.location_name, []).append(op.id)

    def find(self, op_name: str, line: int | None = None) -> int | None:
        parts = op_name.split("/")
        for start in range(len(parts)):
            found = self._by_name.get("/".join(parts[start:]))
            if found:
                ops = self._graph.ops
                return min(
                    found,
                    key=lambda i: (ops[i].source_line != line, ops[i].name == "stablehlo.constant"),
                )
        return None
