"""The program graph: ops, values, regions, scopes and sources of a StableHLO module.

Built with jaxlib's MLIR Python bindings from a parsed module. Ids are assigned in one
deterministic pre-order walk (the public ``main`` function first, then the other functions
in module order; within a function its arguments, then each op's results followed by the
contents of its regions), so the same module text always yields the same ids, and every
other part of shardscope (propagation, views, sessions) refers to values and ops by them.
"""

from __future__ import annotations

import difflib
import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from shardscope.backend.program.locations import (
    LocationReader,
    SourceInfo,
    scope_of,
    split_name_path,
)

ARG, RESULT, INTERMEDIATE = "arg", "result", "intermediate"

# Terminators close a region; they are edges to the region's results, not ops to draw.
_TERMINATORS = {"func.return", "stablehlo.return", "sdy.return", "mhlo.return"}
_SHARDING_ATTRS = ("sdy.sharding", "mhlo.sharding")
# JAX names the leaf of an nnx Variable ``model.w1.value`` (``jax.tree_util.keystr``,
# ``debug_info.arg_names``); shardscope names it by the user's path, ``model.w1``.
_VARIABLE_LEAF = ".value"


def name_forms(name: str) -> tuple[str, str]:
    """``name`` and the other name of the same argument: an nnx Variable's leaf with and
    without JAX's ``.value``."""
    if name.endswith(_VARIABLE_LEAF) and len(name) > len(_VARIABLE_LEAF):
        return name, name[: -len(_VARIABLE_LEAF)]
    return name, name + _VARIABLE_LEAF


@dataclass(slots=True)
class Value:
    """One SSA value: a function argument, an op result or a region argument."""

    id: int
    ssa: str
    shape: tuple[int, ...] | None
    dtype: str
    role: str
    function: str
    producer: int | None = None
    name: str | None = None
    display_name: str = ""
    arg_index: int | None = None
    result_index: int | None = None
    result_info: str | None = None
    code_sharding: str | None = None
    users: list[int] = field(default_factory=list)

    @property
    def rank(self) -> int:
        """Number of dimensions (0 for scalars and non-tensor values)."""
        return len(self.shape) if self.shape else 0


@dataclass(slots=True)
class Region:
    """One region of an op (a loop's cond or body, a case branch, a shard_map body)."""

    index: int
    arguments: list[int]
    ops: list[int]
    results: list[int]


@dataclass(slots=True)
class Op:
    """One operation, with its place in the program and in the user's source."""

    id: int
    name: str
    function: str
    operands: tuple[int, ...]
    results: tuple[int, ...]
    scope: str
    location_name: str | None
    source_file: str | None
    source_line: int | None
    parent: int | None = None
    regions: list[Region] = field(default_factory=list)
    callee: str | None = None
    code_sharding: str | None = None
    # A ``shard_map``'s in_specs: the sharding its code asks of each operand.
    operand_shardings: tuple[str, ...] = ()

    @property
    def dialect(self) -> str:
        """The dialect prefix of the op name: ``stablehlo``, ``sdy``, ``func``..."""
        return self.name.split(".", 1)[0]

    @property
    def short_name(self) -> str:
        """The op name without its dialect: ``add``, ``dot_general``, ``while``."""
        return self.name.split(".", 1)[-1]


@dataclass(slots=True)
class Function:
    """One ``func.func`` of the module."""

    name: str
    public: bool
    arguments: list[int]
    results: list[int]
    ops: list[int]


@dataclass(slots=True)
class ScopeNode:
    """A node of the name-scope tree: its direct ops and child scopes."""

    name: str
    path: str
    ops: list[int] = field(default_factory=list)
    children: dict[str, ScopeNode] = field(default_factory=dict)

    def op_count(self) -> int:
        """Ops in this scope and every scope below it."""
        return len(self.ops) + sum(child.op_count() for child in self.children.values())


