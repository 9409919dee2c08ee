"""Run Shardy's propagation as the compiler does and turn what it records into a timeline.

Route: the passes of ``sdy-propagation-pipeline`` as jaxlib registers it (read back from
the registry, so it follows the installed jaxlib), run in-process on the annotated module
with the debug options switched on: ``sdy-apply-sharding-constraints`` and
``sdy-user-priority-propagate`` record ``sdy.propagation_edges`` / ``sdy.sharding_origins``.
The pipeline, unlike the bare propagate pass, imports calls as named computations and adds
data-flow edges, so while loops, conditionals, calls and shard_map propagate exactly as in
the compiler. It needs no devices, so any mesh size works, and it costs a fraction of a
compile.

The module is read twice: right after propagation for the steps, and at the end of the
pipeline (after ``sdy-close-shardings``, the point where XLA writes ``after_propagation``)
for the final shardings the compiler hands on. The steps are read from the
``sdy.data_flow_edge`` ops themselves, before they are sunk: sinking keeps only the
non-empty edge lists of a loop or call, so their positions no longer say which result or
argument they belong to, and exporting named computations back into calls drops them.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jaxlib.mlir import ir, passmanager

from shardscope.backend.errors import ProgramError, ShardscopeError, SpecError
from shardscope.backend.program.graph import ProgramGraph, build_graph
from shardscope.backend.program.mlir import new_context
from shardscope.backend.propagation import annotate as ann
from shardscope.backend.propagation import sdyread
from shardscope.backend.propagation.conflicts import read_rules
from shardscope.backend.propagation.readback import (
    ProgramIndex,
    func_args,
    inline_calls,
    read_state,
)
from shardscope.backend.propagation.timeline import Timeline, complete
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec
from shardscope.backend.sharding.values import ValueSharding, merge_full_axes, replicated

ROUTE = "in-process sdy-propagation-pipeline (debug edges and origins on)"
_DEBUG = "debug-propagation-edge-sharding=true debug-sharding-origins=true"
_SINK = "sink-debug-propagation-edge-sharding=true sink-debug-sharding-origins=true"


@functools.lru_cache(maxsize=1)
def pipeline_stages() -> tuple[str, str]:
    """The registered propagation pipeline split into (propagate, export) pass lists.

    ``propagate`` ends with ``sdy-user-priority-propagate`` (with the op sharding rules
    kept), ``export`` runs the rest of the pipeline up to and including
    ``sdy-close-shardings``. Debug options are switched on; the module dumps
    (``sdy-save-module``, not registered on its own) are dropped.
    """
    ctx = new_context()
    text = str(
        passmanager.PassManager.parse("builtin.module(sdy-propagation-pipeline)", context=ctx)
    )
    body = text[len("builtin.module(") : -1]
    passes = _split_top(body)
    passes = [p for p in passes if p != "sdy-save-module"]
    out = []
    for p in passes:
        p = p.replace("debug-propagation-edge-sharding=false debug-sharding-origins=false", _DEBUG)
        p = p.replace(
            "sink-debug-propagation-edge-sharding=false sink-debug-sharding-origins=false", _SINK
        )
        out.append(p)
    cut = next(i for i, p in enumerate(out) if p.startswith("sdy-user-priority-propagate")) + 1
    end = next(i for i, p in enumerate(out) if p.startswith("sdy-close-shardings")) + 1
    propagate = "builtin.module(" + ",".join(out[:cut]) + ")"
    export = "builtin.module(" + ",".join(out[cut:end]) + ")"
    return propagate, export


def _split_top(text: str) -> list[str]:
    """Split a pass list on commas outside braces and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{(":
            depth += 1
        elif ch in "})":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def run_passes(module: ir.Module, pipeline: str) -> None:
    """Run a textual pass pipeline on ``module``; a compiler error becomes a ShardscopeError.

    The verifier is off: Shardy's own verifier rejects the debug attributes it writes on
    ``sdy.data_flow_edge`` ops.
    """
    pm = passmanager.PassManager.parse(pipeline, context=module.context)
    pm.enable_verifier(False)
    try:
        pm.run(module.operation)
    except ir.MLIRError as exc:
        first = str(exc).strip().splitlines()
        detail = " ".join(line.strip() for line in first[:3])
        raise ShardscopeError(f"Shardy rejected the annotated program: {detail}") from None


@dataclass
class ValueInfo:
    """One program value with its final sharding after propagation."""

    id: int
    name: str | None
    display_name: str
    role: str
    shape: tuple[int, ...] | None
    dtype: str
    spec: list[list[str]]
    hlo_sharding: str
    closed: tuple[bool, ...] = ()

    def to_json(self) -> dict:
        """The ``values[]`` entry of ``propagate --json``."""
        return {
            "id": self.id,
            "name": self.name,
            "display_name": self.display_name,
            "role": self.role,
            "shape": list(self.shape) if self.shape is not None else None,
            "dtype": self.dtype,
            "spec": self.spec,
            "hlo_sharding": self.hlo_sharding,
        }


@dataclass
class PropagationResult:
    """Everything one propagation run found, keyed by the program graph's ids."""

    program: str
    mesh: Mesh
    graph: ProgramGraph
    annotations: list[ann.Annotation]
    values: list[ValueInfo]
    timeline: Timeline
    module: Any
    route: str = ROUTE
    conflicts: list = field(default_factory=list)
    collectives: list = field(default_factory=list)
    gspmd_differences: list | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def module_text(self) -> str:
        """The module at the end of the propagation pipeline (``after_propagation``)."""
        return str(self.module)

    def value(self, ref: int | str) -> ValueInfo:
        """A value by graph id or user-visible name."""
        for v in self.values:
            if v.id == ref or (v.name is not None and v.name == ref):
                return v
        raise KeyError(ref)

    def to_json(self) -> dict:
        """The object ``propagate --json`` prints."""
        out: dict[str, Any] = {
            "program": self.program,
            "mesh": self.mesh.shape,
            "route": self.route,
            "annotations": [a.to_json() for a in self.annotations],
            "values": [v.to_json() for v in self.values],
            "steps": [s.to_json() for s in self.timeline.steps],
            "conflicts": [c.to_json() for c in self.conflicts],
            "collectives": [c.to_json() for c in self.collectives],
        }
        if self.gspmd_differences is not None:
            out["gspmd_differences"] = [d.to_json() for d in self.gspmd_differences]
        out["warnings"] = list(self.warnings)
        return out


def _as_mesh(mesh: Mesh | Mapping[str, int] | None) -> Mesh | None:
    if mesh is None or isinstance(mesh, Mesh):
        return mesh
    return Mesh.from_dict(dict(mesh))


def _program_text(program: Any) -> tuple[str, str]:
    if isinstance(program, str):
        return "module", program
    return getattr(program, "name", "program"), program.mlir_text


@dataclass
class Prepared:
    """An annotated module ready for Shardy: tags set, user specs applied, calls inlined."""

    name: str
    module: ir.Module
    graph: ProgramGraph
    index: ProgramIndex
    mesh: Mesh
    annotations: list[ann.Annotation]


def prepare(
    program: Any,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, Any] | None = None,
    *,
    strict: bool | None = None,
) -> Prepared:
    """Parse ``program``, tag its ops, apply ``mesh`` and ``specs`` and inline its calls.

    Arguments as for ``propagate``; the returned module is what Shardy's pipeline runs on.
    """
    name, text = _program_text(program)
    user_specs = specs is not None
    if mesh is None:
        mesh = getattr(program, "mesh", None)
    if specs is None:
        specs = getattr(program, "specs", None) or {}
    strict = user_specs if strict is None else strict
    ctx = new_context()
    sdyread.clear_cache()
    try:
        module = ir.Module.parse(text, context=ctx)
    except ir.MLIRError as exc:
        raise ProgramError(
            f"cannot parse the program's StableHLO: {str(exc).splitlines()[0]}"
        ) from None
    graph = program.__dict__.get("graph") if not isinstance(program, str) else None
    if graph is None:
        graph = build_graph(module)
        if not isinstance(program, str):
            # Each edit re-propagates the same program: its graph (built from the same
            # text, so with the same ids) is built once.
            program.__dict__["graph"] = graph
    mesh = _as_mesh(mesh) or _as_mesh(graph.meshes.get(ann.MESH_NAME))
    if mesh is None:
        raise SpecError("the program has no mesh: give one with --mesh, e.g. --mesh data=4,model=2")
    index = ProgramIndex(module, graph)
    annotations = _annotate(module, graph, index, mesh, specs, strict)
    inline_calls(module, index)
    index.alias_calls()
    return Prepared(name, module, graph, index, mesh, annotations)


def final_state(prep: Prepared) -> dict[int, ValueSharding]:
    """Shardings (by graph id) in ``prep.module`` as it stands (after whatever passes ran)."""
    return read_state(prep.module, prep.index, prep.graph, debug=False)[0]


def propagate(
    program: Any,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, Any] | None = None,
    *,
    strict: bool | None = None,
    conflicts: bool = True,
    collectives: bool = True,
) -> PropagationResult:
    """Annotate ``program`` with ``mesh`` and ``specs``, run Shardy, and explain the result.

    ``program`` is a ``shardscope.backend.program.load.Program`` (or StableHLO text). Without ``mesh`` /
    ``specs`` the program's own ``MESH`` / ``SPECS`` apply. ``specs`` maps an argument name
    (``x``, ``params['w1']``), ``result[i]``, or an intermediate's graph value id or display
    name to a ``Spec``, JAX PartitionSpec, CLI text or JSON entries. ``strict`` (default:
    on for user specs, off for the program's) wants one spec entry per dimension.
    Raises ``SpecError`` / ``MeshError`` for bad input, ``ShardscopeError`` if Shardy fails.
    """
    # Tens of thousands of small acyclic objects are made here; the cyclic collector
    # would walk them many times over for nothing.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _propagate(
            program, mesh, specs, strict=strict, conflicts=conflicts, collectives=collectives
        )
    finally:
        if gc_was_enabled:
            gc.enable()


