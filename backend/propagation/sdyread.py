"""Reading Shardy's attributes and walking a module by stable op tags.

Every op of the loaded module gets a discardable ``shardscope.op = N`` attribute before any
pass runs (N = its position in a pre-order walk, the same walk ``shardscope.backend.program.graph`` numbers
ops by). Passes clone, move and insert ops; the tag travels with each op, so what a pass
writes can be joined back to the program graph. A value is named by a ``ValueKey``:

- ``("res", tag, j)``: result ``j`` of the op tagged ``tag``;
- ``("arg", tag, r, j)``: argument ``j`` of the entry block of region ``r`` of that op
  (function arguments are region 0 of the ``func.func``);
- ``("fres", tag, j)``: result ``j`` of a function (its result attributes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from shardscope.backend.sharding.values import ValueSharding

if TYPE_CHECKING:
    from shardscope.backend.program.mlir import ModuleView

TAG = "shardscope.op"
ValueKey = tuple


def walk(op: ir.Operation) -> list[ir.Operation]:
    """Every op nested in ``op`` (not ``op`` itself), pre-order, in block order."""
    out: list[ir.Operation] = []
    append = out.append
    advance = ir.WalkResult.ADVANCE

    def visit(child: ir.Operation) -> ir.WalkResult:
        append(child)
        return advance

    # MLIR's own walk: building region, block and op-view objects for a Python-side
    # recursion costs about twice as much in these bindings.
    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out[1:]


def tag_of(op: ir.Operation) -> int | None:
    """The ``shardscope.op`` tag of ``op``, or None for an op a pass inserted."""
    tag = op.attributes.get(TAG)
    return None if tag is None else ir.IntegerAttr(tag).value


def region_index(block: ir.Block) -> int:
    """Which region of its parent op ``block`` belongs to."""
    parent = block.owner
    for r, region in enumerate(parent.regions):
        for b in region.blocks:
            if b == block:
                return r
    raise ValueError("block not found in its parent op")


def value_key(value: ir.Value) -> ValueKey | None:
    """The tag-based key of ``value``; None when its defining op has no tag."""
    if isinstance(value, ir.BlockArgument):
        block = value.owner
        tag = tag_of(block.owner)
        if tag is None:
            return None
        return ("arg", tag, region_index(block), value.arg_number)
    res = ir.OpResult(value)
    if res.owner.name == "sdy.data_flow_edge":
        # Uses of a loop/call result read it through its edge op: the value is the owner.
        return value_key(res.owner.operands[0])
    tag = tag_of(res.owner)
    if tag is None:
        return None
    return ("res", tag, res.result_number)


class Scan:
    """The ops of a module as it stands (pre-order) with their tags, and value keys.

    Valid until the module changes. Readers that visit the same module share one scan: a
    walk, a tag read per op and a ``value_key`` per operand each cost microseconds in
    these bindings, and a propagated transformer has thousands of ops. Keys of tagged ops'
    results are listed up front; other values (block arguments, results of inserted ops)
    are keyed on first use.
    """

    def __init__(self, root: ir.Operation) -> None:
        self.ops = walk(root)
        self.tags = [tag_of(op) for op in self.ops]
        keys: dict[ir.Value, ValueKey | None] = {}
        for op, tag in zip(self.ops, self.tags, strict=True):
            if tag is None or op.name == "sdy.data_flow_edge":
                continue
            for j, res in enumerate(op.results):
                keys[res] = ("res", tag, j)
        self._keys = keys

    def value_key(self, value: ir.Value) -> ValueKey | None:
        """``value_key(value)``, remembered for the life of the scan."""
        keys = self._keys
        if value in keys:
            return keys[value]
        key = keys[value] = value_key(value)
        return key


def axis_name(axis: ir.Attribute) -> str:
    """``x`` or, for a sub-axis, ``x:(pre)size``."""
    ref = sdy.AxisRefAttr(axis)
    info = ref.sub_axis_info
    if info is None:
        return ref.name
    sub = sdy.SubAxisInfoAttr(info)
    return f"{ref.name}:({sub.pre_size}){sub.size}"


# Attributes are uniqued per context and keep their context alive; the cache is emptied
# whenever a propagation starts in a fresh context, so old contexts are not kept around.
_CACHE: dict[ir.Attribute, object] = {}


def clear_cache() -> None:
    """Forget every attribute read so far (call when a new MLIR context takes over)."""
    _CACHE.clear()


def cached(attr: ir.Attribute, read: Callable[[ir.Attribute], object]) -> object:
    """``read(attr)``, once per distinct attribute (MLIR uniques attributes, so a
    transformer's thousands of equal shardings are read once)."""
    hit = _CACHE.get(attr)
    if hit is None:
        if len(_CACHE) > 100_000:
            _CACHE.clear()
        hit = _CACHE[attr] = read(attr)
    return hit


def read_sharding(attr: ir.Attribute) -> ValueSharding:
    """A ``#sdy.sharding<...>`` attribute as a ``ValueSharding``."""
    return cached(attr, _read_sharding)


def _read_sharding(attr: ir.Attribute) -> ValueSharding:
    sh = sdy.TensorShardingAttr(attr)
    dims = []
    closed = []
    for d in sh.dimension_shardings:
        dim = sdy.DimensionShardingAttr(d)
        dims.append(tuple(axis_name(a) for a in dim.axes))
        closed.append(bool(dim.is_closed))
    return ValueSharding(
        tuple(dims),
        tuple(closed),
        tuple(axis_name(a) for a in sh.replicated_axes),
        tuple(axis_name(a) for a in sh.unreduced_axes),
    )


def read_per_value(attr: ir.Attribute) -> list[ValueSharding]:
    """A ``#sdy.sharding_per_value<[...]>`` attribute, one sharding per result."""
    return cached(
        attr, lambda a: [read_sharding(s) for s in sdy.TensorShardingPerValueAttr(a).shardings]
    )


def dict_of(attr: ir.Attribute) -> dict[str, str]:
    """A dictionary attribute of strings (``sdy.sharding_origins``) as a dict."""
    return dict(cached(attr, _dict_items))


def _dict_items(attr: ir.Attribute) -> tuple[tuple[str, str], ...]:
    d = ir.DictAttr(attr)
    out = []
    for i in range(len(d)):
        named = d[i]
        out.append((named.name, ir.StringAttr(named.attr).value))
    return tuple(out)


@dataclass(frozen=True)
class Edge:
    """One entry of ``sdy.propagation_edges``: at ``step``, ``axis`` went source -> targets."""

    step: int
    axis: str
    source: str
    targets: tuple[str, ...]


_EDGE_ENTRY = re.compile(
    r'step-(\d+)|"([^"]+)"(?::\((\d+)\)(\d+))? = ((?:operand|result)-\d+) -> \[([^\]]*)\]'
)
_EDGE_REF = re.compile(r"(?:operand|result)-\d+")


def read_edges(attr: ir.Attribute) -> list[Edge]:
    """The entries of one ``#sdy.propagation_edges<...>`` attribute (see ``_read_edges``)."""
    return cached(attr, _read_edges)


def _read_edges(attr: ir.Attribute) -> list[Edge]:
    """The entries of one ``#sdy.propagation_edges<...>`` attribute.

    The attribute has no Python binding; its grammar is small and fixed
    (``{step-N = [{"axis" = operand-i -> [result-j, ...]}, ...]}``), so a scan for step
    headers and whole entries reads it exactly.
    """
    edges: list[Edge] = []
    step = -1
    for step_no, axis, pre, size, source, targets in _EDGE_ENTRY.findall(str(attr)):
        if step_no:
            step = int(step_no)
            continue
        if pre:
            axis = f"{axis}:({pre}){size}"
        edges.append(Edge(step, axis, source, tuple(_EDGE_REF.findall(targets))))
    return edges


def func_ops(module: ir.Module | ModuleView) -> list[ir.Operation]:
    """The ``func.func`` ops at the top of ``module``."""
    return [op.operation for op in module.body.operations if op.operation.name == "func.func"]


def func_name(op: ir.Operation) -> str:
    """The symbol name of a ``func.func``."""
    return ir.StringAttr(op.attributes["sym_name"]).value


def arg_attr(func: ir.Operation, key: str, name: str) -> list[ir.Attribute | None]:
    """Attribute ``name`` of each argument (``key="arg_attrs"``) or result (``res_attrs``)."""
    if key not in func.attributes:
        return []
    out: list[ir.Attribute | None] = []
    for d in ir.ArrayAttr(func.attributes[key]):
        dd = ir.DictAttr(d)
        out.append(dd[name] if name in dd else None)
    return out


def terminator(block: ir.Block) -> ir.Operation:
    """The last op of ``block``."""
    ops = block.operations
    return ops[len(ops) - 1].operation


def first_block(op: ir.Operation, region: int = 0) -> ir.Block:
    """The entry block of region ``region`` of ``op``."""
    return op.regions[region].blocks[0]
