"""Which shardings a propagation run starts from, and how Shardy names them back.

``annotate`` writes onto a loaded module, with ``sdywrite``'s primitives, the way
``jax.jit`` would: the mesh, the program's own GSPMD shardings in Shardy's form, then the
user's specs, each resolved to a program value by name, ``result[i]`` or value id
(arguments and results of the entry function get ``sdy.sharding``, an intermediate a
constraint). It lists every annotation, the user's and those the program's code carries.
After propagation ``name_constraints`` and ``origin_describer`` map the origin names Shardy
records (``input: 0``, ``constraint_3``) back to those annotations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from jaxlib.mlir import ir

from shardscope.backend.errors import ShardscopeError, SpecError
from shardscope.backend.json_form import JsonForm, json_field
from shardscope.backend.program.graph import ProgramGraph, Value
from shardscope.backend.propagation import sdyread, sdywrite
from shardscope.backend.sharding.hlo_text import spec_from_hlo_sharding
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.sdy_text import readable_spec
from shardscope.backend.sharding.spec import Spec, parse_spec, validate_spec

if TYPE_CHECKING:
    from jax.sharding import PartitionSpec

    from shardscope.backend.propagation.program_index import ProgramIndex

# A spec as callers give one: a Spec, a JAX PartitionSpec, CLI text or JSON entries.
SpecLike: TypeAlias = "Spec | PartitionSpec | str | Sequence[str | Sequence[str] | None]"


@dataclass(frozen=True)
class Annotation(JsonForm):
    """One sharding put on a value, by the user (``source="user"``) or by the code itself.

    ``value`` is the graph value id (None for a result that is not a separate value);
    ``origin`` is the name Shardy's ``sdy.sharding_origins`` uses for it (``input: 0``,
    ``output: 1``, ``constraint_3``). Its JSON form (an ``annotations[]`` entry of
    ``propagate --json``) gives ``spec`` as text.
    """

    target: str
    spec: Spec = json_field(convert=Spec.format)
    source: str = "user"
    value: int | None = None
    origin: str = ""


def as_spec(spec: SpecLike) -> Spec:
    """A ``Spec`` from a Spec, a JAX PartitionSpec or JSON entries (None | str | [str])."""
    if isinstance(spec, Spec):
        return spec
    if type(spec).__name__ == "PartitionSpec":
        return Spec.from_jax(spec)
    if isinstance(spec, str):
        return parse_spec(spec)
    return Spec.from_json(spec)


def check_annotation(
    name: str, spec: Spec, shape: Sequence[int], mesh: Mesh, *, strict: bool = True
) -> Spec:
    """Validate ``spec`` for value ``name`` (raising ``SpecError``) and pad it to the rank.

    ``strict`` wants one entry per dimension (the CLI's rule); otherwise a short spec is
    padded with replicated dims, as JAX does for a PartitionSpec.
    """
    try:
        validate_spec(spec, mesh)  # axis names first: `x=foo` is an unknown axis, not a rank slip
    except SpecError as exc:
        raise SpecError(f"{name}: {exc}") from None
    if len(spec.dims) > len(shape) or (strict and len(spec.dims) != len(shape)):
        raise SpecError(
            f"spec {spec.format()!r} for {name} has {len(spec.dims)} dimension(s) but {name} "
            f"has rank {len(shape)} (shape {list(shape)}): give one entry per dimension"
        )
    try:
        validate_spec(spec, mesh, shape)
    except SpecError as exc:
        raise SpecError(f"{name}: {exc}") from None
    return spec.padded(len(shape))


def gspmd_shardings(
    module: ir.Module, main: ir.Operation, graph: ProgramGraph, mesh: Mesh
) -> list[tuple[str, int, int | None, Spec]]:
    """The program's GSPMD shardings as specs over ``mesh``: ``(kind, index, value id,
    spec)`` for arguments and results of main (kind ``arg``/``result``) and for each
    ``custom_call @Sharding`` (kind ``op``, index = its op id)."""

    def spec_of(text: str, rank: int, what: str) -> Spec:
        try:
            return spec_from_hlo_sharding(text, mesh, rank)
        except ShardscopeError as exc:
            raise SpecError(f"the program's sharding of {what}: {exc}") from None

    out: list[tuple[str, int, int | None, Spec]] = []
    main_fn = graph.functions[graph.main]
    for key, kind, ids in (
        ("arg_attrs", "arg", graph.functions[graph.main].arguments),
        ("res_attrs", "result", main_fn.results),
    ):
        shardy = sdyread.arg_attr(main, key, "sdy.sharding")
        for i, gspmd in enumerate(sdyread.arg_attr(main, key, "mhlo.sharding")):
            if gspmd is None or shardy[i] is not None or i >= len(ids):
                continue
            value = graph.values[ids[i]]
            text = ir.StringAttr(gspmd).value
            what = value.name or value.display_name
            out.append((kind, i, value.id, spec_of(text, value.rank, what)))
    constraints = [
        op
        for op in graph.ops
        if op.name == "stablehlo.custom_call" and op.code_sharding and len(op.results) == 1
    ]
    if constraints:
        targets = {
            tag: ir.StringAttr(op.attributes["call_target_name"]).value
            for op in sdyread.walk(module.operation)
            if op.name == "stablehlo.custom_call"
            and "call_target_name" in op.attributes
            and (tag := sdyread.tag_of(op)) is not None
        }
        for op in constraints:
            value = graph.values[op.results[0]]
            # Only with_sharding_constraint's call: shard_map's SPMDFullToShardShape and
            # ShardToFull calls carry shardings that are not constraints.
            if targets.get(op.id) != "Sharding" or value.function != graph.main:
                continue
            spec = spec_of(op.code_sharding, value.rank, value.display_name)
            out.append(("op", op.id, value.id, spec))
    return out


def annotate(
    module: ir.Module,
    graph: ProgramGraph,
    index: ProgramIndex,
    mesh: Mesh,
    specs: Mapping[str | int, SpecLike],
    strict: bool,
) -> list[Annotation]:
    """Write the mesh and the user's specs onto ``module``; list user and code annotations.

    Shardings the program carries in GSPMD's form (``mhlo.sharding`` on arguments and
    results, ``custom_call @Sharding`` for ``with_sharding_constraint``) are written in
    Shardy's form first, as XLA's import does before Shardy runs; the user's specs then
    override them.
    """
    sdywrite.set_mesh(module, mesh.shape)
    writer = _Writer(module, graph, index, mesh)
    gspmd = gspmd_shardings(module, writer.main, graph, mesh)
    writer.write_gspmd(gspmd, edited=bool(specs))
    out = [writer.write_user(target, as_spec(raw), strict) for target, raw in specs.items()]
    imported = {vid: spec for kind, _, vid, spec in gspmd if kind == "arg"}
    for a in code_annotations(graph):
        spec = imported.get(a.value) if a.origin.startswith("input: ") else None
        out.append(Annotation(a.target, spec or a.spec, a.source, a.value, a.origin))
    for kind, i, vid, spec in gspmd:
        if kind == "op":
            label = graph.values[vid].display_name
            out.append(Annotation(label, spec, "code", vid, f"op:{i}"))
    return out


class _Writer:
    """Writes shardings onto the module's entry function and constraints into its body,
    registering each constraint's value with the index."""

    def __init__(
        self, module: ir.Module, graph: ProgramGraph, index: ProgramIndex, mesh: Mesh
    ) -> None:
        self.module = module
        self.graph = graph
        self.index = index
        self.mesh = mesh
        self.funcs = {sdyread.func_name(f): f for f in sdyread.func_ops(module)}
        self.main = self.funcs[graph.main]
        self.tagged: dict[int, ir.Operation] = {}

    def write_gspmd(
        self, gspmd: list[tuple[str, int, int | None, Spec]], edited: bool = False
    ) -> None:
        """Shardings the program carries in GSPMD's form, written in Shardy's. Where the
        user's specs are written too (``edited``), the program's ``custom_call @Sharding``
        ops are taken out once their constraints stand in for them: XLA compiles a module
        that holds one with GSPMD, and an edited program is Shardy's to partition."""
        for kind, i, vid, spec in gspmd:
            if kind == "arg":
                sdywrite.annotate_arg(self.main, i, spec)
            elif kind == "result":
                sdywrite.annotate_result(self.main, i, spec)
            else:
                value = self.graph.values[vid]
                self.constrain_value(value, spec, value.display_name)
                if edited:
                    self._drop_sharding_call(i)

    def _drop_sharding_call(self, tag: int) -> None:
        """Take out the ``custom_call @Sharding`` tagged ``tag``: its constraint reads the
        call's operand instead."""
        call = self.tagged.get(tag)
        if call is None or len(call.operands) != 1 or len(call.results) != 1:
            return
        result = call.results[0]
        if result.type != call.operands[0].type:
            return
        result.replace_all_uses_with(call.operands[0])
        call.erase()
        del self.tagged[tag]

    def write_user(self, target: str | int, spec: Spec, strict: bool) -> Annotation:
        """The user's spec for ``target`` (a result, an argument or a value), checked."""
        graph, mesh, label = self.graph, self.mesh, str(target)
        if isinstance(target, str) and target.startswith("result[") and target.endswith("]"):
            return self._write_result(target, spec, strict)
        value = _find_value(graph, target)
        if value is None:
            raise SpecError(_unknown(target, graph))
        spec = check_annotation(
            value.name or value.display_name, spec, value.shape or (), mesh, strict=strict
        )
        if (
            value.function == graph.main
            and value.arg_index is not None
            and value.producer is None
            and value.id in graph.functions[graph.main].arguments
        ):
            sdywrite.annotate_arg(self.main, value.arg_index, spec)
            origin = f"input: {value.arg_index}"
            return Annotation(value.name or label, spec, "user", value.id, origin)
        self.constrain_value(value, spec, label)
        return Annotation(value.display_name or label, spec, "user", value.id, "")

    def _write_result(self, target: str, spec: Spec, strict: bool) -> Annotation:
        results = self.graph.functions[self.graph.main].results
        try:
            i = int(target[7:-1])
        except ValueError:
            i = -1
        if not 0 <= i < len(results):
            raise SpecError(_unknown(target, self.graph))
        value = self.graph.values[results[i]]
        spec = check_annotation(target, spec, value.shape or (), self.mesh, strict=strict)
        sdywrite.annotate_result(self.main, i, spec)
        return Annotation(target, spec, "user", value.id, f"output: {i}")

    def constrain_value(self, value: Value, spec: Spec, label: str) -> None:
        """A sharding constraint on ``value`` in the module's body, with a fresh tag."""
        index = self.index
        key = next(
            (k for k, vid in index.key_to_id.items() if vid == value.id and k[0] != "fres"), None
        )
        if not self.tagged:
            self.tagged = {
                t: op
                for op in sdyread.walk(self.module.operation)
                if (t := sdyread.tag_of(op)) is not None
            }
        ir_value = _ir_value(key, self.tagged, self.funcs, index)
        if ir_value is None:
            raise SpecError(f"cannot constrain {label}: it is not a value of the program's body")
        tag = index.next_tag
        index.next_tag += 1
        sdywrite.constrain(ir_value, spec, tag)
        ckey = ("res", tag, 0)
        index.key_to_id[ckey] = value.id
        if index.canonical.get(value.id, ("",))[0] != "fres":
            index.canonical[value.id] = ckey


