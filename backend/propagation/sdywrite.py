"""Writing Shardy's attributes: a mesh, argument and result shardings, and constraints.

What ``jax.jit`` writes for a mesh and shardings, written onto a loaded module:
arguments and results get ``sdy.sharding`` attributes (like ``in_shardings`` /
``out_shardings``); an intermediate value gets an ``sdy.sharding_constraint`` right after
its definition that every later use reads (like ``with_sharding_constraint``). A dimension
is closed unless marked open; a dimension may carry a Shardy user priority (``p0`` is the
highest).
"""

from __future__ import annotations

from collections.abc import Mapping

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from shardscope.backend.errors import MeshError
from shardscope.backend.propagation import sdyread
from shardscope.backend.sharding.spec import DimSpec, Spec

MESH_NAME = "mesh"


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
