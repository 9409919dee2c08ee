"""Reading a module through Shardy's passes back onto the program graph.

``read_state`` reads shardings, origins and the recorded propagation steps back by the
graph ids a ``ProgramIndex`` maps the module's tags to.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeAlias

from jaxlib.mlir import ir

from shardscope.backend.program.graph import ProgramGraph
from shardscope.backend.propagation import sdyread
from shardscope.backend.propagation.program_index import ProgramIndex
from shardscope.backend.propagation.sdyread import ValueKey
from shardscope.backend.propagation.timeline import Step
from shardscope.backend.sharding.sdy_text import axes_in
from shardscope.backend.sharding.values import ValueSharding

# ``propagate`` reads the index and the inliner from here with ``read_state``.

_DATA_FLOW_OPS = {
    "stablehlo.while",
    "stablehlo.case",
    "stablehlo.optimization_barrier",
    "sdy.named_computation",
    "sdy.manual_computation",
}

# The keys an edge's ``operand-i`` / ``result-j`` stands for.
Resolve: TypeAlias = Callable[[str], list[ValueKey | None]]
# ``sdyread.value_key``, or a ``Scan``'s that remembers what it found.
KeyOf: TypeAlias = Callable[[ir.Value], ValueKey | None]


def read_state(
    module: ir.Module,
    index: ProgramIndex,
    graph: ProgramGraph,
    *,
    debug: bool,
    scope: str = "all",
    scan: sdyread.Scan | None = None,
) -> tuple[dict[int, ValueSharding], dict[int, dict[str, str]], list[Step], dict[int, str]]:
    """Shardings (canonical graph ids) and, with ``debug``, origins, steps and constraint names.

    ``scope="annotations"`` reads function boundaries and ``sdy`` ops only (all an
    unpropagated module can hold); ``scope="io"`` reads function boundaries only.
    ``scan``: a ``sdyread.Scan`` of ``module`` as it stands, if the caller has one.
    """
    key_of: KeyOf
    if scope == "io":
        ops: list[ir.Operation] = []
        tags: list[int | None] = []
        key_of = sdyread.value_key
    elif scope == "annotations" and scan is None:
        ops = [op for op in sdyread.walk(module.operation) if op.name.startswith("sdy.")]
        tags = [sdyread.tag_of(op) for op in ops]
        key_of = sdyread.value_key
    else:
        scan = scan or sdyread.Scan(module.operation)
        ops, tags, key_of = scan.ops, scan.tags, scan.value_key
    reader = _Reader(index, debug, key_of)
    for func in sdyread.func_ops(module):
        reader.read_function(func)
    for op, tag in zip(ops, tags, strict=True):
        if scope == "annotations" and not op.name.startswith("sdy."):
            continue
        reader.read_op(op, tag)
    reader.steps.sort(key=lambda s: (s.index, s.axis, s.source))
    return reader.state, reader.origins, reader.steps, reader.constraint_names


class _Reader:
    """What ``read_state`` has read so far, by canonical graph value id."""

    def __init__(self, index: ProgramIndex, debug: bool, key_of: KeyOf) -> None:
        self.index = index
        self.debug = debug
        self.key_of = key_of
        self.state: dict[int, ValueSharding] = {}
        self.origins: dict[int, dict[str, str]] = {}
        self.steps: list[Step] = []
        self.constraint_names: dict[int, str] = {}

    def put(
        self,
        key: ValueKey | None,
        sharding: ValueSharding | None,
        origin: ir.Attribute | None = None,
    ) -> None:
        """Record the sharding and origin of every graph value ``key`` stands for."""
        for vid in self.index.ids_for(key):
            if sharding is not None:
                self.state[vid] = sharding
            if origin is not None:
                self.origins[vid] = sdyread.dict_of(origin)

    def steps_from(
        self,
        op_id: int | None,
        op_name: str,
        attr: ir.Attribute,
        resolve: Resolve,
        *,
        copy: bool = False,
    ) -> None:
        """Record a step per propagation edge of ``attr``; ``resolve`` maps its refs to keys."""
        index = self.index
        for e in sdyread.read_edges(attr):
            values: list[int] = []
            for t in e.targets:
                for key in resolve(t):
                    for vid in index.ids_for(key):
                        if vid not in values:
                            values.append(vid)
            if copy and not values:
                continue  # inside a later call site's copy of a callee: no value drawn
            src = resolve(e.source)
            source_id = index.graph_id(src[0]) if src else None
            self.steps.append(
                Step(e.step, op_id, op_name, e.axis, e.source, e.targets, tuple(values), source_id)
            )

    def read_function(self, func: ir.Operation) -> None:
        """A tagged function's argument and result shardings, origins and steps."""
        tag = sdyread.tag_of(func)
        if tag is None:
            return
        debug = self.debug
        arg_or = sdyread.arg_attr(func, "arg_attrs", "sdy.sharding_origins") if debug else []
        for j, attr in enumerate(sdyread.arg_attr(func, "arg_attrs", "sdy.sharding")):
            origin = arg_or[j] if debug else None
            self.put(("arg", tag, 0, j), _sharding_or_none(attr), origin)
        ret = sdyread.terminator(sdyread.first_block(func))
        res_sh = sdyread.arg_attr(func, "res_attrs", "sdy.sharding")
        res_or = sdyread.arg_attr(func, "res_attrs", "sdy.sharding_origins") if debug else []
        res_edges = sdyread.arg_attr(func, "res_attrs", "sdy.propagation_edges") if debug else []
        for j, attr in enumerate(res_sh):
            origin = res_or[j] if j < len(res_or) else None
            self.put(("fres", tag, j), _sharding_or_none(attr), origin)
        for j, attr in enumerate(res_edges):
            if attr is None:
                continue
            operand = ret.operands[j]

            def resolve_fres(ref: str, j=j, operand=operand, tag=tag) -> list[tuple]:
                return [self.key_of(operand)] if ref.startswith("operand") else [("fres", tag, j)]

            self.steps_from(None, "func.return", attr, resolve_fres)

    def read_op(self, op: ir.Operation, tag: int | None) -> None:
        """A tagged op's shardings, origins, constraint name and steps."""
        name = op.name
        if name == "sdy.data_flow_edge":
            self.read_edge_op(op)
            return
        if tag is None or tag < 0:
            return
        self._read_shardings(op, tag)
        if name in ("sdy.named_computation", "sdy.manual_computation"):
            self._read_computation(op, tag)
        if self.debug:
            self._read_steps(op, tag)

    def _read_shardings(self, op: ir.Operation, tag: int) -> None:
        name, get, debug = op.name, op.attributes.get, self.debug
        if name in ("sdy.sharding_constraint", "sdy.reshard"):
            sh = sdyread.read_sharding(op.attributes["sharding"])
            self.put(("res", tag, 0), sh, get("sdy.sharding_origins") if debug else None)
            self._name_constraint(op, tag)
        elif (sharding := get("sdy.sharding")) is not None:
            per = sdyread.read_per_value(sharding)
            ors = []
            if debug:
                origins_attr = get("sdy.result_sharding_origins")
                if origins_attr is None:
                    origins_attr = get("sdy.sharding_origins")
                if origins_attr is not None:
                    ors = list(ir.ArrayAttr(origins_attr))
            for j, sh in enumerate(per):
                self.put(("res", tag, j), sh, ors[j] if j < len(ors) else None)
                if name == "stablehlo.while":
                    self.put(("arg", tag, 0, j), sh)
                    self.put(("arg", tag, 1, j), sh)

    def _name_constraint(self, op: ir.Operation, tag: int) -> None:
        """With ``debug``, the name the user gave the constraint made by ``op``."""
        origin_name = op.attributes.get("sdy.sharding_origin_name") if self.debug else None
        if origin_name is None:
            return
        vid = self.index.graph_id(("res", tag, 0))
        if vid is not None:
            self.constraint_names[vid] = ir.StringAttr(origin_name).value

    def _read_computation(self, op: ir.Operation, tag: int) -> None:
        """A named or manual computation's in and out shardings (and a shard_map's name)."""
        attrs = op.attributes
        if op.name == "sdy.manual_computation" and op.results:
            self._name_constraint(op, tag)
        for key, attr_name in (("in_shardings", "arg"), ("out_shardings", "res")):
            if key in attrs:
                for j, sh in enumerate(sdyread.read_per_value(attrs[key])):
                    self.put(("arg", tag, 0, j) if attr_name == "arg" else ("res", tag, j), sh)

    def _read_steps(self, op: ir.Operation, tag: int) -> None:
        """The steps recorded on ``op`` itself and, on a data-flow op, on its results and
        block arguments."""
        attrs = op.attributes
        op_id = self.index.graph_op(tag)
        shown = op.name if op_id is not None else f"{op.name} (user)"
        copy = self.index.is_copy(tag)
        edges_attr = attrs.get("sdy.propagation_edges")
        if edges_attr is not None:
            key_of = self.key_of

            def resolve_op(ref: str) -> list[tuple]:
                kind, i = ref.rsplit("-", 1)
                if kind == "operand":
                    return [key_of(op.operands[int(i)])]
                return [("res", tag, int(i))]

            self.steps_from(op_id, shown, edges_attr, resolve_op, copy=copy)
        if op.name not in _DATA_FLOW_OPS:
            return
        for attr_name, owner in (
            ("sdy.result_propagation_edges", "result"),
            ("sdy.block_arg_propagation_edges", "block_arg"),
        ):
            if attr_name not in attrs:
                continue
            for j, edges in enumerate(ir.ArrayAttr(attrs[attr_name])):
                resolve = functools.partial(_data_flow_ref, self.key_of, op, tag, owner, j)
                self.steps_from(op_id, shown, edges, resolve, copy=copy)

    def read_edge_op(self, op: ir.Operation) -> None:
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
        sh = sdyread.read_sharding(attrs["sharding"]) if "sharding" in attrs else None
        if sh is not None and kind == "block_arg" and parent.name == "sdy.manual_computation":
            sh = _with_manual_axes(parent, j, sh)
        self.put(self.key_of(owner), sh, _edge_origin(attrs) if self.debug else None)
        if kind == "result" and parent.name == "stablehlo.while":
            self.put(("arg", tag, 0, j), sh)
            self.put(("arg", tag, 1, j), sh)
        if self.debug and "sdy.propagation_edges" in attrs:
            op_id = self.index.graph_op(tag)
            resolve = functools.partial(_data_flow_ref, self.key_of, parent, tag, kind, j)
            edges = attrs["sdy.propagation_edges"]
            self.steps_from(op_id, parent.name, edges, resolve, copy=self.index.is_copy(tag))