class ProgramGraph:
    """Ops and values of one module, addressed by integer ids."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.values: list[Value] = []
        self.functions: dict[str, Function] = {}
        self.main: str = "main"
        self.meshes: dict[str, dict[str, int]] = {}

    @property
    def arguments(self) -> list[Value]:
        """The arguments of the entry function, in order."""
        return [self.values[i] for i in self.functions[self.main].arguments]

    @property
    def results(self) -> list[Value]:
        """The values the entry function returns, in order (one value may appear twice)."""
        return [self.values[i] for i in self.functions[self.main].results]

    def listing_key(self) -> Callable[[int], int]:
        """Sort key on value ids for the order listings show: the entry function's
        arguments by position, then its results by index, then the rest by id (the id
        order is definition order, where a loss computed first would come before
        ``result[0]``)."""
        order: dict[int, int] = {}
        main = self.functions[self.main]
        for vid in [*main.arguments, *main.results]:
            order.setdefault(vid, len(order))
        return lambda vid: order.get(vid, len(order) + vid)

    def io_names(self) -> list[str]:
        """What users call the entry function's arguments and results: ``x``,
        ``params['w1']``, ..., ``result[0]``, ..."""
        main = self.functions[self.main]
        names = [str(self.values[v].name) for v in main.arguments]
        return names + [f"result[{i}]" for i in range(len(main.results))]

    def value_by_name(self, name: str) -> Value | None:
        """An argument or result by its user-visible name (``params['w1']``, ``result[0]``);
        an nnx Variable's by the user's path (``model.w1``) or by JAX's (``model.w1.value``)."""
        for form in name_forms(name):
            for value in self.values:
                if value.name == form:
                    return value
        for index, vid in enumerate(self.functions[self.main].results):
            if name == f"result[{index}]":
                return self.values[vid]
        return None

    def close_names(self, name: str, count: int = 5) -> list[str]:
        """Argument and result names close to ``name`` (the first ones where none is)."""
        names = self.io_names()
        short = name_forms(name)[1] if name.endswith(_VARIABLE_LEAF) else name
        return difflib.get_close_matches(short, names, n=count, cutoff=0.5) or names[:count]

    def walk_ops(self, function: str | None = None) -> Iterator[Op]:
        """Every op, or every op of one function, in id order."""
        for op in self.ops:
            if function is None or op.function == function:
                yield op

    def scope_tree(self, function: str | None = None) -> ScopeNode:
        """Name scopes of one function (default: main) as a tree; ops sit at their scope."""
        function = function or self.main
        root = ScopeNode("", "")
        for op in self.ops:
            if op.function != function or op.parent is not None:
                continue
            node = root
            if op.scope:
                path = []
                for part in split_name_path(op.scope):
                    path.append(part)
                    node = node.children.setdefault(part, ScopeNode(part, "/".join(path)))
            node.ops.append(op.id)
        return root

    def source_files(self) -> list[str]:
        """The distinct source files that ops point to."""
        return sorted({op.source_file for op in self.ops if op.source_file})


