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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jaxlib.mlir import ir, passmanager

from backend import annotate as ann
from backend import sdyread
from backend.conflicts import read_rules
from backend.errors import ProgramError, ShardscopeError, SpecError
from backend.graph import ProgramGraph, build_graph
from backend.mesh import Mesh
from backend.mlir_context import new_context
from backend.spec import Spec
from backend.timeline import (
    Step,
    Timeline,
    ValueSharding,
    complete,
    merge_full_axes,
    replicated,
)

ROUTE = "in-process sdy-propagation-pipeline (debug edges and origins on)"
_DEBUG = "debug-propagation-edge-sharding=true debug-sharding-origins=true"
_SINK = "sink-debug-propagation-edge-sharding=true sink-debug-sharding-origins=true"
_DATA_FLOW_OPS = {
    "stablehlo.while",
    "stablehlo.case",
    "stablehlo.optimization_barrier",
    "sdy.named_computation",
    "sdy.manual_computation",
}


@functools.lru_cache(maxsize=1)
def pipeline_stages() -> tuple[str, str]:
    """The registered propagation pipeline split into (propagate, export) pass lists.

    ``propagate`` ends with ``sdy-user-priority-propagate`` (with the op sharding rules
    kept), ``export`` runs the rest of the pipeline up to and including
    ``sdy-close-shardings``. Debug options are switched on; the module dumps
    (``sdy-save-module``, not registered on its own) are dropped.
    """
    ctx = new_context()
    text = str(passmanager.PassManager.parse("builtin.module(sdy-propagation-pipeline)", context=ctx))
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
        return out


class _Index:
    """Tags the module like the graph numbers it and maps tag keys to graph value ids."""

    def __init__(self, module: ir.Module, graph: ProgramGraph) -> None:
        self.graph = graph
        self.func_tag: dict[str, int] = {}
        self.key_to_id: dict[tuple, int] = {}
        funcs = {sdyread.func_name(f): f for f in sdyread.func_ops(module)}
        order = [graph.main] + [n for n in graph.functions if n != graph.main]
        i64 = ir.IntegerType.get_signless(64, context=module.context)
        next_id = 0
        for k, name in enumerate(order):
            func = funcs[name]
            tag = -(k + 1)
            self.func_tag[name] = tag
            func.attributes[sdyread.TAG] = ir.IntegerAttr.get(i64, tag)
            for j, vid in enumerate(func_args(graph, name)):
                self.key_to_id[("arg", tag, 0, j)] = vid
            for op in self._ops(func):
                gop = graph.ops[next_id]
                if gop.name != op.name:
                    raise ProgramError(
                        f"program graph and module disagree at op {next_id}: {gop.name} vs {op.name}"
                    )
                op.attributes[sdyread.TAG] = ir.IntegerAttr.get(i64, next_id)
                for j, vid in enumerate(gop.results):
                    self.key_to_id[("res", next_id, j)] = vid
                for region in gop.regions:
                    for j, vid in enumerate(region.arguments):
                        self.key_to_id[("arg", next_id, region.index, j)] = vid
                next_id += 1
        self.next_tag = next_id
        main_tag = self.func_tag[graph.main]
        self.canonical: dict[int, tuple] = {}
        for key, vid in self.key_to_id.items():
            self.canonical.setdefault(vid, key)
        for j, vid in enumerate(graph.functions[graph.main].results):
            key = ("fres", main_tag, j)
            self.key_to_id[key] = vid
            self.canonical[vid] = key
        self.callee_tag = {
            op.id: self.func_tag[op.callee]
            for op in graph.ops
            if op.callee is not None and op.callee in self.func_tag
        }
        self.aliases: dict[tuple, list[int]] = {}

    def alias_calls(self) -> None:
        """Values that inlining removes read another value's state.

        A call's results become the callee's returned values and the callee's arguments
        become the call's operands; the first call site of a callee stands for all.
        """
        graph = self.graph
        done: set[str] = set()
        for op in graph.ops:
            if op.callee is None or op.callee not in graph.functions:
                continue
            fn = graph.functions[op.callee]
            for j, vid in enumerate(op.results):
                if j < len(fn.results) and self.canonical.get(vid, ("",))[0] == "res":
                    self.aliases.setdefault(self.canonical[fn.results[j]], []).append(vid)
            if op.callee in done:
                continue
            done.add(op.callee)
            for j, vid in enumerate(func_args(graph, op.callee)):
                if j < len(op.operands):
                    self.aliases.setdefault(self.canonical[op.operands[j]], []).append(vid)

    def ids_for(self, key: tuple | None) -> list[int]:
        """Canonical graph id of ``key`` (if it is one) plus the ids that alias it."""
        key = self.resolve(key)
        if key is None:
            return []
        out = []
        vid = self.key_to_id.get(key)
        if vid is not None and self.canonical.get(vid) == key:
            out.append(vid)
        out.extend(self.aliases.get(key, ()))
        return out

    @staticmethod
    def _ops(func: ir.Operation):
        for op in sdyread.walk(func):
            if op.name not in ("func.return", "stablehlo.return", "sdy.return", "mhlo.return"):
                yield op

    def resolve(self, key: tuple | None) -> tuple | None:
        """Map keys of what passes created (named computations) to the program's keys."""
        if key is None:
            return None
        if key[0] == "arg" and key[1] in self.callee_tag and key[2] == 0:
            return ("arg", self.callee_tag[key[1]], 0, key[3])
        return key

    def graph_id(self, key: tuple | None) -> int | None:
        """The graph value id a key stands for, or None."""
        key = self.resolve(key)
        return self.key_to_id.get(key) if key is not None else None

    def canonical_id(self, key: tuple | None) -> int | None:
        """The graph id when ``key`` is the value the timeline tracks for it, else None."""
        key = self.resolve(key)
        vid = self.key_to_id.get(key) if key is not None else None
        if vid is None or self.canonical.get(vid) != key:
            return None
        return vid


