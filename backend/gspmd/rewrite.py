"""The annotated program in GSPMD's vocabulary, for XLA's older propagation to compile.

The module Shardy starts from (the program with the user's and the code's shardings, calls
inlined) is rewritten: ``sdy.sharding`` on arguments, results and ops becomes
``mhlo.sharding`` HloSharding text, each ``sdy.sharding_constraint`` (and ``sdy.reshard``)
becomes the ``custom_call @Sharding`` JAX emits for ``with_sharding_constraint`` under
GSPMD, and every op's location is renamed ``shardscope.op.N`` after its graph id, so each
compiled instruction's ``op_name`` names the program op it came from (``op_id``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxlib.mlir import ir

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.propagation import sdyread
from shardscope.backend.propagation.propagate import prepare
from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.spec import Spec

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.sharding.mesh import Mesh
    from shardscope.backend.sharding.values import ValueSharding

_OP_LOCATION = "shardscope.op."


class NoGspmdForm(ShardscopeError):
    """The annotated module holds something GSPMD has no annotation for."""


def op_id(op_name: str) -> int | None:
    """The program op id an instruction's ``op_name`` carries, if it is one we named."""
    if not op_name.startswith(_OP_LOCATION):
        return None
    try:
        return int(op_name[len(_OP_LOCATION) :])
    except ValueError:
        return None


def gspmd_module(program: Program, result: PropagationResult) -> str:
    """The annotated program of ``result`` with GSPMD's annotations instead of Shardy's.

    Raises ``NoGspmdForm`` for a module with ``shard_map`` bodies or other Shardy ops
    without a GSPMD counterpart.
    """
    specs: dict[str | int, Spec] = {}
    for a in result.annotations:
        if a.source != "user":
            continue
        if a.origin.startswith("output: "):
            specs[f"result[{a.origin.split(': ', 1)[1]}]"] = a.spec
        elif a.value is not None:
            specs[a.value] = a.spec
    prep = prepare(program, result.mesh, specs, strict=False)
    module = prep.module
    texts = _HloTexts(prep.mesh)
    with module.context, ir.Location.unknown():
        for op in list(module.body.operations):
            if op.operation.name == "sdy.mesh":
                op.operation.erase()
        for func in sdyread.func_ops(module):
            _rewrite_signature(func, texts)
        for op in sdyread.walk(module.operation):
            name = op.name
            tag = sdyread.tag_of(op)
            if tag is not None:
                del op.attributes[sdyread.TAG]
                if 0 <= tag < len(prep.graph.ops):
                    op.location = ir.Location.name(f"{_OP_LOCATION}{tag}", childLoc=op.location)
            if name in ("sdy.sharding_constraint", "sdy.reshard"):
                _constraint_to_custom_call(op, texts)
            elif name.startswith("sdy."):
                what = "shard_map" if name == "sdy.manual_computation" else name
                raise NoGspmdForm(f"the program uses {what}, which has no GSPMD form here")
            elif "sdy.sharding" in op.attributes:
                per = sdyread.read_per_value(op.attributes["sdy.sharding"])
                parts = [
                    texts.text(sh, _rank(r.type)) for sh, r in zip(per, op.results, strict=False)
                ]
                text = parts[0] if len(parts) == 1 else "{" + ", ".join(parts) + "}"
                del op.attributes["sdy.sharding"]
                op.attributes["mhlo.sharding"] = ir.StringAttr.get(text)
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, prep.mesh.size)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        return module.operation.get_asm(enable_debug_info=True)


class _HloTexts:
    """HloSharding text of Shardy shardings over one mesh, each made once: devices numbered
    by mesh position, as a JAX or torch_xla lowering numbers them (the compile's device
    assignment is the mesh's devices in their order)."""

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self._texts: dict[tuple, str] = {}

    def text(self, sharding: ValueSharding, rank: int) -> str:
        key = (sharding.dims, rank)
        if key not in self._texts:
            if any(":(" in axis for dim in sharding.dims for axis in dim):
                raise NoGspmdForm("a sharding uses a sub-axis, which GSPMD text cannot name")
            spec = Spec.of(*[tuple(d) for d in sharding.dims])
            self._texts[key] = hlo_sharding_text(self.mesh, spec, rank)
        return self._texts[key]


def _free(sharding: ValueSharding) -> list[int]:
    """Open dims without axes: GSPMD's ``unspecified_dims``, free for propagation."""
    return [
        d
        for d, (axes, closed) in enumerate(zip(sharding.dims, sharding.closed, strict=False))
        if not closed and not axes
    ]


def _rank(value_type: ir.Type) -> int:
    try:
        return ir.RankedTensorType(value_type).rank
    except ValueError:
        return 0


def _rewrite_signature(func: ir.Operation, texts: _HloTexts) -> None:
    """``sdy.sharding`` of the function's arguments and results as ``mhlo.sharding``."""
    block = sdyread.first_block(func)
    types = {
        "arg_attrs": [a.type for a in block.arguments],
        "res_attrs": [v.type for v in sdyread.terminator(block).operands],
    }
    for key, value_types in types.items():
        if key not in func.attributes:
            continue
        entries = []
        for j, entry in enumerate(ir.ArrayAttr(func.attributes[key])):
            d = ir.DictAttr(entry)
            items = {d[i].name: d[i].attr for i in range(len(d))}
            attr = items.pop("sdy.sharding", None)
            rank = _rank(value_types[j])
            sharding = sdyread.read_sharding(attr) if attr is not None else None
            # A wholly open sharding leaves the value to propagation, as an unannotated
            # one is under GSPMD.
            if sharding is not None and len(_free(sharding)) < rank:
                items["mhlo.sharding"] = ir.StringAttr.get(texts.text(sharding, rank))
            entries.append(ir.DictAttr.get(items))
        func.attributes[key] = ir.ArrayAttr.get(entries)


def _constraint_to_custom_call(op: ir.Operation, texts: _HloTexts) -> None:
    """Replace a Shardy constraint by GSPMD's ``custom_call @Sharding``."""
    operand = op.operands[0]
    sharding = sdyread.read_sharding(op.attributes["sharding"])
    attributes = {
        "call_target_name": ir.StringAttr.get("Sharding"),
        "mhlo.sharding": ir.StringAttr.get(texts.text(sharding, _rank(operand.type))),
    }
    if _free(sharding):
        # How JAX writes P.UNCONSTRAINED dims of a constraint for GSPMD.
        dims = ",".join(str(d) for d in _free(sharding))
        attributes["backend_config"] = ir.StringAttr.get(f"unspecified_dims=[{dims}]")
    with ir.InsertionPoint(op):
        custom = ir.Operation.create(
            "stablehlo.custom_call",
            results=[op.results[0].type],
            operands=[operand],
            attributes=attributes,
            loc=op.location,
        )
    op.results[0].replace_all_uses_with(custom.results[0])
    op.erase()
