"""A module with its shardings taken off: what a module run's unsharded reference compiles.

``unsharded_module(text)`` removes every sharding the module carries, in Shardy's form
(``sdy.mesh``, ``sdy.sharding`` attributes, ``sdy.sharding_constraint`` and
``sdy.reshard`` ops) and in GSPMD's (``mhlo.sharding`` attributes, ``custom_call
@Sharding``), so that XLA compiles it for one device as the plain computation. A module
that runs code per device (``sdy.manual_computation``, GSPMD's ``SPMDFullToShardShape``
and ``SPMDShardToFullShape`` calls: shard_map) has no unsharded equivalent: its result
depends on the mesh; ``ManualModule`` says so.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from shardscope.backend.program.mlir import new_context
from shardscope.backend.propagation import sdyread

# Attributes that place a value on devices, on functions' arguments and results and on ops.
_SHARDING_ATTRS = ("sdy.sharding", "mhlo.sharding")
# Ops that only say where their operand lies: each is replaced by its operand.
_PASS_THROUGH = ("sdy.sharding_constraint", "sdy.reshard")
# Custom calls of that kind, by target: with_sharding_constraint in GSPMD's form.
_PASS_THROUGH_CALLS = ("Sharding",)
# Per-device code: no unsharded run computes the same.
_MANUAL_OPS = ("sdy.manual_computation",)
_MANUAL_CALLS = ("SPMDFullToShardShape", "SPMDShardToFullShape")
# Ops that carry only sharding information and have no results.
_DROPPED = ("sdy.mesh", "sdy.sharding_group")


class ManualModule(Exception):
    """The module runs code per device (shard_map); the message says which op."""


def unsharded_module(text: str) -> str:
    """``text`` without its shardings (see the module docstring); ``ManualModule`` for a
    module with per-device code."""
    with new_context():
        module = ir.Module.parse(text)
        for op in sdyread.walk(module.operation):
            name = op.name
            if name in _MANUAL_OPS or _call_target(op) in _MANUAL_CALLS:
                raise ManualModule(f"the module runs per-device code ({_op_label(op)})")
        for op in sdyread.walk(module.operation):
            name = op.name
            if name in _PASS_THROUGH or _call_target(op) in _PASS_THROUGH_CALLS:
                op.results[0].replace_all_uses_with(op.operands[0])
                op.erase()
            elif name in _DROPPED:
                op.erase()
            else:
                for attr in _SHARDING_ATTRS:
                    if attr in op.attributes:
                        del op.attributes[attr]
                if name == "func.func":
                    _strip_arg_attrs(op, "arg_attrs")
                    _strip_arg_attrs(op, "res_attrs")
        return module.operation.get_asm(enable_debug_info=True)


def _call_target(op: ir.Operation) -> str | None:
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _op_label(op: ir.Operation) -> str:
    target = _call_target(op)
    return f"custom_call @{target}" if target else op.name


def _strip_arg_attrs(func: ir.Operation, key: str) -> None:
    """Drop the sharding entries of each argument's (or result's) attribute dictionary."""
    if key not in func.attributes:
        return
    kept = []
    for d in ir.ArrayAttr(func.attributes[key]):
        entries = ir.DictAttr(d)
        kept.append(
            ir.DictAttr.get(
                {
                    entries[i].name: entries[i].attr
                    for i in range(len(entries))
                    if entries[i].name not in _SHARDING_ATTRS
                }
            )
        )
    func.attributes[key] = ir.ArrayAttr.get(kept)