def _propagate(
    program: Any,
    mesh: Mesh | Mapping[str, int] | None,
    specs: Mapping[str | int, Any] | None,
    *,
    strict: bool | None,
    conflicts: bool,
    collectives: bool,
) -> PropagationResult:
    prep = prepare(program, mesh, specs, strict=strict)
    module, graph, index, mesh, annotations = (
        prep.module,
        prep.graph,
        prep.index,
        prep.mesh,
        prep.annotations,
    )
    initial = read_state(module, index, graph, debug=False, scope="annotations")[0]

    propagate_passes, export = pipeline_stages()
    run_passes(module, propagate_passes)
    scan = sdyread.Scan(module.operation)
    after, origins, steps, origin_names = read_state(module, index, graph, debug=True, scan=scan)
    rules = read_rules(module, index, scan) if conflicts else []
    del scan
    run_passes(module, export)
    # The export passes after propagation change function boundaries (non-divisible
    # input/output shardings are cut, dims closed) but no op's sharding.
    final = dict(after)
    final.update(read_state(module, index, graph, debug=False, scope="io")[0])

    _name_constraints(annotations, origin_names)
    describe_origin = _origin_describer(annotations)
    timeline = Timeline(
        steps,
        {v: s for v, s in initial.items() if v in after},
        after,
        {v: {ax: describe_origin(o, v) for ax, o in d.items()} for v, d in origins.items()},
        mesh.shape,
    )
    main_results = graph.functions[graph.main].results

    def describe(v: int) -> tuple[str, int | None]:
        if v in main_results:
            return "func.return", v
        return "(not recorded by Shardy)", None

    timeline = complete(timeline, describe)
    values = _value_infos(graph, final, mesh)
    result = PropagationResult(prep.name, mesh, graph, annotations, values, timeline, module)
    if conflicts:
        from shardscope.backend.propagation.conflicts import find_conflicts

        result.conflicts = find_conflicts(rules, index, graph, timeline, mesh, annotations)
    if collectives:
        from shardscope.backend.propagation.collectives import predict_collectives

        result.collectives = predict_collectives(module, index, graph, mesh)
        for c in result.conflicts:
            c.collectives = [x for x in result.collectives if x.op == c.op]
    return result


