"""What one propagation run found: every value's final sharding, and the whole result.

``PropagationResult`` holds the annotations, values, timeline, conflicts and collectives
of a run, keyed by the program graph's ids. Its ``collectives`` are Shardy's prediction
(JSON ``predicted_collectives``); the compiled program's (JSON ``collectives``) are the
compile's own record (``run.compiled.Compiled``). It is frozen: a later step returns a
record of its own instead of writing into it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.json_form import JsonForm, json_field
from shardscope.backend.propagation.pipeline import ROUTE
from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec
from shardscope.backend.sharding.values import ValueSharding, merge_full_axes, replicated

if TYPE_CHECKING:
    from jaxlib.mlir import ir

    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.annotate import Annotation
    from shardscope.backend.propagation.conflicts import Conflict
    from shardscope.backend.propagation.predicted_collectives import Collective
    from shardscope.backend.propagation.timeline import Timeline


@dataclass
class ValueInfo(JsonForm):
    """One program value with its final sharding after propagation.

    Its JSON form is a ``values[]`` entry of ``propagate --json``, without ``closed``.
    """

    id: int
    name: str | None
    display_name: str
    role: str
    shape: tuple[int, ...] | None
    dtype: str
    spec: list[list[str]]
    hlo_sharding: str
    closed: tuple[bool, ...] = json_field(omit=True, default=())


@dataclass(frozen=True)
class PropagationResult:
    """What one propagation run found, keyed by the program graph's ids: the values'
    final shardings, the steps, the conflicts and Shardy's predicted collectives.

    Later steps (the compile, the host layout, the pricing, the GSPMD comparison) return
    records of their own; ``backend.analysis.Analysis`` holds them side by side.
    """

    program: str
    mesh: Mesh
    graph: ProgramGraph | None
    annotations: list[Annotation]
    values: list[ValueInfo]
    timeline: Timeline
    # None where Shardy ran in a forked child (``propagate`` always does): a module cannot
    # be sent back from it.
    module: ir.Module | None
    route: str = ROUTE
    # The framework that built the program ("jax", "torch_xla") and the partitioner that
    # framework compiles it with ("shardy", "gspmd"): ``Program.framework/partitioner``.
    framework: str = "jax"
    partitioner: str = "shardy"
    # How the script sharded each argument it sharded, by name: ``Program.sharded_by``.
    sharded_by: Mapping[str, str] = field(default_factory=dict)
    conflicts: tuple[Conflict, ...] = ()
    # Shardy's prediction (``predicted_collectives`` in ``propagate --json``).
    collectives: tuple[Collective, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def module_text(self) -> str | None:
        """The module at the end of the propagation pipeline (``after_propagation``), if
        this result holds it."""
        return None if self.module is None else str(self.module)

    def value(self, ref: int | str) -> ValueInfo:
        """A value by graph id or user-visible name."""
        for v in self.values:
            if v.id == ref or (v.name is not None and v.name == ref):
                return v
        raise KeyError(ref)

    def with_graph(self, graph: ProgramGraph | None) -> PropagationResult:
        """This result holding ``graph`` (a forked child's result comes without it)."""
        return replace(self, graph=graph)

    def without_module(self) -> PropagationResult:
        """This result without its module, which cannot leave the process it lives in."""
        return replace(self, module=None, graph=None)

    def warned(self, *warnings: str) -> PropagationResult:
        """This result with ``warnings`` added after its own."""
        return replace(self, warnings=(*self.warnings, *warnings))

    def io_values(self) -> list[ValueInfo]:
        """The entry function's arguments in order, then its results as ``result[i]``: a
        result that returns an argument (or a value already returned) as it is, the same
        graph value, is listed again under its result's name. Empty without the graph."""
        graph = self.graph
        if graph is None:
            return []
        main = graph.functions[graph.main]
        out = [self.values[vid] for vid in main.arguments]
        for index, vid in enumerate(main.results):
            value = self.values[vid]
            name = f"result[{index}]"
            if value.name != name:
                value = replace(value, name=name, display_name=name, role="result")
            out.append(value)
        return out

    def to_json(self) -> dict:
        """Propagation's own fields of ``propagate --json`` (``backend.analysis`` adds
        the later steps' fields). ``values`` has one entry per graph value, by id, and
        after them one for each result that returns an argument or a value already
        returned (``io_values``), with that value's id."""
        listed = {id(v) for v in self.values}
        again = [v for v in self.io_values() if id(v) not in listed]
        return {
            "program": self.program,
            "framework": self.framework,
            "partitioner": self.partitioner,
            "mesh": self.mesh.shape,
            # The device id at each row-major mesh position.
            "device_order": list(self.mesh.device_order),
            "route": self.route,
            "annotations": [a.to_json() for a in self.annotations],
            "values": [v.to_json() for v in [*self.values, *again]],
            "steps": [s.to_json() for s in self.timeline.steps],
            "conflicts": [c.to_json() for c in self.conflicts],
        }


def value_infos(
    graph: ProgramGraph, final: dict[int, ValueSharding], mesh: Mesh
) -> list[ValueInfo]:
    """A ``ValueInfo`` per graph value from its final sharding (replicated if it has none),
    sub-axes that span a whole mesh axis merged into it."""
    out = []
    shape = mesh.shape
    # Few distinct shardings among thousands of values: each is merged and printed once.
    cache: dict[tuple, tuple[tuple, str]] = {}
    for v in graph.values:
        s = final.get(v.id) or replicated(v.rank)
        key = (s.dims, v.rank)
        hit = cache.get(key)
        if hit is None:
            dims = tuple(merge_full_axes(d, shape) for d in s.dims)
            hit = cache[key] = (dims, _hlo_text(mesh, dims, v.rank))
        dims, hlo = hit
        out.append(
            ValueInfo(
                v.id,
                v.name,
                v.display_name,
                v.role,
                v.shape,
                v.dtype,
                [list(d) for d in dims],
                hlo,
                s.closed,
            )
        )
    return out


def final_dims(
    graph: ProgramGraph, final: dict[int, ValueSharding], mesh: Mesh
) -> dict[int, tuple[tuple[str, ...], ...]]:
    """The axes per dimension ``value_infos`` would list, for the values that have any
    (the others are replicated): what a view needs to draw final shardings before the
    rest of a result is ready."""
    shape = mesh.shape
    cache: dict[tuple, tuple] = {}
    out = {}
    for vid, s in final.items():
        if not any(s.dims):
            continue
        dims = cache.get(s.dims)
        if dims is None:
            dims = cache[s.dims] = tuple(tuple(merge_full_axes(d, shape)) for d in s.dims)
        out[vid] = dims
    return out


def _hlo_text(mesh: Mesh, dims: tuple, rank: int) -> str:
    """HloSharding text of ``dims``; empty where HLO text cannot say it (sub-axes)."""
    if any(":(" in a for d in dims for a in d):
        return ""
    try:
        return hlo_sharding_text(mesh, Spec.of(*[tuple(d) for d in dims]), rank)
    except ShardscopeError:
        return ""
