"""What the program graph view shows, and where: visible nodes, edges and a layered layout.

A ``Frame`` is what the view has entered: a function, or one region of an op (a loop body,
a case branch, a shard_map body). Within a frame, name scopes that are not expanded fold
into one node each, so a large program opens as a handful of scope nodes. Only what is
visible is laid out (igraph's Sugiyama layout), and a layout is a pure function of the
frame and the expansion state, so views cache it per expansion state.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from shardscope.backend.collector import paused_during
from shardscope.backend.natural_order import scope_order
from shardscope.backend.program.graph import Op, ProgramGraph
from shardscope.backend.program.locations import split_name_path
from shardscope.backend.program.placement import Edge, Node, place, place_unfolding

HIDDEN_OPS = frozenset({"stablehlo.constant"})
# A frame with at most this many ops opens fully expanded; larger ones open collapsed.
EXPAND_ALL_BELOW = 80


@dataclass(frozen=True)
class Frame:
    """A function (``op is None``) or region ``region`` of op ``op``."""

    function: str
    op: int | None = None
    region: int = 0

    def key(self) -> str:
        """A stable JSON-able key: ``main`` or ``main/op12.r1``."""
        return self.function if self.op is None else f"{self.function}/op{self.op}.r{self.region}"

    @classmethod
    def from_key(cls, key: str) -> Frame:
        """Inverse of ``key``."""
        if "/op" not in key:
            return cls(key)
        function, rest = key.rsplit("/op", 1)
        op, region = rest.split(".r")
        return cls(function, int(op), int(region))

    def title(self, graph: ProgramGraph) -> str:
        """What a breadcrumb shows for this frame."""
        if self.op is None:
            return f"@{self.function}"
        op = graph.ops[self.op]
        names = region_names(op)
        return f"{op.short_name} {names[self.region] if self.region < len(names) else self.region}"


def region_names(op: Op) -> list[str]:
    """Human names of an op's regions (``cond``/``body`` for a while loop)."""
    if op.short_name == "while" and len(op.regions) == 2:
        return ["cond", "body"]
    if op.short_name == "case":
        return [f"branch {i}" for i in range(len(op.regions))]
    if op.short_name == "if" and len(op.regions) == 2:
        return ["then", "else"]
    return [f"region {i}" if len(op.regions) > 1 else "body" for i in range(len(op.regions))]


def main_region(op: Op) -> int:
    """The region a double-click enters: a loop's body, else the first."""
    return 1 if op.short_name == "while" and len(op.regions) == 2 else 0


@dataclass
class ScopeBox:
    """An expanded scope: the nodes it holds (for a group rectangle)."""

    path: str
    label: str
    nodes: list[int]
    depth: int


@dataclass
class GraphLayout:
    """The laid-out visible graph of one frame under one expansion state."""

    frame: Frame
    expanded: frozenset[str]
    nodes: list[Node]
    edges: list[Edge]
    boxes: list[ScopeBox]
    node_of_op: dict[int, int]
    width: float
    height: float
    frame_ops: int
    # Scopes beyond those the frame opens with unfold in place (``placement.place_unfolding``).
    in_place: bool = False

    def node_by_key(self, key: str) -> int | None:
        """Index of the node with ``key``, or None."""
        for i, node in enumerate(self.nodes):
            if node.key == key:
                return i
        return None


class FrameIndex:
    """Per-graph lookups the layout needs (built once per graph)."""

    def __init__(self, graph: ProgramGraph) -> None:
        self.graph = graph
        self.region_arg_owner: dict[int, int] = {}
        for op in graph.ops:
            for region in op.regions:
                for vid in region.arguments:
                    self.region_arg_owner[vid] = op.id

    def frame_ops(self, frame: Frame) -> list[int]:
        """Direct ops of a frame, in program order."""
        if frame.op is None:
            return [
                op.id
                for op in self.graph.ops
                if op.function == frame.function and op.parent is None
            ]
        op = self.graph.ops[frame.op]
        return list(op.regions[frame.region].ops) if frame.region < len(op.regions) else []

    def ancestor_in(self, op_id: int, frame: Frame, members: set[int]) -> int | None:
        """The op of the frame that is or contains ``op_id``, or None."""
        seen = 0
        while op_id is not None and seen < 10_000:
            if op_id in members:
                return op_id
            op_id = self.graph.ops[op_id].parent
            seen += 1
        return None

    def frame_inputs(self, frame: Frame) -> list[int]:
        if frame.op is None:
            return list(self.graph.functions[frame.function].arguments)
        return list(self.graph.ops[frame.op].regions[frame.region].arguments)

    def frame_results(self, frame: Frame) -> list[int]:
        if frame.op is None:
            return list(self.graph.functions[frame.function].results)
        return list(self.graph.ops[frame.op].regions[frame.region].results)


