"""The loaded module tagged like the program graph, and its calls inlined.

``ProgramIndex`` tags every op of the loaded module with its graph op id (ops keep the tag
through every pass) and maps value keys (``sdyread``) to graph value ids;
``inline_calls`` inlines calls the way XLA does before Shardy runs, giving later call
sites' copies tags of their own.
"""

from __future__ import annotations

from collections.abc import Iterator

from jaxlib.mlir import ir

from shardscope.backend.errors import ProgramError
from shardscope.backend.program.graph import ProgramGraph
from shardscope.backend.propagation import sdyread


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
            _inline_call(module, index, call, funcs[callee], callee in first_done)
            first_done.add(callee)
            count += 1
        if not again:
            return count


def _inline_call(
    module: ir.Module, index: ProgramIndex, call: ir.Operation, callee: ir.Operation, seen: bool
) -> None:
    """Replace ``call`` by a copy of ``callee``'s body. The copy keeps the program's tags
    when ``call`` is a program op and its callee was not ``seen`` inlined before; otherwise
    its ops get fresh tags."""
    call_tag = sdyread.tag_of(call)
    program_call = call_tag is not None and index.graph_op(call_tag) == call_tag
    copy = callee.clone(ip=ir.InsertionPoint.at_block_begin(module.body))
    block = sdyread.first_block(copy)
    ret = sdyread.terminator(block)
    moved = []
    for op in list(block.operations):
        op = op.operation
        if op == ret:
            break
        op.move_before(call)
        moved.append(op)
    if seen or not program_call:
        _retag(module, index, moved)
    for arg, operand in zip(block.arguments, call.operands, strict=True):
        arg.replace_all_uses_with(operand)
    replaced = list(ret.operands)
    for res, value in zip(call.results, replaced, strict=True):
        res.replace_all_uses_with(value)
    if program_call:
        index.call_results[call_tag] = [sdyread.value_key(v) for v in replaced]
    call.erase()
    copy.erase()


def _retag(module: ir.Module, index: ProgramIndex, moved: list[ir.Operation]) -> None:
    """Give each tagged op of ``moved`` (nested ops included) a fresh tag, recording in
    ``index.copy_of`` the program op it copies."""
    i64 = ir.IntegerType.get_signless(64, context=module.context)
    for top in moved:
        for op in [top, *sdyread.walk(top)]:
            tag = sdyread.tag_of(op)
            if tag is None or tag < 0:
                continue
            fresh = index.next_tag
            index.next_tag += 1
            index.copy_of[fresh] = index.graph_op(tag)
            op.attributes[sdyread.TAG] = ir.IntegerAttr.get(i64, fresh)


def _order_key(tag: int | None) -> tuple[int, int]:
    return (1, 0) if tag is None else (0, tag)
