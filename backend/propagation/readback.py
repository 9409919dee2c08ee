"""Reading a module through Shardy's passes back onto the program graph.

``ProgramIndex`` tags every op of the loaded module with its graph op id (ops keep the tag
through every pass) and maps value keys (``sdyread``) to graph value ids; ``read_state``
reads shardings, origins and the recorded propagation steps back by those ids;
``inline_calls`` inlines calls the way XLA does before Shardy runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Protocol, TypeAlias

from jaxlib.mlir import ir

from shardscope.backend.errors import ProgramError
from shardscope.backend.program.graph import ProgramGraph
from shardscope.backend.propagation import sdyread
from shardscope.backend.propagation.sdyread import ValueKey
from shardscope.backend.propagation.timeline import Step
from shardscope.backend.sharding.sdy_text import axes_in
from shardscope.backend.sharding.values import ValueSharding

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


class _Put(Protocol):
    def __call__(
        self,
        key: ValueKey | None,
        sharding: ValueSharding | None,
        origin: ir.Attribute | None = None,
    ) -> None: ...


class _StepsFrom(Protocol):
    def __call__(
        self,
        op_id: int | None,
        op_name: str,
        attr: ir.Attribute,
        resolve: Resolve,
        *,
        copy: bool = False,
    ) -> None: ...


class ProgramIndex:
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
            for j, vid in enumerate(graph.functions[name].arguments):
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
        # Filled by ``inline_calls``: the program op each later inlined copy of an op
        # stands for, and for each call op the keys of the values that replaced its results.
        self.copy_of: dict[int, int] = {}
        self.call_results: dict[int, list[tuple | None]] = {}

    def copy(self) -> ProgramIndex:
        """An index for a copy of the tagged module: the same tags, its own tables (what
        annotating and inlining the copy add stays out of this one)."""
        out = object.__new__(ProgramIndex)
        out.__dict__.update(self.__dict__)
        out.key_to_id = dict(self.key_to_id)
        out.canonical = dict(self.canonical)
        out.aliases = {k: list(v) for k, v in self.aliases.items()}
        out.copy_of = dict(self.copy_of)
        out.call_results = dict(self.call_results)
        return out

    def graph_op(self, tag: int | None) -> int | None:
        """The program op id of a tagged op: itself, or the op an inlined copy copies."""
        if tag is None or tag < 0:
            return None
        if tag < len(self.graph.ops):
            return tag
        return self.copy_of.get(tag)

    def is_copy(self, tag: int | None) -> bool:
        """Whether ``tag`` marks a later call site's inlined copy of a callee op."""
        return tag is not None and tag >= len(self.graph.ops) and tag in self.copy_of

    def alias_calls(self) -> None:
        """Values that inlining removes read another value's state.

        Each call's results read the values its own inlined copy returns. The callee's
        body is drawn once: its values (arguments included) read the first call site's
        copy, the one that kept the program's tags.
        """
        graph = self.graph
        done: set[str] = set()
        # The key a value reads: its own, or the one it was made an alias of (a callee's
        # argument passed on to a nested call reads the outer call's operand).
        read_from: dict[int, tuple] = {}

        def alias(key: tuple, vid: int) -> None:
            self.aliases.setdefault(key, []).append(vid)
            read_from[vid] = key

        for op in graph.ops:
            if op.callee is None or op.callee not in graph.functions:
                continue
            fn = graph.functions[op.callee]
            replaced = self.call_results.get(op.id)
            for j, vid in enumerate(op.results):
                if self.canonical.get(vid, ("",))[0] != "res":
                    continue
                if replaced is not None:
                    key = replaced[j] if j < len(replaced) else None
                    if key is not None:
                        alias(key, vid)
                elif j < len(fn.results):
                    alias(self.canonical[fn.results[j]], vid)
            if op.callee in done:
                continue
            done.add(op.callee)
            for j, vid in enumerate(graph.functions[op.callee].arguments):
                if j < len(op.operands):
                    operand = op.operands[j]
                    alias(read_from.get(operand, self.canonical[operand]), vid)

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
    def _ops(func: ir.Operation) -> Iterator[ir.Operation]:
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


