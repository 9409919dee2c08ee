"""Predicted against compiled collectives, matched per source op.

Propagation predicts collectives per program op (``propagation.collectives``); the
compiled HLO names, in each collective's metadata, the op it serves (``op_name``, the
same text as the program op's location name; a collective XLA combined from several
writes ``jit(f)/(a/dot_general:b/reduce_sum)``, one name per operand). A compiled
collective is matched with the unmatched predicted ones of the same kind that serve the
same op; what stays unmatched on either side is what the compiler did differently
(combined, split, chose another collective, or needed none).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from shardscope.backend.program.locations import split_outside
from shardscope.backend.run.result import CompiledCollective, PredictedRef

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.collectives import Collective

_COMBINED = re.compile(r"^(?P<prefix>.*?/)?\((?P<parts>.*)\)$")


def operand_sources(op_name: str) -> list[str]:
    """The program op of each operand: ``jit(f)/(a:b)`` -> ``[jit(f)/a, jit(f)/b]``."""
    m = _COMBINED.match(op_name)
    if not m:
        return [op_name] if op_name else []
    prefix = m["prefix"] or ""
    return [prefix + part for part in split_outside(m["parts"], ":")]


def predicted_refs(collectives: Iterable[Collective], graph: ProgramGraph) -> list[PredictedRef]:
    """Predicted collectives that move data, in HLO's words (all-slices move none)."""
    out = []
    for c in collectives:
        if c.kind == "all_slice":
            continue
        op = graph.ops[c.op] if c.op is not None else None
        out.append(
            PredictedRef(
                c.kind.replace("_", "-"),
                tuple(c.axes),
                c.op,
                (op.location_name or "") if op is not None else "",
                op.source_line if op is not None else None,
                c.bytes_per_device,
            )
        )
    return out


def match(
    compiled: list[CompiledCollective], predicted: list[PredictedRef]
) -> tuple[list[CompiledCollective], list[PredictedRef]]:
    """``compiled`` with ``predicted`` filled in, and the predicted left unmatched."""
    pool: dict[tuple[str, str], list[PredictedRef]] = {}
    for p in predicted:
        pool.setdefault((p.kind, p.source), []).append(p)
    out = []
    for c in compiled:
        found = []
        for source in c.sources or (c.source,):
            cands = pool.get((c.kind, source))
            if cands:
                found.append(cands.pop(0))
        out.append(_with_predicted(c, tuple(found)))
    left = [p for cands in pool.values() for p in cands]
    order = {id(p): i for i, p in enumerate(predicted)}
    left.sort(key=lambda p: order[id(p)])
    return out, left


def _with_predicted(c: CompiledCollective, found: tuple[PredictedRef, ...]) -> CompiledCollective:
    return replace(c, predicted=found)