def relative_scopes(graph: ProgramGraph, ops: list[int]) -> dict[int, tuple[str, ...]]:
    """Each op's scope parts with the prefix common to all ops of the frame removed."""
    parts = {
        i: tuple(split_name_path(graph.ops[i].scope)) if graph.ops[i].scope else () for i in ops
    }
    # Hidden constants often sit in an outer scope; they must not shorten the prefix.
    values = [p for i, p in parts.items() if graph.ops[i].name not in HIDDEN_OPS] or list(
        parts.values()
    )
    common = 0
    if values and all(values):
        first = values[0]
        while common < len(first) and all(
            len(p) > common and p[common] == first[common] for p in values
        ):
            common += 1
    return {i: p[common:] if p[:common] == values[0][:common] else p for i, p in parts.items()}


def all_scopes(graph: ProgramGraph, index: FrameIndex, frame: Frame) -> list[str]:
    """Every scope path of a frame (relative, ``/``-joined), parents first."""
    ops = index.frame_ops(frame)
    paths: set[str] = set()
    for parts in relative_scopes(graph, ops).values():
        for k in range(1, len(parts) + 1):
            paths.add("/".join(parts[:k]))
    return sorted(paths, key=scope_order)


def default_expanded(graph: ProgramGraph, index: FrameIndex, frame: Frame) -> frozenset[str]:
    """Small frames open fully expanded; large ones open folded to top-level scopes."""
    ops = index.frame_ops(frame)
    if len(ops) <= EXPAND_ALL_BELOW:
        return frozenset(all_scopes(graph, index, frame))
    return frozenset()


@paused_during  # a large frame's layout makes ~10^5 objects that all live on
def build_layout(
    graph: ProgramGraph,
    frame: Frame,
    expanded: frozenset[str] | set[str],
    *,
    index: FrameIndex | None = None,
    show_constants: bool = False,
    within: str | None = None,
) -> GraphLayout:
    """Visible nodes and edges of ``frame`` with ``expanded`` scopes open, laid out.

    ``within`` (a scope path of the frame) lays out only that scope's ops: the values
    they take from elsewhere come in as input nodes, and each value they hand on (to an
    op outside the scope, or to the frame's return) leaves through an output node."""
    index = index or FrameIndex(graph)
    expanded = frozenset(expanded)
    ops = index.frame_ops(frame)
    scopes = relative_scopes(graph, ops)
    if within is not None:
        ops = [i for i in ops if _in_scope(scopes[i], within)]
    visible = _VisibleGraph(graph, index, frame, ops, within, show_constants)
    if within is None:
        for vid in index.frame_inputs(frame):
            visible.add_value(vid, "in", "input")
    visible.add_ops(scopes, expanded)
    results = index.frame_results(frame)
    leaving: list[int] = []
    if within is not None:
        leaving = _leaving(graph, index, frame, visible.members, results)
        results = []
    visible.connect(results, leaving)
    nodes = visible.nodes
    edges = [Edge(s, d, tuple(v)) for (s, d), v in visible.flows.items()]
    boxes = _boxes(nodes, expanded, within)
    opened = default_expanded(graph, index, frame) if within is None else expanded
    base = expanded & opened
    if nodes and expanded - base:
        width, height = place_unfolding(nodes, edges, base, expanded)
    else:
        width, height = place(nodes, edges)
    return GraphLayout(
        frame,
        expanded,
        nodes,
        edges,
        boxes,
        visible.node_of_op,
        width,
        height,
        len(ops),
        in_place=not opened and within is None,
    )