def code_annotations(graph: ProgramGraph) -> list[Annotation]:
    """The shardings the program's code carries, on entry arguments and on
    ``sdy.sharding_constraint`` / ``sdy.manual_computation`` ops: each with its origin
    name and its spec (an empty ``Spec`` where the program's text is not one Shardy
    sharding, e.g. GSPMD's)."""
    out = []
    for i, vid in enumerate(graph.functions[graph.main].arguments):
        v = graph.values[vid]
        if v.code_sharding:
            out.append(
                Annotation(
                    v.name or v.display_name,
                    readable_spec(v.code_sharding) or Spec(),
                    "code",
                    vid,
                    f"input: {i}",
                )
            )
    for op in graph.ops:
        if op.name == "sdy.sharding_constraint" and op.code_sharding is not None:
            vid = op.results[0] if op.results else None
            label = graph.values[vid].display_name if vid is not None else op.name
            spec = readable_spec(op.code_sharding) or Spec()
            out.append(Annotation(label, spec, "code", vid, f"op:{op.id}"))
        elif op.name == "sdy.manual_computation":
            out.extend(_shard_map_specs(graph, op))
    return out


def _shard_map_specs(graph: ProgramGraph, op) -> list[Annotation]:
    """A ``shard_map``'s in_specs (on its operands) and out_specs (on its results), with
    origins ``op:N/input: i`` and ``op:N/output: j`` until ``name_constraints`` gives them
    Shardy's names (``mc_0_input: 0``)."""
    shown = graph.values[op.results[0]].display_name if op.results else op.name
    out = []
    for i, (vid, text) in enumerate(zip(op.operands, op.operand_shardings, strict=False)):
        label = f"{shown} in_specs[{i}] ({graph.values[vid].display_name})"
        out.append(
            Annotation(label, readable_spec(text) or Spec(), "code", vid, f"op:{op.id}/input: {i}")
        )
    for j, vid in enumerate(op.results):
        text = graph.values[vid].code_sharding
        if text:
            out.append(
                Annotation(
                    f"{shown} out_specs[{j}]",
                    readable_spec(text) or Spec(),
                    "code",
                    vid,
                    f"op:{op.id}/output: {j}",
                )
            )
    return out