def func_args(graph: ProgramGraph, name: str) -> list[int]:
    """Value ids of the arguments of function ``name``, in order."""
    listed = graph.functions[name].arguments
    if listed:
        return list(listed)
    args = [
        v for v in graph.values if v.function == name and v.producer is None and v.arg_index is not None
    ]
    return [v.id for v in sorted(args, key=lambda v: v.arg_index)]


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
    index: _Index
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
    try:
        module = ir.Module.parse(text, context=ctx)
    except ir.MLIRError as exc:
        raise ProgramError(f"cannot parse the program's StableHLO: {str(exc).splitlines()[0]}") from None
    graph = program.__dict__.get("graph") if not isinstance(program, str) else None
    graph = graph or build_graph(module)
    mesh = _as_mesh(mesh) or _as_mesh(graph.meshes.get(ann.MESH_NAME))
    if mesh is None:
        raise SpecError("the program has no mesh: give one with --mesh, e.g. --mesh data=4,model=2")
    index = _Index(module, graph)
    annotations = _annotate(module, graph, index, mesh, specs, strict)
    inline_calls(module)
    index.alias_calls()
    return Prepared(name, module, graph, index, mesh, annotations)


def final_state(prep: Prepared) -> dict[int, ValueSharding]:
    """Shardings (by graph id) in ``prep.module`` as it stands (after whatever passes ran)."""
    return _read_state(prep.module, prep.index, prep.graph, debug=False)[0]


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

    ``program`` is a ``backend.program.Program`` (or StableHLO text). Without ``mesh`` /
    ``specs`` the program's own ``MESH`` / ``SPECS`` apply. ``specs`` maps an argument name
    (``x``, ``params['w1']``), ``result[i]``, or an intermediate's graph value id or display
    name to a ``Spec``, JAX PartitionSpec, CLI text or JSON entries. ``strict`` (default:
    on for user specs, off for the program's) wants one spec entry per dimension.
    Raises ``SpecError`` / ``MeshError`` for bad input, ``ShardscopeError`` if Shardy fails.
    """
    prep = prepare(program, mesh, specs, strict=strict)
    module, graph, index, mesh, annotations = (
        prep.module, prep.graph, prep.index, prep.mesh, prep.annotations
    )
    initial = _read_state(module, index, graph, debug=False, scope="annotations")[0]

    propagate_passes, export = pipeline_stages()
    run_passes(module, propagate_passes)
    after, origins, steps, origin_names = _read_state(module, index, graph, debug=True)
    rules = read_rules(module, index) if conflicts else []
    run_passes(module, export)
    # The export passes after propagation change function boundaries (non-divisible
    # input/output shardings are cut, dims closed) but no op's sharding.
    final = dict(after)
    final.update(_read_state(module, index, graph, debug=False, scope="io")[0])

    _name_constraints(annotations, origin_names)
    timeline = Timeline(
        steps,
        {v: s for v, s in initial.items() if v in after},
        after,
        {
            v: {ax: _describe_origin(o, v, annotations) for ax, o in d.items()}
            for v, d in origins.items()
        },
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
        from backend.conflicts import find_conflicts
        result.conflicts = find_conflicts(rules, index, graph, timeline, mesh, annotations)
    if collectives:
        from backend.collectives import predict_collectives

        result.collectives = predict_collectives(module, index, graph, mesh)
        for c in result.conflicts:
            c.collectives = [x for x in result.collectives if x.op == c.op]
    return result


class ModuleView:
    """A detached copy of a module: what the readers need of ``ir.Module`` (the bindings
    cannot wrap a cloned ``builtin.module`` op back into a Module)."""

    def __init__(self, operation: ir.Operation) -> None:
        self.operation = operation
        self.context = operation.context
        self.body = operation.regions[0].blocks[0]

    def __str__(self) -> str:
        return str(self.operation)


def inline_calls(module: ir.Module) -> int:
    """Inline every ``func.call`` in place, as XLA's CallInliner does before Shardy runs.

    MLIR's own inliner does not inline StableHLO bodies, so each call gets a fresh copy of
    its callee's body (ops keep their ``shardscope.op`` tags). Returns how many calls were
    inlined.
    """
    funcs = {sdyread.func_name(f): f for f in sdyread.func_ops(module)}
    count = 0
    while True:
        calls = [op for op in sdyread.walk(module.operation) if op.name == "func.call"]
        if not calls:
            return count
        for call in calls:
            callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            copy = funcs[callee].clone(ip=ir.InsertionPoint.at_block_begin(module.body))
            block = sdyread.first_block(copy)
            ret = sdyread.terminator(block)
            for op in list(block.operations):
                op = op.operation
                if op == ret:
                    break
                op.move_before(call)
            for arg, operand in zip(block.arguments, call.operands, strict=True):
                arg.replace_all_uses_with(operand)
            for res, value in zip(call.results, ret.operands, strict=True):
                res.replace_all_uses_with(value)
            call.erase()
            copy.erase()
            count += 1


def _clone(module: ir.Module | ModuleView) -> ModuleView:
    return ModuleView(module.operation.clone())


def _annotate(
    module: ir.Module,
    graph: ProgramGraph,
    index: _Index,
    mesh: Mesh,
    specs: Mapping[str | int, Any],
    strict: bool,
) -> list[ann.Annotation]:
    """Write the mesh and the user's specs onto ``module``; list user and code annotations."""
    ann.set_mesh(module, mesh.shape)
    funcs = {sdyread.func_name(f): f for f in sdyread.func_ops(module)}
    main = funcs[graph.main]
    main_fn = graph.functions[graph.main]
    out: list[ann.Annotation] = []
    tagged = {sdyread.tag_of(op): op for op in sdyread.walk(module.operation) if sdyread.tag_of(op) is not None}
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
        spec = ann.check_annotation(value.name or value.display_name, spec, value.shape or (), mesh, strict=strict)
        if value.function == graph.main and value.arg_index is not None and value.producer is None and value.id in func_args(graph, graph.main):
            ann.annotate_arg(main, value.arg_index, spec)
            out.append(ann.Annotation(value.name or label, spec, "user", value.id, f"input: {value.arg_index}"))
            continue
        key = next((k for k, vid in index.key_to_id.items() if vid == value.id and k[0] != "fres"), None)
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
        out.append(ann.Annotation(value.display_name or label, spec, "user", value.id, ""))
    out.extend(_code_annotations(graph))
    return out


def _code_annotations(graph: ProgramGraph) -> list[ann.Annotation]:
    out = []
    graph.functions[graph.main]
    for i, vid in enumerate(func_args(graph, graph.main)):
        v = graph.values[vid]
        if v.code_sharding:
            out.append(ann.Annotation(v.name or v.display_name, Spec(), "code", vid, f"input: {i}", ))
    for op in graph.ops:
        if op.name in ("sdy.sharding_constraint", "sdy.manual_computation") and op.code_sharding is not None:
            vid = op.results[0] if op.results else None
            label = graph.values[vid].display_name if vid is not None else op.name
            out.append(ann.Annotation(label, Spec(), "code", vid, f"op:{op.id}"))
    return out


def _name_constraints(annotations: list[ann.Annotation], names: dict[int, str]) -> None:
    for i, a in enumerate(annotations):
        if not a.origin and a.value is not None:
            annotations[i] = ann.Annotation(a.target, a.spec, a.source, a.value, names.get(a.value, ""))
        elif a.origin.startswith("op:"):
            vid = a.value
            annotations[i] = ann.Annotation(a.target, a.spec, a.source, a.value, names.get(vid, a.origin) if vid is not None else a.origin)


def _describe_origin(origin: str, value: int, annotations: list[ann.Annotation]) -> str:
    """``input: 0`` -> ``input: 0 (x, user)``: which annotation an origin string means.

    ``self`` (the value's own annotation) is replaced by that annotation's origin.
    """
    if origin == "self":
        own = next((a for a in annotations if a.value == value and a.origin), None)
        if own is None:
            return origin
        origin = own.origin
    for a in annotations:
        if a.origin == origin:
            return f"{origin} ({a.target}, {a.source})"
    return origin


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


def _ir_value(key: tuple | None, tagged: dict, funcs: dict, index: _Index) -> ir.Value | None:
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


def _value_infos(graph: ProgramGraph, final: dict[int, ValueSharding], mesh: Mesh) -> list[ValueInfo]:
    from backend.shardtext import hlo_sharding_text

    out = []
    cache: dict[tuple, str] = {}
    for v in graph.values:
        s = final.get(v.id) or replicated(v.rank)
        dims = tuple(merge_full_axes(d, mesh.shape) for d in s.dims)
        key = (dims, v.rank)
        hlo = cache.get(key)
        if hlo is None:
            hlo = _hlo_text(mesh, dims, v.rank, hlo_sharding_text)
            cache[key] = hlo
        out.append(
            ValueInfo(v.id, v.name, v.display_name, v.role, v.shape, v.dtype, [list(d) for d in dims], hlo, s.closed)
        )
    return out


def _hlo_text(mesh: Mesh, dims: tuple, rank: int, fmt) -> str:
    if any(":(" in a for d in dims for a in d):
        return ""
    try:
        return fmt(mesh, Spec.of(*[tuple(d) for d in dims]), rank)
    except ShardscopeError:
        return ""


def _read_state(
    module: ir.Module, index: _Index, graph: ProgramGraph, *, debug: bool, scope: str = "all"
):
    """Shardings (canonical graph ids) and, with ``debug``, origins, steps and constraint names.

    ``scope="annotations"`` reads function boundaries and ``sdy`` ops only (all an
    unpropagated module can hold); ``scope="io"`` reads function boundaries only.
    """
    state: dict[int, ValueSharding] = {}
    origins: dict[int, dict[str, str]] = {}
    steps: list[Step] = []
    constraint_names: dict[int, str] = {}

    def put(key: tuple | None, sharding: ValueSharding | None, origin: ir.Attribute | None = None) -> None:
        for vid in index.ids_for(key):
            if sharding is not None:
                state[vid] = sharding
            if origin is not None:
                origins[vid] = sdyread.dict_of(origin)

    def steps_from(op_id: int | None, op_name: str, attr: ir.Attribute, resolve) -> None:
        for e in sdyread.read_edges(attr):
            values: list[int] = []
            for t in e.targets:
                for key in resolve(t):
                    for vid in index.ids_for(key):
                        if vid not in values:
                            values.append(vid)
            src = resolve(e.source)
            steps.append(
                Step(e.step, op_id, op_name, e.axis, e.source, e.targets, tuple(values),
                     index.graph_id(src[0]) if src else None)
            )

    for func in sdyread.func_ops(module):
        tag = sdyread.tag_of(func)
        if tag is None:
            continue
        block = sdyread.first_block(func)
        for j, attr in enumerate(sdyread.arg_attr(func, "arg_attrs", "sdy.sharding")):
            origin = sdyread.arg_attr(func, "arg_attrs", "sdy.sharding_origins")[j] if debug else None
            put(("arg", tag, 0, j), sdyread.read_sharding(attr) if attr is not None else None, origin)
        ret = sdyread.terminator(block)
        res_sh = sdyread.arg_attr(func, "res_attrs", "sdy.sharding")
        res_or = sdyread.arg_attr(func, "res_attrs", "sdy.sharding_origins") if debug else []
        res_edges = sdyread.arg_attr(func, "res_attrs", "sdy.propagation_edges") if debug else []
        for j, attr in enumerate(res_sh):
            put(("fres", tag, j), sdyread.read_sharding(attr) if attr is not None else None,
                res_or[j] if j < len(res_or) else None)
        for j, attr in enumerate(res_edges):
            if attr is None:
                continue
            operand = ret.operands[j]

            def resolve_fres(ref: str, j=j, operand=operand, tag=tag) -> list[tuple]:
                return [sdyread.value_key(operand)] if ref.startswith("operand") else [("fres", tag, j)]

            steps_from(None, "func.return", attr, resolve_fres)

    ops = () if scope == "io" else sdyread.walk(module.operation)
    for op in ops:
        if scope == "annotations" and not op.name.startswith("sdy."):
            continue
        if op.name == "sdy.data_flow_edge":
            _read_edge_op(op, put, steps_from, index, graph, debug)
            continue
        tag = sdyread.tag_of(op)
        if tag is None or tag < 0:
            continue
        attrs = op.attributes
        name = op.name
        op_id = tag if tag < len(graph.ops) else None
        shown = name if op_id is not None else f"{name} (user)"
        if name == "sdy.data_flow_edge":
            continue
        if name in ("sdy.sharding_constraint", "sdy.reshard"):
            sh = sdyread.read_sharding(attrs["sharding"])
            put(("res", tag, 0), sh, attrs["sdy.sharding_origins"] if debug and "sdy.sharding_origins" in attrs else None)
            if debug and "sdy.sharding_origin_name" in attrs:
                vid = index.graph_id(("res", tag, 0))
                if vid is not None:
                    constraint_names[vid] = ir.StringAttr(attrs["sdy.sharding_origin_name"]).value
        elif "sdy.sharding" in attrs:
            per = sdyread.read_per_value(attrs["sdy.sharding"])
            ors = list(ir.ArrayAttr(attrs["sdy.sharding_origins"])) if debug and "sdy.sharding_origins" in attrs else []
            if debug and "sdy.result_sharding_origins" in attrs:
                ors = list(ir.ArrayAttr(attrs["sdy.result_sharding_origins"]))
            for j, sh in enumerate(per):
                put(("res", tag, j), sh, ors[j] if j < len(ors) else None)
                if name == "stablehlo.while":
                    put(("arg", tag, 0, j), sh)
                    put(("arg", tag, 1, j), sh)
        if name in ("sdy.named_computation", "sdy.manual_computation"):
            for key, attr_name in (("in_shardings", "arg"), ("out_shardings", "res")):
                if key in attrs:
                    for j, sh in enumerate(sdyread.read_per_value(attrs[key])):
                        put(("arg", tag, 0, j) if attr_name == "arg" else ("res", tag, j), sh)
        if not debug:
            continue
        if "sdy.propagation_edges" in attrs:
            def resolve_op(ref: str, op=op, tag=tag) -> list[tuple]:
                kind, i = ref.rsplit("-", 1)
                if kind == "operand":
                    return [sdyread.value_key(op.operands[int(i)])]
                return [("res", tag, int(i))]

            steps_from(op_id, shown, attrs["sdy.propagation_edges"], resolve_op)
        if name in _DATA_FLOW_OPS:
            for attr_name, owner in (("sdy.result_propagation_edges", "result"), ("sdy.block_arg_propagation_edges", "block_arg")):
                if attr_name not in attrs:
                    continue
                for j, edges in enumerate(ir.ArrayAttr(attrs[attr_name])):
                    resolve = functools.partial(_data_flow_ref, op, tag, owner, j)
                    steps_from(op_id, shown, edges, resolve)
    steps.sort(key=lambda s: (s.index, s.axis, s.source))
    return state, origins, steps, constraint_names


def _read_edge_op(op: ir.Operation, put, steps_from, index: _Index, graph: ProgramGraph, debug: bool) -> None:
    """One ``sdy.data_flow_edge``: the sharding, origins and steps of its owner value."""
    owner = op.operands[0]
    if isinstance(owner, ir.BlockArgument):
        parent = owner.owner.owner
        kind, j = "block_arg", owner.arg_number
    else:
        parent = ir.OpResult(owner).owner
        kind, j = "result", ir.OpResult(owner).result_number
    tag = sdyread.tag_of(parent)
    if tag is None:
        return
    attrs = op.attributes
    key = sdyread.value_key(owner)
    sh = sdyread.read_sharding(attrs["sharding"]) if "sharding" in attrs else None
    if sh is not None and kind == "block_arg" and parent.name == "sdy.manual_computation":
        sh = _with_manual_axes(parent, j, sh)
    origin = attrs["sdy.sharding_origins"] if debug and "sdy.sharding_origins" in attrs else None
    if origin is not None and not isinstance(origin, ir.DictAttr):
        try:
            origin = ir.ArrayAttr(origin)[0]
        except ValueError:
            pass
    put(key, sh, origin)
    if kind == "result" and parent.name == "stablehlo.while":
        put(("arg", tag, 0, j), sh)
        put(("arg", tag, 1, j), sh)
    if debug and "sdy.propagation_edges" in attrs:
        op_id = tag if 0 <= tag < len(graph.ops) else None
        resolve = functools.partial(_data_flow_ref, parent, tag, kind, j)
        steps_from(op_id, parent.name, attrs["sdy.propagation_edges"], resolve)


def _with_manual_axes(op: ir.Operation, j: int, local: ValueSharding) -> ValueSharding:
    """A shard_map body argument as the program sees it: the manual axes of its
    ``in_shardings`` entry (always major) followed by the free axes propagation gave it."""
    from backend.collectives import axes_in

    manual = set(axes_in(str(op.attributes["manual_axes"]))) if "manual_axes" in op.attributes else set()
    outer = sdyread.read_per_value(op.attributes["in_shardings"])[j]
    dims = tuple(
        tuple(a for a in od if a in manual) + tuple(ld)
        for od, ld in zip(outer.dims, local.dims, strict=False)
    )
    return local.with_dims(dims)


def _data_flow_ref(op: ir.Operation, tag: int, owner: str, j: int, ref: str) -> list[tuple]:
    """Keys a data-flow edge's ``operand-i`` / ``result-0`` stand for.

    On an edge owned by result ``j`` the sources (operands) are what flows into it: the
    op's operand ``j`` and/or each region's returned value ``j``; the target is the result
    (for a while loop also the loop-carried block arguments, which share its sharding).
    On an edge owned by block argument ``j`` the source is the op's operand ``j``.
    """
    kind, i = ref.rsplit("-", 1)
    k = int(i)
    name = op.name
    if kind == "result":
        if owner == "block_arg":
            return [("arg", tag, 0, j)]
        keys = [("res", tag, j)]
        if name == "stablehlo.while":
            keys += [("arg", tag, 0, j), ("arg", tag, 1, j)]
        return keys
    if owner == "block_arg":
        return [sdyread.value_key(op.operands[j])]
    sources: list[ir.Value] = []
    if name == "stablehlo.while":
        sources = [op.operands[j], sdyread.terminator(sdyread.first_block(op, 1)).operands[j]]
    elif name == "stablehlo.optimization_barrier":
        sources = [op.operands[j]]
    else:
        sources = [sdyread.terminator(r.blocks[0]).operands[j] for r in op.regions if len(r.blocks)]
    if k < len(sources):
        return [sdyread.value_key(sources[k])]
    return []