def _folded_scope(parts: tuple[str, ...], expanded: frozenset[str]) -> str | None:
    """The outermost scope of ``parts`` that is not expanded, or None."""
    for k in range(1, len(parts) + 1):
        path = "/".join(parts[:k])
        if path not in expanded:
            return path
    return None


class _VisibleGraph:
    """The nodes a frame shows, each added once by key, and the values flowing between
    them, gathered per (source node, destination node) pair."""

    def __init__(
        self,
        graph: ProgramGraph,
        index: FrameIndex,
        frame: Frame,
        ops: list[int],
        within: str | None,
        show_constants: bool,
    ) -> None:
        self.graph = graph
        self.index = index
        self.frame = frame
        self.ops = ops
        self.members = set(ops)
        self.within = within
        self.show_constants = show_constants
        self.inputs = set(index.frame_inputs(frame))
        self.nodes: list[Node] = []
        self.node_index: dict[str, int] = {}
        self.node_of_op: dict[int, int] = {}
        self.hidden: set[int] = set()
        self.flows: dict[tuple[int, int], list[int]] = defaultdict(list)

    def add(self, node: Node) -> int:
        """The index of the node with ``node``'s key, adding ``node`` if there is none."""
        if node.key not in self.node_index:
            self.node_index[node.key] = len(self.nodes)
            self.nodes.append(node)
        return self.node_index[node.key]

    def add_value(self, vid: int, prefix: str, kind: str) -> int:
        """A node standing for value ``vid`` itself: an input or an output stub."""
        value = self.graph.values[vid]
        name = value.display_name or value.ssa
        return self.add(Node(f"{prefix}:{vid}", kind, name, _shape_text(value), value=vid))

    def add_ops(self, scopes: dict[int, tuple[str, ...]], expanded: frozenset[str]) -> None:
        """A node per op, or per folded scope holding ops; hidden constants get none."""
        scope_counts: dict[str, int] = defaultdict(int)
        for op_id in self.ops:
            parts = scopes[op_id]
            folded = _folded_scope(parts, expanded)
            if folded is not None:
                scope_counts[folded] += 1
                label = folded.rsplit("/", 1)[-1]
                self.node_of_op[op_id] = self.add(
                    Node(f"scope:{folded}", "scope", label, scope=folded)
                )
            elif self.graph.ops[op_id].name in HIDDEN_OPS and not self.show_constants:
                self.hidden.add(op_id)
            else:
                self.node_of_op[op_id] = self.add(self._op_node(op_id, parts))
        for n in self.nodes:
            if n.kind == "scope":
                n.count = scope_counts[n.scope]
                n.detail = f"{n.count} ops"
                n.enterable = True

    def _op_node(self, op_id: int, parts: tuple[str, ...]) -> Node:
        graph = self.graph
        op = graph.ops[op_id]
        enterable = bool(op.regions) or bool(op.callee and op.callee in graph.functions)
        detail = _op_detail(graph, op)
        if parts:
            detail = f"{parts[-1]} · {detail}" if detail else parts[-1]
        label = f"call @{op.callee}" if op.callee else op.short_name
        scope = "/".join(parts)
        return Node(f"op:{op_id}", "op", label, detail, op=op_id, scope=scope, enterable=enterable)

    def connect(self, results: list[int], leaving: list[int]) -> None:
        """Flows into each op from what its operands come from, into the frame's return
        from its ``results``, and into an output stub for each ``leaving`` value."""
        out = None
        if results:
            plural = "s" if len(results) != 1 else ""
            out = self.add(Node("out", "output", "return", f"{len(results)} value{plural}"))
        for op_id in self.ops:
            dst = self.node_of_op.get(op_id)
            if dst is None:
                continue
            for sub in _subtree(self.graph, op_id):
                for vid in self.graph.ops[sub].operands:
                    self._flow(self._source_of(vid), dst, vid)
        for vid in results:
            self._flow(self._source_of(vid), out, vid)
        for vid in leaving:
            src = self._source_of(vid)
            if src is not None:
                self._flow(src, self.add_value(vid, "out", "output"), vid)

    def _source_of(self, vid: int) -> int | None:
        """The node value ``vid`` comes from, or None where that is hidden."""
        if vid in self.inputs and f"in:{vid}" in self.node_index:
            return self.node_index[f"in:{vid}"]
        producer = self.graph.values[vid].producer
        if producer is None:
            producer = self.index.region_arg_owner.get(vid)
        if producer is not None:
            top = self.index.ancestor_in(producer, self.frame, self.members)
            if top is not None:
                return None if top in self.hidden else self.node_of_op[top]
            if (
                self.within is not None
                and self.graph.ops[producer].name in HIDDEN_OPS
                and not self.show_constants
            ):
                # a constant of the frame outside the scope: hidden, as in the whole frame
                return None
        # A value from outside the frame that the region captures (or, with ``within``,
        # from outside the scope).
        return self.add_value(vid, "in", "input")

    def _flow(self, src: int | None, dst: int | None, vid: int) -> None:
        if src is None or dst is None or src == dst:
            return
        values = self.flows[(src, dst)]
        if vid not in values:
            values.append(vid)