def name_constraints(
    annotations: list[Annotation], names: dict[int, str], graph: ProgramGraph
) -> None:
    """Give the annotations that are constraints or shard_map specs (in place) the origin
    names Shardy recorded (``names``: value id -> ``constraint_N``, or ``mc_N`` for a
    shard_map's first result)."""
    for i, a in enumerate(annotations):
        if not a.origin and a.value is not None:
            annotations[i] = Annotation(a.target, a.spec, a.source, a.value, names.get(a.value, ""))
        elif a.origin.startswith("op:") and "/" in a.origin:
            op_part, port = a.origin.split("/", 1)
            op = graph.ops[int(op_part[3:])]
            name = names.get(op.results[0]) if op.results else None
            if name is not None:
                annotations[i] = Annotation(a.target, a.spec, a.source, a.value, f"{name}_{port}")
        elif a.origin.startswith("op:"):
            vid = a.value
            annotations[i] = Annotation(
                a.target,
                a.spec,
                a.source,
                a.value,
                names.get(vid, a.origin) if vid is not None else a.origin,
            )


def origin_describer(annotations: list[Annotation]) -> Callable[[str, int], str]:
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


def _unknown(target: str | int, graph: ProgramGraph) -> str:
    shown = repr(target) if len(str(target)) <= 80 else f"{str(target)[:60]!r}..."
    return f"unknown value {shown} in spec; valid names: {', '.join(graph.io_names())} (or an intermediate's name as the window shows it, such as %3, or its value id)"