def inline_calls(module: ir.Module, index: ProgramIndex) -> int:
    """Inline every ``func.call`` in place, as XLA's CallInliner does before Shardy runs.

    MLIR's own inliner does not inline StableHLO bodies, so each call gets a fresh copy of
    its callee's body. The first call of a callee (in program order) keeps the ops'
    ``shardscope.op`` tags; later copies get fresh tags (recorded in ``index.copy_of``)
    so that each call site keeps its own shardings, and ``index.call_results`` records
    which values replaced each call's results. Returns how many calls were inlined.
    """
    funcs = {sdyread.func_name(f): f for f in sdyread.func_ops(module)}
    # Only what the entry function runs: a callee's own body is dead once its calls are
    # inlined, and copies made into it would take the program's tags with them.
    entry = funcs[index.graph.main]
    calling = {
        name for name, f in funcs.items() if any(op.name == "func.call" for op in sdyread.walk(f))
    }
    i64 = ir.IntegerType.get_signless(64, context=module.context)
    first_done: set[str] = set()
    count = 0
    while True:
        calls = [op for op in sdyread.walk(entry) if op.name == "func.call"]
        if not calls:
            return count
        # Program order: real call ops (small tags) before calls inside later copies.
        calls.sort(key=lambda call: _order_key(sdyread.tag_of(call)))
        callees = [ir.FlatSymbolRefAttr(call.attributes["callee"]).value for call in calls]
        # Only a callee that itself calls can leave calls behind in the copies; without
        # one, this round inlines every call there is and another walk would find none.
        again = any(c in calling for c in callees)
        for call, callee in zip(calls, callees, strict=True):
            call_tag = sdyread.tag_of(call)
            program_call = call_tag is not None and index.graph_op(call_tag) == call_tag
            copy = funcs[callee].clone(ip=ir.InsertionPoint.at_block_begin(module.body))
            block = sdyread.first_block(copy)
            ret = sdyread.terminator(block)
            moved = []
            for op in list(block.operations):
                op = op.operation
                if op == ret:
                    break
                op.move_before(call)
                moved.append(op)
            keep_tags = program_call and callee not in first_done
            first_done.add(callee)
            if not keep_tags:
                for top in moved:
                    for op in [top, *sdyread.walk(top)]:
                        tag = sdyread.tag_of(op)
                        if tag is None or tag < 0:
                            continue
                        fresh = index.next_tag
                        index.next_tag += 1
                        index.copy_of[fresh] = index.graph_op(tag)
                        op.attributes[sdyread.TAG] = ir.IntegerAttr.get(i64, fresh)
            for arg, operand in zip(block.arguments, call.operands, strict=True):
                arg.replace_all_uses_with(operand)
            replaced = list(ret.operands)
            for res, value in zip(call.results, replaced, strict=True):
                res.replace_all_uses_with(value)
            if program_call:
                index.call_results[call_tag] = [sdyread.value_key(v) for v in replaced]
            call.erase()
            copy.erase()
            count += 1
        if not again:
            return count


