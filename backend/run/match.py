"""Predicted against compiled collectives, matched per source op.

Propagation predicts collectives per program op (``propagation.predicted_collectives``) of the
module it ran on, each with the op's location name and source line; the compiled HLO
names, in each collective's metadata, the op it serves (``op_name``: from the top-level
function, where the op's location name inside a loop body, a checkpoint, a nested jit or
a called function is relative to that body; a collective XLA combined from several
writes ``jit(f)/(a/dot_general:b/reduce_sum)``, one name per operand) and its source
line. Each operand of a compiled collective is matched with a predicted one of the same
kind that names the same op (``match``); what stays unmatched on either side is what
the compiler did differently (split, chose another collective, or needed none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from shardscope.backend.hlo.hlo_collectives import operand_names
from shardscope.backend.run.result import CompiledCollective, PredictedRef

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.predicted_collectives import Collective


def operand_sources(op_name: str) -> list[str]:
    """The program op of each operand: ``jit(f)/(a:b)`` -> ``[jit(f)/a, jit(f)/b]``."""
    return operand_names(op_name)


def predicted_refs(collectives: Iterable[Collective], graph: ProgramGraph) -> list[PredictedRef]:
    """Predicted collectives that move data, in HLO's words (all-slices move none)."""
    out = []
    for index, c in enumerate(collectives):
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
                index,
            )
        )
    return out


def _suffix(source: str, name: str) -> bool:
    """Whether op name ``source`` (the compiled HLO's, from the top-level function) ends
    with the location name ``name`` (the program op's, relative to the function body,
    loop body or checkpoint it is in): ``jit(f)/while/body/closed_call/dot_general`` ends
    with ``dot_general``."""
    return bool(name) and (source == name or source.endswith("/" + name))


def _leaf(name: str) -> str:
    """The op's own part of a location name: ``jit(f)/layer/dot_general`` -> ``dot_general``."""
    return name.rsplit("/", 1)[-1]


# How a compiled collective's operand and a predicted collective of the same kind are
# told to be the same op, strongest first: the whole op name and the line; the whole op
# name; the name's end and the line (an op in a loop body, a checkpoint, a nested jit or
# a called function, whose location name is relative to its body); the op's own name and
# the line; the name's end alone.
_TIERS: tuple[Callable[[str, int | None, PredictedRef], bool], ...] = (
    lambda s, line, p: s == p.source and p.line == line,
    lambda s, line, p: s == p.source,
    lambda s, line, p: _suffix(s, p.source) and p.line is not None and p.line == line,
    lambda s, line, p: (
        p.line is not None and p.line == line and bool(s) and _leaf(s) == _leaf(p.source)
    ),
    lambda s, line, p: _suffix(s, p.source),
)
# Ties to a prediction already matched: XLA made copies of one op's collective
# (a rematerialized checkpoint, an unrolled loop).
_COPY_TIERS = _TIERS[:3]


def match(
    compiled: list[CompiledCollective], predicted: list[PredictedRef]
) -> tuple[list[CompiledCollective], list[PredictedRef]]:
    """``compiled`` with ``predicted`` filled in, and the predicted left unmatched.

    Each operand of a compiled collective (a combined all-reduce has one per op it
    serves) is matched with one predicted collective of its kind, tier by tier
    (``_TIERS``) over all of them, so a weak match never takes what a strong one needs;
    an operand no prediction is left for is tied to a matched one of the same op
    (``_COPY_TIERS``)."""
    operands = [
        (i, j, source)
        for i, c in enumerate(compiled)
        for j, source in enumerate(c.sources or (c.source,))
    ]
    found: dict[tuple[int, int], PredictedRef] = {}
    free = list(range(len(predicted)))
    for tier in _TIERS:
        for i, j, source in operands:
            if (i, j) in found:
                continue
            c = compiled[i]
            for k in free:
                p = predicted[k]
                if p.kind == c.kind and tier(source, c.line, p):
                    found[i, j] = p
                    free.remove(k)
                    break
    used = [p for k, p in enumerate(predicted) if k not in free]
    for tier in _COPY_TIERS:
        for i, j, source in operands:
            c = compiled[i]
            if (i, j) not in found:
                p = next((p for p in used if p.kind == c.kind and tier(source, c.line, p)), None)
                if p is not None:
                    found[i, j] = p
    out = []
    for i, c in enumerate(compiled):
        n = len(c.sources or (c.source,))
        out.append(_with_predicted(c, tuple(found[i, j] for j in range(n) if (i, j) in found)))
    return out, [predicted[k] for k in free]


def _with_predicted(c: CompiledCollective, found: tuple[PredictedRef, ...]) -> CompiledCollective:
    return replace(c, predicted=found)