def _annotate(
    module: ir.Module,
    graph: ProgramGraph,
    index: ProgramIndex,
    mesh: Mesh,
    specs: Mapping[str | int, Any],
    strict: bool,
) -> list[ann.Annotation]:
    """Write the mesh and the user's specs onto ``module``; list user and code annotations.

    Shardings the program carries in GSPMD's form (``mhlo.sharding`` on arguments and
    results, ``custom_call @Sharding`` for ``with_sharding_constraint``) are written in
    Shardy's form first, as XLA's import does before Shardy runs; the user's specs then
    override them.
    """
    ann.set_mesh(module, mesh.shape)
    funcs = {sdyread.func_name(f): f for f in sdyread.func_ops(module)}
    main = funcs[graph.main]
    main_fn = graph.functions[graph.main]
    out: list[ann.Annotation] = []
    tagged: dict[int, ir.Operation] = {}

    def constrain_value(value, spec: Spec, label: str) -> None:
        nonlocal tagged
        key = next(
            (k for k, vid in index.key_to_id.items() if vid == value.id and k[0] != "fres"), None
        )
        if not tagged:
            tagged = {
                t: op
                for op in sdyread.walk(module.operation)
                if (t := sdyread.tag_of(op)) is not None
            }
        ir_value = _ir_value(key, tagged, funcs, index)
        if ir_value is None:
            raise SpecError(f"cannot constrain {label}: it is not a value of the program's body")
        tag = index.next_tag
        index.next_tag += 1
        ann.constrain(ir_value, spec, tag)
        ckey = ("res", tag, 0)
        index.key_to_id[ckey] = value.id
        if index.canonical.get(value.id, ("",))[0] != "fres":
            index.canonical[value.id] = ckey

    gspmd = ann.gspmd_shardings(module, main, graph, mesh)
    for kind, i, vid, spec in gspmd:
        if kind == "arg":
            ann.annotate_arg(main, i, spec)
        elif kind == "result":
            ann.annotate_result(main, i, spec)
        else:
            value = graph.values[vid]
            constrain_value(value, spec, value.display_name)
    for target, raw in specs.items():
        spec = ann.as_spec(raw)
        label = str(target)
        if isinstance(target, str) and target.startswith("result[") and target.endswith("]"):
            try:
                i = int(target[7:-1])
            except ValueError:
                i = -1
            if not 0 <= i < len(main_fn.results):
                raise SpecError(_unknown(target, graph))
            value = graph.values[main_fn.results[i]]
            spec = ann.check_annotation(label, spec, value.shape or (), mesh, strict=strict)
            ann.annotate_result(main, i, spec)
            out.append(ann.Annotation(label, spec, "user", value.id, f"output: {i}"))
            continue
        value = _find_value(graph, target)
        if value is None:
            raise SpecError(_unknown(target, graph))
        spec = ann.check_annotation(
            value.name or value.display_name, spec, value.shape or (), mesh, strict=strict
        )
        if (
            value.function == graph.main
            and value.arg_index is not None
            and value.producer is None
            and value.id in func_args(graph, graph.main)
        ):
            ann.annotate_arg(main, value.arg_index, spec)
            out.append(
                ann.Annotation(
                    value.name or label, spec, "user", value.id, f"input: {value.arg_index}"
                )
            )
            continue
        constrain_value(value, spec, label)
        out.append(ann.Annotation(value.display_name or label, spec, "user", value.id, ""))
    imported = {vid: spec for kind, _, vid, spec in gspmd if kind == "arg"}
    for a in _code_annotations(graph):
        spec = imported.get(a.value) if a.origin.startswith("input: ") else None
        out.append(ann.Annotation(a.target, spec or a.spec, a.source, a.value, a.origin))
    for kind, i, vid, spec in gspmd:
        if kind == "op":
            label = graph.values[vid].display_name
            out.append(ann.Annotation(label, spec, "code", vid, f"op:{i}"))
    return out