def _order_key(tag: int | None) -> tuple[int, int]:
    return (1, 0) if tag is None else (0, tag)


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
    state: dict[int, ValueSharding] = {}
    origins: dict[int, dict[str, str]] = {}
    steps: list[Step] = []
    constraint_names: dict[int, str] = {}

    def put(
        key: ValueKey | None, sharding: ValueSharding | None, origin: ir.Attribute | None = None
    ) -> None:
        for vid in index.ids_for(key):
            if sharding is not None:
                state[vid] = sharding
            if origin is not None:
                origins[vid] = sdyread.dict_of(origin)

    def steps_from(
        op_id: int | None, op_name: str, attr: ir.Attribute, resolve: Resolve, *, copy: bool = False
    ) -> None:
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
            steps.append(
                Step(
                    e.step,
                    op_id,
                    op_name,
                    e.axis,
                    e.source,
                    e.targets,
                    tuple(values),
                    index.graph_id(src[0]) if src else None,
                )
            )

    for func in sdyread.func_ops(module):
        tag = sdyread.tag_of(func)
        if tag is None:
            continue
        block = sdyread.first_block(func)
        arg_or = sdyread.arg_attr(func, "arg_attrs", "sdy.sharding_origins") if debug else []
        for j, attr in enumerate(sdyread.arg_attr(func, "arg_attrs", "sdy.sharding")):
            origin = arg_or[j] if debug else None
            put(
                ("arg", tag, 0, j),
                sdyread.read_sharding(attr) if attr is not None else None,
                origin,
            )
        ret = sdyread.terminator(block)
        res_sh = sdyread.arg_attr(func, "res_attrs", "sdy.sharding")
        res_or = sdyread.arg_attr(func, "res_attrs", "sdy.sharding_origins") if debug else []
        res_edges = sdyread.arg_attr(func, "res_attrs", "sdy.propagation_edges") if debug else []
        for j, attr in enumerate(res_sh):
            put(
                ("fres", tag, j),
                sdyread.read_sharding(attr) if attr is not None else None,
                res_or[j] if j < len(res_or) else None,
            )
        for j, attr in enumerate(res_edges):
            if attr is None:
                continue
            operand = ret.operands[j]

            def resolve_fres(ref: str, j=j, operand=operand, tag=tag) -> list[tuple]:
                return [key_of(operand)] if ref.startswith("operand") else [("fres", tag, j)]

            steps_from(None, "func.return", attr, resolve_fres)

    for op, tag in zip(ops, tags, strict=True):
        name = op.name
        if scope == "annotations" and not name.startswith("sdy."):
            continue
        if name == "sdy.data_flow_edge":
            _read_edge_op(op, put, steps_from, index, graph, debug, key_of)
            continue
        if tag is None or tag < 0:
            continue
        attrs = op.attributes
        op_id = index.graph_op(tag)
        shown = name if op_id is not None else f"{name} (user)"
        get = attrs.get
        if name in ("sdy.sharding_constraint", "sdy.reshard"):
            sh = sdyread.read_sharding(attrs["sharding"])
            put(("res", tag, 0), sh, get("sdy.sharding_origins") if debug else None)
            origin_name = get("sdy.sharding_origin_name") if debug else None
            if origin_name is not None:
                vid = index.graph_id(("res", tag, 0))
                if vid is not None:
                    constraint_names[vid] = ir.StringAttr(origin_name).value
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
                put(("res", tag, j), sh, ors[j] if j < len(ors) else None)
                if name == "stablehlo.while":
                    put(("arg", tag, 0, j), sh)
                    put(("arg", tag, 1, j), sh)
        if name == "sdy.manual_computation" and debug:
            origin_name = get("sdy.sharding_origin_name")
            vid = index.graph_id(("res", tag, 0)) if op.results else None
            if origin_name is not None and vid is not None:
                constraint_names[vid] = ir.StringAttr(origin_name).value
        if name in ("sdy.named_computation", "sdy.manual_computation"):
            for key, attr_name in (("in_shardings", "arg"), ("out_shardings", "res")):
                if key in attrs:
                    for j, sh in enumerate(sdyread.read_per_value(attrs[key])):
                        put(("arg", tag, 0, j) if attr_name == "arg" else ("res", tag, j), sh)
        if not debug:
            continue
        edges_attr = get("sdy.propagation_edges")
        if edges_attr is not None:

            def resolve_op(ref: str, op=op, tag=tag) -> list[tuple]:
                kind, i = ref.rsplit("-", 1)
                if kind == "operand":
                    return [key_of(op.operands[int(i)])]
                return [("res", tag, int(i))]

            steps_from(op_id, shown, edges_attr, resolve_op, copy=index.is_copy(tag))
        if name in _DATA_FLOW_OPS:
            for attr_name, owner in (
                ("sdy.result_propagation_edges", "result"),
                ("sdy.block_arg_propagation_edges", "block_arg"),
            ):
                if attr_name not in attrs:
                    continue
                for j, edges in enumerate(ir.ArrayAttr(attrs[attr_name])):
                    resolve = functools.partial(_data_flow_ref, key_of, op, tag, owner, j)
                    steps_from(op_id, shown, edges, resolve, copy=index.is_copy(tag))
    steps.sort(key=lambda s: (s.index, s.axis, s.source))
    return state, origins, steps, constraint_names


def _read_edge_op(
    op: ir.Operation,
    put: _Put,
    steps_from: _StepsFrom,
    index: ProgramIndex,
    graph: ProgramGraph,
    debug: bool,
    key_of: KeyOf,
) -> None:
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
    key = key_of(owner)
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
        op_id = index.graph_op(tag)
        resolve = functools.partial(_data_flow_ref, key_of, parent, tag, kind, j)
        steps_from(
            op_id, parent.name, attrs["sdy.propagation_edges"], resolve, copy=index.is_copy(tag)
        )


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