def _sharding_or_none(attr: ir.Attribute | None) -> ValueSharding | None:
    return sdyread.read_sharding(attr) if attr is not None else None


def _edge_origin(attrs) -> ir.Attribute | None:
    """A data-flow edge's origin: its one origins dict, or the first of an array of them."""
    origin = attrs["sdy.sharding_origins"] if "sdy.sharding_origins" in attrs else None
    if origin is not None and not isinstance(origin, ir.DictAttr):
        try:
            origin = ir.ArrayAttr(origin)[0]
        except ValueError:
            pass
    return origin


def _with_manual_axes(op: ir.Operation, j: int, local: ValueSharding) -> ValueSharding:
    """A shard_map body argument as the program sees it: the manual axes of its
    ``in_shardings`` entry (always major) followed by the free axes propagation gave it."""
    manual = (
        set(axes_in(str(op.attributes["manual_axes"]))) if "manual_axes" in op.attributes else set()
    )
    outer = sdyread.read_per_value(op.attributes["in_shardings"])[j]
    dims = tuple(
        tuple(a for a in od if a in manual) + tuple(ld)
        for od, ld in zip(outer.dims, local.dims, strict=False)
    )
    return local.with_dims(dims)


def _data_flow_ref(
    key_of: KeyOf, op: ir.Operation, tag: int, owner: str, j: int, ref: str
) -> list[ValueKey | None]:
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
        return [key_of(op.operands[j])]
    sources: list[ir.Value] = []
    if name == "stablehlo.while":
        sources = [op.operands[j], sdyread.terminator(sdyread.first_block(op, 1)).operands[j]]
    elif name == "stablehlo.optimization_barrier":
        sources = [op.operands[j]]
    else:
        sources = [sdyread.terminator(r.blocks[0]).operands[j] for r in op.regions if len(r.blocks)]
    if k < len(sources):
        return [key_of(sources[k])]
    return []