class _Builder:
    def __init__(self) -> None:
        self.graph = ProgramGraph()
        self.value_ids: dict[ir.Value, int] = {}
        self.type_cache: dict[ir.Type, tuple[tuple[int, ...] | None, str]] = {}
        self.scope_cache: dict[str | None, str] = {}
        self.locations = LocationReader()
        self.asm: ir.AsmState | None = None

    # -- small cached readers -------------------------------------------------------------
    def type_info(self, t: ir.Type) -> tuple[tuple[int, ...] | None, str]:
        info = self.type_cache.get(t)
        if info is None:
            try:
                rt = ir.RankedTensorType(t)
                info = (tuple(rt.shape), str(rt.element_type))
            except ValueError:
                info = (None, str(t))
            self.type_cache[t] = info
        return info

    def source(self, location: ir.Location) -> tuple[SourceInfo, str]:
        """The location's source info and name scope, each read once per distinct value."""
        info = self.locations.read(location)
        scope = self.scope_cache.get(info.name)
        if scope is None:
            scope = self.scope_cache[info.name] = scope_of(info.name)
        return info, scope

    def new_value(self, v: ir.Value, role: str, function: str, producer: int | None) -> int:
        shape, dtype = self.type_info(v.type)
        vid = len(self.graph.values)
        ssa = v.get_name(self.asm) if self.asm is not None else f"%{vid}"
        self.graph.values.append(Value(vid, ssa, shape, dtype, role, function, producer))
        self.value_ids[v] = vid
        return vid

    # -- walk -----------------------------------------------------------------------------
    def build(self, module: ir.Module) -> ProgramGraph:
        funcs = []
        for op in module.body.operations:
            name = op.operation.name
            if name == "func.func":
                funcs.append(op)
            elif name == "sdy.mesh":
                self.read_mesh(op)
        if not funcs:
            raise ValueError("the module has no func.func")
        names = [ir.StringAttr(f.attributes["sym_name"]).value for f in funcs]
        main_index = names.index("main") if "main" in names else 0
        self.graph.main = names[main_index]
        order = [main_index] + [i for i in range(len(funcs)) if i != main_index]
        for i in order:
            self.function(funcs[i], names[i])
        self.finish()
        return self.graph

    def read_mesh(self, op: ir.OpView) -> None:
        name = ir.StringAttr(op.attributes["sym_name"]).value
        axes: dict[str, int] = {}
        text = str(op.attributes["mesh"])  # #sdy.mesh<["data"=4, "model"=2], device_ids=[..]>
        body = text[text.find("[") + 1 : text.find("]")]
        for item in body.split(","):
            if "=" in item:
                axis, size = item.split("=")
                axes[axis.strip().strip('"')] = int(size)
        self.graph.meshes[name] = axes

    def function(self, func: ir.OpView, name: str) -> None:
        operation = func.operation
        self.asm = ir.AsmState(operation)
        public = True
        if "sym_visibility" in operation.attributes:
            public = ir.StringAttr(operation.attributes["sym_visibility"]).value == "public"
        block = operation.regions[0].blocks[0]
        arg_attrs = _dict_list(operation, "arg_attrs")
        res_attrs = _dict_list(operation, "res_attrs")
        fn = Function(name, public, [], [], [])
        self.graph.functions[name] = fn
        is_main = name == self.graph.main
        for index, arg in enumerate(block.arguments):
            vid = self.new_value(arg, ARG if is_main else INTERMEDIATE, name, None)
            fn.arguments.append(vid)
            value = self.graph.values[vid]
            value.arg_index = index
            key = self.source(arg.location)[0].name
            if is_main:
                value.name = key or f"arg{index}"
                value.display_name = value.name
            else:
                value.display_name = f"{name}: {value.ssa}"
            if index < len(arg_attrs):
                value.code_sharding = _sharding_of(arg_attrs[index])
        fn.ops, fn.results = self.block(block, name, None)
        for index, vid in enumerate(fn.results):
            value = self.graph.values[vid]
            if is_main:
                if value.role == INTERMEDIATE:
                    value.role = RESULT
                if value.result_index is None:
                    value.result_index = index
                    if value.name is None:
                        value.name = f"result[{index}]"
                        value.display_name = value.name
                if index < len(res_attrs):
                    attrs = res_attrs[index]
                    if "jax.result_info" in attrs and value.result_info is None:
                        value.result_info = ir.StringAttr(attrs["jax.result_info"]).value
                    sharding = _sharding_of(res_attrs[index])
                    if sharding and value.code_sharding is None:
                        value.code_sharding = sharding

    def block(self, block: ir.Block, function: str, parent: int | None):
        op_ids: list[int] = []
        results: list[int] = []
        for op in block.operations:
            operation = op.operation
            name = operation.name
            if name in _TERMINATORS:
                results = [self.value_ids[v] for v in operation.operands]
                continue
            op_ids.append(self.op(operation, name, function, parent))
        return op_ids, results

    def op(self, operation: ir.Operation, name: str, function: str, parent: int | None) -> int:
        oid = len(self.graph.ops)
        src, scope = self.source(operation.location)
        value_ids = self.value_ids
        operands = tuple([value_ids[v] for v in operation.operands])
        record = Op(
            oid,
            name,
            function,
            operands,
            (),
            scope,
            src.name,
            src.file,
            src.line,
            parent,
        )
        self.graph.ops.append(record)
        record.results = tuple(
            [self.new_value(r, INTERMEDIATE, function, oid) for r in operation.results]
        )
        attrs = operation.attributes
        if "callee" in attrs:
            record.callee = ir.FlatSymbolRefAttr(attrs["callee"]).value
        if name == "sdy.sharding_constraint":
            record.code_sharding = str(attrs["sharding"])
        elif name == "sdy.manual_computation":
            record.operand_shardings = _per_value(attrs, "in_shardings")
            for vid, text in zip(record.results, _per_value(attrs, "out_shardings"), strict=False):
                self.graph.values[vid].code_sharding = text
        else:
            for key in _SHARDING_ATTRS:
                if key in attrs:
                    record.code_sharding = _attr_text(attrs[key])
                    break
        if record.code_sharding:
            for vid in record.results:
                self.graph.values[vid].code_sharding = record.code_sharding
        regions = operation.regions
        if not len(regions):
            return oid
        for index, region in enumerate(regions):
            if not region.blocks:
                continue
            block = region.blocks[0]
            args = [self.new_value(a, INTERMEDIATE, function, oid) for a in block.arguments]
            ops, res = self.block(block, function, oid)
            record.regions.append(Region(index, args, ops, res))
        return oid

    def finish(self) -> None:
        values = self.graph.values
        for op in self.graph.ops:
            for vid in op.operands:
                values[vid].users.append(op.id)
        for value in values:
            if value.display_name:
                continue
            op = self.graph.ops[value.producer] if value.producer is not None else None
            prefix = op.scope if op is not None else ""
            prim = op.short_name if op is not None else value.function
            label = f"{prefix}/{prim}" if prefix else prim
            value.display_name = f"{label} {value.ssa}"
        _distinct_display_names(values, self.graph.main)


