"""Apply a mesh and user shardings to a lowered module, the way ``jax.jit`` would.

Arguments and results get ``sdy.sharding`` attributes (like ``in_shardings`` /
``out_shardings``); an intermediate value gets an ``sdy.sharding_constraint`` right after
its definition that every later use reads (like ``with_sharding_constraint``). A dimension
is closed unless marked open; a dimension may carry a Shardy user priority (``p0`` is the
highest). Annotations already written in the program stay and are reported as code
annotations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from shardscope.backend.errors import MeshError, ShardscopeError, SpecError
from shardscope.backend.program.graph import ProgramGraph
from shardscope.backend.propagation import sdyread
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import DimSpec, Spec, parse_spec, validate_spec

MESH_NAME = "mesh"


@dataclass(frozen=True)
class Annotation:
    """One sharding put on a value, by the user (``source="user"``) or by the code itself.

    ``value`` is the graph value id (None for a result that is not a separate value);
    ``origin`` is the name Shardy's ``sdy.sharding_origins`` uses for it (``input: 0``,
    ``output: 1``, ``constraint_3``).
    """

    target: str
    spec: Spec
    source: str = "user"
    value: int | None = None
    origin: str = ""

    def to_json(self) -> dict:
        """JSON form for ``propagate --json``."""
        return {
            "target": self.target,
            "spec": self.spec.format(),
            "source": self.source,
            "value": self.value,
            "origin": self.origin,
        }


def as_spec(spec: Spec | Sequence | object) -> Spec:
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


def _axis_ref(axis: str) -> ir.Attribute:
    if ":(" in axis:
        name, rest = axis.split(":(", 1)
        pre, size = rest.split(")", 1)
        return sdy.AxisRefAttr.get(name, sdy.SubAxisInfoAttr.get(int(pre), int(size)))
    return sdy.AxisRefAttr.get(axis)


def sharding_attr(spec: Spec, mesh_name: str = MESH_NAME) -> ir.Attribute:
    """The ``#sdy.sharding`` attribute for ``spec`` on mesh ``@mesh_name`` (needs a context)."""
    return sdy.TensorShardingAttr.get(
        mesh_name,
        [_dim_attr(d) for d in spec.dims],
        [_axis_ref(a) for a in spec.replicated],
    )


def _dim_attr(d: DimSpec) -> ir.Attribute:
    # Shardy rejects a priority on a closed empty dim, which means nothing anyway.
    prio = d.priority if (d.axes or d.is_open) else None
    return sdy.DimensionShardingAttr.get([_axis_ref(a) for a in d.axes], not d.is_open, prio)


def set_mesh(module: ir.Module, mesh: Mapping[str, int], mesh_name: str = MESH_NAME) -> None:
    """Make ``@mesh_name`` in ``module`` the given mesh, replacing one already there."""
    if any(size < 1 for size in mesh.values()):
        raise MeshError(f"mesh axis sizes must be positive: {dict(mesh)}")
    with module.context, ir.Location.unknown():
        attr = ir.Attribute.parse(
            "#sdy.mesh<[" + ", ".join(f'"{k}"={v}' for k, v in mesh.items()) + "]>"
        )
        for op in module.body.operations:
            if op.operation.name == "sdy.mesh":
                if ir.StringAttr(op.operation.attributes["sym_name"]).value == mesh_name:
                    op.operation.attributes["mesh"] = attr
                    return
        first = module.body.operations[0] if len(module.body.operations) else None
        ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(module.body)
        sdy.MeshOp(mesh_name, attr, ip=ip)


def _set_func_attr(
    func: ir.Operation, key: str, index: int, name: str, value: ir.Attribute
) -> None:
    count = len(
        ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs
        if key == "arg_attrs"
        else ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).results
    )
    old = list(ir.ArrayAttr(func.attributes[key])) if key in func.attributes else []
    old += [ir.DictAttr.get({})] * (count - len(old))
    entries = {}
    d = ir.DictAttr(old[index])
    for i in range(len(d)):
        entries[d[i].name] = d[i].attr
    entries[name] = value
    old[index] = ir.DictAttr.get(entries)
    func.attributes[key] = ir.ArrayAttr.get(old)


def annotate_arg(func: ir.Operation, index: int, spec: Spec) -> None:
    """Put ``spec`` on argument ``index`` of ``func`` (like ``in_shardings``)."""
    with func.context:
        _set_func_attr(func, "arg_attrs", index, "sdy.sharding", sharding_attr(spec))


def annotate_result(func: ir.Operation, index: int, spec: Spec) -> None:
    """Put ``spec`` on result ``index`` of ``func`` (like ``out_shardings``)."""
    with func.context:
        _set_func_attr(func, "res_attrs", index, "sdy.sharding", sharding_attr(spec))


def constrain(value: ir.Value, spec: Spec, tag: int) -> ir.Operation:
    """Insert ``sdy.sharding_constraint`` on ``value`` and route every other use through it.

    The new op carries ``shardscope.op = tag`` so later passes can be joined back.
    """
    with value.context, value.location:
        if isinstance(value, ir.BlockArgument):
            block = value.owner
            ops = block.operations
            ip = ir.InsertionPoint(ops[0]) if len(ops) else ir.InsertionPoint(block)
        else:
            owner = ir.OpResult(value).owner
            ip = ir.InsertionPoint.after(owner)
        op = sdy.ShardingConstraintOp(value, sharding_attr(spec), ip=ip).operation
        op.attributes[sdyread.TAG] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), tag)
        value.replace_all_uses_except(op.results[0], op)
    return op


def gspmd_shardings(
    module: ir.Module, main: ir.Operation, graph: ProgramGraph, mesh: Mesh
) -> list[tuple[str, int, int | None, Spec]]:
    """The program's GSPMD shardings as specs over ``mesh``: ``(kind, index, value id,
    spec)`` for arguments and results of main (kind ``arg``/``result``) and for each
    ``custom_call @Sharding`` (kind ``op``, index = its op id)."""
    from shardscope.backend.propagation.readback import func_args
    from shardscope.backend.sharding.hlo_text import spec_from_hlo_sharding

    def spec_of(text: str, rank: int, what: str) -> Spec:
        try:
            return spec_from_hlo_sharding(text, mesh, rank)
        except ShardscopeError as exc:
            raise SpecError(f"the program's sharding of {what}: {exc}") from None

    out: list[tuple[str, int, int | None, Spec]] = []
    main_fn = graph.functions[graph.main]
    for key, kind, ids in (
        ("arg_attrs", "arg", func_args(graph, graph.main)),
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