def _code_annotations(graph: ProgramGraph) -> list[ann.Annotation]:
    out = []
    for i, vid in enumerate(func_args(graph, graph.main)):
        v = graph.values[vid]
        if v.code_sharding:
            out.append(
                ann.Annotation(
                    v.name or v.display_name,
                    Spec(),
                    "code",
                    vid,
                    f"input: {i}",
                )
            )
    for op in graph.ops:
        if (
            op.name in ("sdy.sharding_constraint", "sdy.manual_computation")
            and op.code_sharding is not None
        ):
            vid = op.results[0] if op.results else None
            label = graph.values[vid].display_name if vid is not None else op.name
            out.append(ann.Annotation(label, Spec(), "code", vid, f"op:{op.id}"))
    return out


def _name_constraints(annotations: list[ann.Annotation], names: dict[int, str]) -> None:
    for i, a in enumerate(annotations):
        if not a.origin and a.value is not None:
            annotations[i] = ann.Annotation(
                a.target, a.spec, a.source, a.value, names.get(a.value, "")
            )
        elif a.origin.startswith("op:"):
            vid = a.value
            annotations[i] = ann.Annotation(
                a.target,
                a.spec,
                a.source,
                a.value,
                names.get(vid, a.origin) if vid is not None else a.origin,
            )