def _distinct_display_names(values: list[Value], main: str) -> None:
    """Make every display name name one value. SSA names restart in each function and
    region, so the same name can stand for several values: those outside the entry
    function are named with their function first (``relu: constant %cst``), and any name
    still shared gets ``(2)``, ``(3)``... on its later values, in id order."""
    by_name: dict[str, list[Value]] = {}
    for value in values:
        by_name.setdefault(value.display_name, []).append(value)
    for same in by_name.values():
        if len(same) < 2:
            continue
        for value in same:
            if value.function != main and not value.display_name.startswith(f"{value.function}: "):
                value.display_name = f"{value.function}: {value.display_name}"
    seen: dict[str, int] = {}
    for value in values:
        count = seen.get(value.display_name, 0) + 1
        seen[value.display_name] = count
        if count > 1:
            value.display_name = f"{value.display_name} ({count})"


def _per_value(attrs, key: str) -> tuple[str, ...]:
    """The shardings of a ``#sdy.sharding_per_value`` attribute, one text per value."""
    if key not in attrs:
        return ()
    return tuple(str(s) for s in sdy.TensorShardingPerValueAttr(attrs[key]).shardings)


def _dict_list(operation: ir.Operation, key: str) -> list[ir.DictAttr]:
    if key not in operation.attributes:
        return []
    return [ir.DictAttr(a) for a in ir.ArrayAttr(operation.attributes[key])]


def _attr_text(attr: ir.Attribute) -> str:
    try:
        return ir.StringAttr(attr).value
    except ValueError:
        return str(attr)


def _sharding_of(attrs: ir.DictAttr) -> str | None:
    for key in _SHARDING_ATTRS:
        if key in attrs:
            return _attr_text(attrs[key])
    return None


def build_graph(module: ir.Module) -> ProgramGraph:
    """Build the program graph of a parsed StableHLO module.

    The module must be parsed in a context with the StableHLO and Shardy dialects loaded
    (``shardscope.backend.program.mlir.new_context()``). Raises ``ValueError`` if it holds no function.
    """
    # Building allocates tens of thousands of small objects and frees none of them;
    # generational GC passes over them would find nothing to collect.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Builder().build(module)
    finally:
        if was_enabled:
            gc.enable()