def _find_value(graph: ProgramGraph, target: str | int) -> Value | None:
    if isinstance(target, int) or (isinstance(target, str) and target.isdigit()):
        i = int(target)
        return graph.values[i] if 0 <= i < len(graph.values) else None
    v = graph.value_by_name(str(target))
    if v is not None:
        return v
    for v in graph.values:
        if v.display_name == target:
            return v
    if isinstance(target, str) and target.startswith("%"):
        return _by_ssa_name(graph, target)
    return None


def _by_ssa_name(graph: ProgramGraph, target: str) -> Value | None:
    """The value whose display name ends in the SSA name ``target`` (``layer1/add %3`` for
    ``%3``). SSA names restart in each function, so a name several values share is an
    error that lists their full names, never a silent pick."""
    same = [v for v in graph.values if v.display_name.rsplit(" ", 1)[-1] == target]
    if len(same) > 1:
        names = ", ".join(repr(v.display_name) for v in same[:5])
        more = f" and {len(same) - 5} more" if len(same) > 5 else ""
        raise SpecError(
            f"{target} names {len(same)} values ({names}{more}); use one of those names"
        )
    return same[0] if same else None


def _ir_value(
    key: tuple | None,
    tagged: dict[int, ir.Operation],
    funcs: dict[str, ir.Operation],
    index: ProgramIndex,
) -> ir.Value | None:
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
