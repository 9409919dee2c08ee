"""What one propagation run found: every value's final sharding, and the whole result.

``PropagationResult`` holds the annotations, values, timeline, conflicts and collectives
of a run, keyed by the program graph's ids; its ``to_json`` is what ``propagate --json``
prints. Its ``collectives`` are Shardy's prediction (JSON ``predicted_collectives``);
the compiled program's (JSON ``collectives``) are filled in by ``run.compiled``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.json_form import JsonForm, SupportsToJson, json_field
from shardscope.backend.propagation.pipeline import ROUTE
from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec
from shardscope.backend.sharding.values import ValueSharding, merge_full_axes, replicated

if TYPE_CHECKING:
    from jaxlib.mlir import ir

    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.annotate import Annotation
    from shardscope.backend.propagation.collectives import Collective
    from shardscope.backend.propagation.conflicts import Conflict
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


@dataclass
class PropagationResult:
    """Everything one propagation run found, keyed by the program graph's ids."""

    program: str
    mesh: Mesh
    graph: ProgramGraph
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
    # Set by backend.run.compiled: who compiled the listed collectives, "shardscope" (its
    # own compile) or the framework ("torch_xla": its compile as the script ran it).
    compiled_by: str | None = None
    conflicts: list[Conflict] = field(default_factory=list)
    collectives: list[Collective] = field(default_factory=list)
    # Set by backend.gspmd, a layer above this one: typed only by the JSON form it gives.
    gspmd_differences: list[SupportsToJson] | None = None
    # Set by backend.gspmd too: the collectives of GSPMD's compiled module.
    gspmd_collectives: list[SupportsToJson] | None = None
    warnings: list[str] = field(default_factory=list)
    # Set by backend.run.compiled (a layer above) where the program was compiled: the
    # compiled module's collectives, whether a compiled one matched each of Shardy's
    # predicted ``collectives`` (None for an all-slice, which moves nothing), and XLA's
    # memory analysis.
    compiled_collectives: list[SupportsToJson] | None = None
    predicted_matched: list[bool | None] | None = None
    memory: dict[str, Any] | None = None
    # Set by backend.run.explain: XLA's warnings of the compile, each on its program op.
    xla_warnings: list[SupportsToJson] | None = None
    # Why the compile failed, where it did (one line); None otherwise.
    compile_error: str | None = None
    # Set by backend.cost (a layer above): the compiled collectives and memory priced
    # for one hardware profile.
    pricing: SupportsToJson | None = None
    # Set by backend.cost.traffic: the hosts the mesh is laid over (``sharding.hosts``),
    # and whether each of Shardy's predicted ``collectives`` would cross hosts (None for
    # an all-slice, which moves nothing); None where no hosts were given.
    hosts: int = 1
    predicted_crossing: list[bool | None] | None = None

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

    def _predicted_json(self) -> list[dict]:
        """Shardy's predicted collectives, each with ``matched``: whether a compiled
        collective matched it (null: not compiled, or an all-slice); with hosts,
        ``crosses_hosts``: whether its device groups cross hosts."""
        matched = self.predicted_matched or [None] * len(self.collectives)
        out = [
            {**c.to_json(), "matched": m} for c, m in zip(self.collectives, matched, strict=True)
        ]
        if self.predicted_crossing is not None:
            for entry, crosses in zip(out, self.predicted_crossing, strict=True):
                entry["crosses_hosts"] = crosses
        return out

    def to_json(self) -> dict:
        """The object ``propagate --json`` prints."""
        out: dict[str, Any] = {
            "program": self.program,
            "framework": self.framework,
            "partitioner": self.partitioner,
            "mesh": self.mesh.shape,
            # The device id at each row-major mesh position.
            "device_order": list(self.mesh.device_order),
            # The hosts the devices are laid over, device numbers k*N/H.. on host k.
            "hosts": self.hosts,
            "route": self.route,
            "annotations": [a.to_json() for a in self.annotations],
            "values": [v.to_json() for v in self.values],
            "steps": [s.to_json() for s in self.timeline.steps],
            "conflicts": [c.to_json() for c in self.conflicts],
            # What XLA compiled; null where the program was not compiled.
            "collectives": (
                None
                if self.compiled_collectives is None
                else [c.to_json() for c in self.compiled_collectives]
            ),
            # Who compiled them: "shardscope", or the framework as the script ran it.
            "compiled_by": self.compiled_by,
            "predicted_collectives": self._predicted_json(),
            "memory": self.memory,
            "xla_warnings": (
                None if self.xla_warnings is None else [w.to_json() for w in self.xla_warnings]
            ),
            "cost": None if self.pricing is None else self.pricing.to_json(),
        }
        if self.gspmd_differences is not None:
            out["gspmd_differences"] = [d.to_json() for d in self.gspmd_differences]
        if self.gspmd_collectives is not None:
            out["gspmd_collectives"] = [c.to_json() for c in self.gspmd_collectives]
        out["warnings"] = list(self.warnings)
        return out


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