def _origin_describer(annotations: list[ann.Annotation]):
    """``describe(origin, value)``: ``input: 0`` -> ``input: 0 (x, user)``, which annotation
    an origin string means.

    ``self`` (the value's own annotation) is replaced by that annotation's origin. Thousands
    of values are described per run, so the annotations are indexed once (the first match
    wins, as in a scan of the list).
    """
    own: dict[int, str] = {}
    by_origin: dict[str, str] = {}
    for a in annotations:
        if a.origin and a.value is not None:
            own.setdefault(a.value, a.origin)
        by_origin.setdefault(a.origin, f"{a.origin} ({a.target}, {a.source})")

    def describe(origin: str, value: int) -> str:
        if origin == "self":
            if value not in own:
                return origin
            origin = own[value]
        return by_origin.get(origin, origin)

    return describe


def _unknown(target: Any, graph: ProgramGraph) -> str:
    names = [graph.values[v].name for v in func_args(graph, graph.main)]
    names += [f"result[{i}]" for i in range(len(graph.functions[graph.main].results))]
    return f"unknown value {target!r} in spec; valid names: {', '.join(str(n) for n in names)} (or an intermediate's value id)"


def _find_value(graph: ProgramGraph, target: Any):
    if isinstance(target, int) or (isinstance(target, str) and target.isdigit()):
        i = int(target)
        return graph.values[i] if 0 <= i < len(graph.values) else None
    v = graph.value_by_name(str(target))
    if v is not None:
        return v
    for v in graph.values:
        if v.display_name == target:
            return v
    return None


def _ir_value(key: tuple | None, tagged: dict, funcs: dict, index: ProgramIndex) -> ir.Value | None:
    if key is None:
        return None
    if key[0] == "res":
        return tagged[key[1]].results[key[2]]
    if key[0] == "arg":
        if key[1] < 0:
            name = next(n for n, t in index.func_tag.items() if t == key[1])
            return funcs[name].regions[0].blocks[0].arguments[key[3]]
        return tagged[key[1]].regions[key[2]].blocks[0].arguments[key[3]]
    return None


def _value_infos(
    graph: ProgramGraph, final: dict[int, ValueSharding], mesh: Mesh
) -> list[ValueInfo]:
    from shardscope.backend.sharding.hlo_text import hlo_sharding_text

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
            hit = cache[key] = (dims, _hlo_text(mesh, dims, v.rank, hlo_sharding_text))
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


def _hlo_text(mesh: Mesh, dims: tuple, rank: int, fmt) -> str:
    if any(":(" in a for d in dims for a in d):
        return ""
    try:
        return fmt(mesh, Spec.of(*[tuple(d) for d in dims]), rank)
    except ShardscopeError:
        return ""