def _in_scope(parts: tuple[str, ...], path: str) -> bool:
    joined = "/".join(parts)
    return joined == path or joined.startswith(path + "/")


def scope_paths(graph: ProgramGraph, index: FrameIndex, frame: Frame, path: str) -> list[str]:
    """``path``, the scopes around it and every scope under it: what is unfolded to lay
    out that scope fully open."""
    parts = path.split("/")
    around = ["/".join(parts[:k]) for k in range(1, len(parts))]
    inside = [p for p in all_scopes(graph, index, frame) if p == path or p.startswith(path + "/")]
    return around + inside


def _leaving(
    graph: ProgramGraph, index: FrameIndex, frame: Frame, members: set[int], results: list[int]
) -> list[int]:
    """Values made by ``members`` (or ops inside them) and used by an op of the frame
    outside them, or returned by the frame; in program order."""
    inside: set[int] = set()
    for op_id in members:
        inside.update(_subtree(graph, op_id))
    returned = set(results)
    out = []
    for op_id in sorted(members):
        for sub in _subtree(graph, op_id):
            for vid in graph.ops[sub].results:
                users = graph.values[vid].users
                if vid in returned or any(u not in inside for u in users):
                    out.append(vid)
    return out


def _subtree(graph: ProgramGraph, op_id: int) -> list[int]:
    out = [op_id]
    stack = [op_id]
    while stack:
        op = graph.ops[stack.pop()]
        for region in op.regions:
            out.extend(region.ops)
            stack.extend(region.ops)
    return out


def _shape_text(value) -> str:
    if value.shape is None:
        return value.dtype
    return f"{value.dtype}[{'x'.join(map(str, value.shape))}]" if value.shape else value.dtype


def _op_detail(graph: ProgramGraph, op: Op) -> str:
    if op.regions:
        names = region_names(op)
        return " · ".join(names)
    if op.results:
        return _shape_text(graph.values[op.results[0]])
    return ""


def _boxes(
    nodes: list[Node], expanded: frozenset[str], within: str | None = None
) -> list[ScopeBox]:
    """A box per expanded scope holding a visible op or folded scope; each node joins the
    box of every expanded prefix of its scope path. With ``within`` (a picture of one
    scope), a scope that holds no node of its own (only scopes) gets no box: it would
    frame its scopes' boxes again, or the whole picture; the boxes inside it are named by
    their path from the box around them (``jvp(layer_0)/attn``)."""
    members: dict[str, list[int]] = defaultdict(list)
    own: set[str] = set()
    for i, n in enumerate(nodes):
        if n.kind not in ("op", "scope") or not n.scope:
            continue
        parts = n.scope.split("/")
        deepest = None
        for k in range(1, len(parts) + 1):
            path = "/".join(parts[:k])
            if path in expanded:
                members[path].append(i)
                deepest = path
        own.add(deepest)
    paths = sorted(members, key=lambda p: (p.count("/"), p))
    if within is not None:
        paths = [p for p in paths if p in own]
    kept = set(paths)

    def label(path: str) -> str:
        if within is None:
            return path.rsplit("/", 1)[-1]
        parts = path.split("/")
        for k in range(len(parts) - 1, 0, -1):
            # the scope drawn is named by the picture's title
            if "/".join(parts[:k]) in kept or "/".join(parts[:k]) == within:
                return "/".join(parts[k:])
        return path

    return [ScopeBox(path, label(path), members[path], path.count("/")) for path in paths]
