"""Provenance: the chain of steps that brought each axis of a tensor dimension, and why a
dimension that holds no axis is replicated.

An axis reached a value at one step, across one op, from that step's source value; that
value got it at an earlier step, and so on back to a value that held the axis before
propagation started: the annotation it came from (the user's spec, the code's own
sharding, or one the program's structure gave). ``Provenance`` walks that chain on a
``Timeline``; a replicated dimension is explained by the conflict that settled it so, by
a spec that keeps it replicated, or by the lack of any annotation reaching it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shardscope.backend.json_form import JsonForm
from shardscope.backend.sharding.spec import axes_text

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.annotate import Annotation
    from shardscope.backend.propagation.conflicts import Conflict
    from shardscope.backend.propagation.timeline import Step, Timeline

# Longest chain followed: a chain never revisits a value, this only bounds the walk.
MAX_LINKS = 10_000


@dataclass(frozen=True)
class Link(JsonForm):
    """One link of a chain: ``value`` got ``axis`` at ``step`` across ``op`` from
    ``source_value`` (``kind="step"``), or held it from the start (``kind="annotation"``),
    or got it where Shardy recorded no step (``kind="unrecorded"``)."""

    kind: str
    value: int
    axis: str
    step: int | None = None
    op: int | None = None
    op_name: str = ""
    source_value: int | None = None


@dataclass(frozen=True)
class AxisChain(JsonForm):
    """How ``axis`` reached dim ``dim`` of ``value``: links from the value back to where it
    started. ``origin`` is Shardy's name for the annotation (``input: 0 (x, user)``) and
    ``source`` says whose it is: ``user``, ``code``, ``program`` or ``unknown``."""

    value: int
    dim: int
    axis: str
    links: tuple[Link, ...]
    origin: str
    source: str


@dataclass(frozen=True)
class DimProvenance(JsonForm):
    """The chains of each axis of one dimension, or (no axes) why it is replicated."""

    value: int
    dim: int
    axes: tuple[str, ...]
    chains: tuple[AxisChain, ...]
    replicated_because: str | None = None
    conflicts: tuple[int, ...] = field(default=())  # indices into the result's conflicts


class Provenance:
    """Answers provenance questions on one timeline (built once, queried per dimension)."""

    def __init__(
        self,
        timeline: Timeline,
        *,
        annotations: Sequence[Annotation] = (),
        conflicts: Sequence[Conflict] = (),
        graph: ProgramGraph | None = None,
    ) -> None:
        self.timeline = timeline
        self.annotations = list(annotations)
        self.conflicts = list(conflicts)
        self.graph = graph
        self._rows: dict[tuple[int, str, int], Step] = {}
        for step in timeline.steps:
            for v in step.values:
                self._rows.setdefault((step.index, step.axis, v), step)

    # -- chains ---------------------------------------------------------------------------
    def arrival(self, value: int, axis: str) -> Step | None:
        """The step at which ``axis`` reached ``value`` (None if it held it from the start
        or never got it)."""
        for index, a in self.timeline.changes(value):
            if a == axis:
                return self._rows.get((index, axis, value))
        return None

    def held_from_start(self, value: int, axis: str) -> bool:
        start = self.timeline.initial.get(value)
        return start is not None and axis in start.axes

    def chain(self, value: int, axis: str, dim: int = 0) -> AxisChain:
        """The chain that brought ``axis`` to ``value``, newest link first."""
        links: list[Link] = []
        seen: set[int] = set()
        current = value
        before: int | None = None
        while current not in seen and len(links) < MAX_LINKS:
            seen.add(current)
            if self.held_from_start(current, axis):
                links.append(Link("annotation", current, axis))
                break
            step = self.arrival(current, axis)
            if step is None or (before is not None and step.index > before):
                break
            kind = "step" if step.recorded else "unrecorded"
            links.append(
                Link(kind, current, axis, step.index, step.op, step.op_name, step.source_value)
            )
            if step.source_value is None or not step.recorded:
                break
            before = step.index
            current = step.source_value
        origin = self._origin_label(links, value, axis)
        return AxisChain(value, dim, axis, tuple(links), origin, self._source_of(origin))

    def _origin_label(self, links: list[Link], value: int, axis: str) -> str:
        origins = self.timeline.origins
        for v in [link.value for link in reversed(links)] + [value]:
            label = origins.get(v, {}).get(axis)
            if label:
                return label
        if links and links[-1].kind == "annotation":
            ann = self._annotation_on(links[-1].value)
            if ann is not None:
                return f"{ann.origin} ({ann.target}, {ann.source})" if ann.origin else ann.target
        return ""

    def _annotation_on(self, value: int) -> Annotation | None:
        for ann in self.annotations:
            if ann.value == value:
                return ann
        return None

    def _source_of(self, origin: str) -> str:
        if not origin:
            return "unknown"
        name = origin.split(" (", 1)[0]
        for ann in self.annotations:
            if ann.origin and ann.origin == name:
                return ann.source
        if origin.endswith(", user)"):
            return "user"
        if origin.endswith(", code)"):
            return "code"
        return "program"

    # -- one dimension ----------------------------------------------------------------------
    def dim(self, value: int, dim: int) -> DimProvenance:
        """Chains of every axis on dim ``dim`` of ``value``'s final sharding, or why it has
        none."""
        final = self.timeline.final.get(value)
        axes = tuple(final.dims[dim]) if final is not None and dim < len(final.dims) else ()
        if axes:
            chains = tuple(self.chain(value, a, dim) for a in axes)
            return DimProvenance(value, dim, axes, chains)
        why, hits = self.why_replicated(value, dim)
        return DimProvenance(value, dim, (), (), why, hits)

    def why_replicated(self, value: int, dim: int) -> tuple[str, tuple[int, ...]]:
        """Why dim ``dim`` of ``value`` holds no axis, and the conflicts that decided it."""
        hits = tuple(
            i for i, c in enumerate(self.conflicts) if self._conflict_touches(c, value, dim)
        )
        if hits:
            parts = []
            for i in hits:
                c = self.conflicts[i]
                offers = "; ".join(
                    f"{p.tensor} offered {axes_text(p.axes)} ({p.origin or 'no origin'})"
                    for p in c.proposals
                )
                kept = "+".join(c.kept) or "nothing"
                parts.append(
                    f"a conflict at {c.op_name} (op {c.op}) on factor {c.factor}: {offers}; "
                    f"kept {kept} by {c.rule}"
                )
            return "replicated by " + " and ".join(parts), hits
        ann = self._annotation_on(value)
        if ann is not None and dim < len(ann.spec.dims) and not ann.spec.dims[dim].is_open:
            whose = "your spec" if ann.source == "user" else f"the {ann.source}'s annotation"
            return f"{whose} on {ann.target} keeps dimension {dim} replicated", ()
        if self.graph is not None and self.graph.values[value].rank == 0:
            return "a scalar has no dimension to shard", ()
        final = self.timeline.final.get(value)
        if final is not None and final.axes:
            held = ", ".join(sorted(final.axes))
            return (
                f"no annotation reached dimension {dim}: the axes that reached this tensor "
                f"({held}) went to other dimensions",
                (),
            )
        return (
            f"no annotation reached dimension {dim}: no sharded tensor flows into it; shard "
            f"this tensor or one it is computed from",
            (),
        )

    def _conflict_touches(self, conflict: Conflict, value: int, dim: int) -> bool:
        for tensor, dims in conflict.dims.items():
            if dim in dims and self._tensor_value(conflict, tensor) == value:
                return True
        return False

    def _tensor_value(self, conflict: Conflict, tensor: str) -> int | None:
        for p in conflict.proposals:
            if p.tensor == tensor and p.value is not None:
                return p.value
        for r in conflict.reshards:
            if r.tensor == tensor and r.value is not None:
                return r.value
        if self.graph is not None:
            kind, _, number = tensor.partition("-")
            op = self.graph.ops[conflict.op]
            seq = op.results if kind == "result" else op.operands if kind == "operand" else ()
            if number.isdigit() and int(number) < len(seq):
                return seq[int(number)]
        return None
