"""What the program graph view shows, and where: visible nodes, edges and a layered layout.

A ``Frame`` is what the view has entered: a function, or one region of an op (a loop body,
a case branch, a shard_map body). Within a frame, name scopes that are not expanded fold
into one node each, so a large program opens as a handful of scope nodes. Only what is
visible is laid out (igraph's Sugiyama layout), and a layout is a pure function of the
frame and the expansion state, so views cache it per expansion state.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

import igraph as ig
import numpy as np

from shardscope.backend.collector import paused_during
from shardscope.backend.natural_order import scope_order
from shardscope.backend.program.graph import Op, ProgramGraph
from shardscope.backend.program.locations import split_name_path

NODE_W = 168.0
NODE_H = 46.0
X_PITCH = 200.0
Y_PITCH = 118.0
HIDDEN_OPS = frozenset({"stablehlo.constant"})
# A frame with at most this many ops opens fully expanded; larger ones open collapsed.
EXPAND_ALL_BELOW = 80
# Edges spanning more layers than this are drawn as curves outside the crossing reduction.
MAX_SPAN = 3


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
class Node:
    """One visible box: an op, a folded scope, an input or the frame's return."""

    key: str
    kind: str  # "op" | "scope" | "input" | "output"
    label: str
    detail: str = ""
    op: int | None = None
    scope: str | None = None
    value: int | None = None
    count: int = 1
    enterable: bool = False
    x: float = 0.0
    y: float = 0.0
    layer: int = 0


@dataclass
class Edge:
    """Values flowing from one visible node to another, with the route's points."""

    src: int
    dst: int
    values: tuple[int, ...]
    points: list[tuple[float, float]] = field(default_factory=list)
    long: bool = False


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
    # Scopes beyond those the frame opens with unfold in place (``_place_unfolding``).
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
    members = set(ops)
    nodes: list[Node] = []
    node_index: dict[str, int] = {}
    node_of_op: dict[int, int] = {}
    scope_counts: dict[str, int] = defaultdict(int)

    def add(node: Node) -> int:
        if node.key not in node_index:
            node_index[node.key] = len(nodes)
            nodes.append(node)
        return node_index[node.key]

    for vid in index.frame_inputs(frame) if within is None else ():
        value = graph.values[vid]
        add(
            Node(
                f"in:{vid}", "input", value.display_name or value.ssa, _shape_text(value), value=vid
            )
        )

    hidden: set[int] = set()
    for op_id in ops:
        op = graph.ops[op_id]
        parts = scopes[op_id]
        folded = None
        for k in range(1, len(parts) + 1):
            path = "/".join(parts[:k])
            if path not in expanded:
                folded = path
                break
        if folded is not None:
            scope_counts[folded] += 1
            n = add(Node(f"scope:{folded}", "scope", folded.rsplit("/", 1)[-1], scope=folded))
            node_of_op[op_id] = n
            continue
        if op.name in HIDDEN_OPS and not show_constants:
            hidden.add(op_id)
            continue
        enterable = bool(op.regions) or bool(op.callee and op.callee in graph.functions)
        detail = _op_detail(graph, op)
        if parts:
            detail = f"{parts[-1]} · {detail}" if detail else parts[-1]
        label = f"call @{op.callee}" if op.callee else op.short_name
        node_of_op[op_id] = add(
            Node(
                f"op:{op_id}",
                "op",
                label,
                detail,
                op=op_id,
                scope="/".join(parts),
                enterable=enterable,
            )
        )
    for n in nodes:
        if n.kind == "scope":
            n.count = scope_counts[n.scope]
            n.detail = f"{n.count} ops"
            n.enterable = True

    results = index.frame_results(frame)
    if within is not None:
        leaving = _leaving(graph, index, frame, members, results)
        results = []
    out = (
        add(
            Node(
                "out", "output", "return", f"{len(results)} value{'s' if len(results) != 1 else ''}"
            )
        )
        if results
        else None
    )

    inputs = set(index.frame_inputs(frame))
    flows: dict[tuple[int, int], list[int]] = defaultdict(list)

    def source_of(vid: int) -> int | None:
        if vid in inputs and f"in:{vid}" in node_index:
            return node_index[f"in:{vid}"]
        value = graph.values[vid]
        producer = value.producer
        if producer is None:
            producer = index.region_arg_owner.get(vid)
        if producer is not None:
            top = index.ancestor_in(producer, frame, members)
            if top is not None:
                if top in hidden:
                    return None
                return node_of_op[top]
            elif within is not None and graph.ops[producer].name in HIDDEN_OPS:
                # a constant of the frame outside the scope: hidden, as in the whole frame
                if not show_constants:
                    return None
        # A value from outside the frame that the region captures (or, with ``within``,
        # from outside the scope).
        return add(
            Node(
                f"in:{vid}", "input", value.display_name or value.ssa, _shape_text(value), value=vid
            )
        )

    def add_flow(src: int | None, dst: int | None, vid: int) -> None:
        if src is None or dst is None or src == dst:
            return
        lst = flows[(src, dst)]
        if vid not in lst:
            lst.append(vid)

    for op_id in ops:
        dst = node_of_op.get(op_id)
        if dst is None:
            continue
        for sub in _subtree(graph, op_id):
            for vid in graph.ops[sub].operands:
                add_flow(source_of(vid), dst, vid)
    for vid in results:
        add_flow(source_of(vid), out, vid)
    if within is not None:
        for vid in leaving:
            value = graph.values[vid]
            src = source_of(vid)
            if src is None:
                continue
            stub = add(
                Node(
                    f"out:{vid}",
                    "output",
                    value.display_name or value.ssa,
                    _shape_text(value),
                    value=vid,
                )
            )
            add_flow(src, stub, vid)

    edges = [Edge(s, d, tuple(v)) for (s, d), v in flows.items()]
    boxes = _boxes(nodes, expanded, within)
    opened = default_expanded(graph, index, frame) if within is None else expanded
    base = expanded & opened
    if nodes and expanded - base:
        width, height = _place_unfolding(nodes, edges, base, expanded)
    else:
        width, height = _place(nodes, edges)
    return GraphLayout(
        frame,
        expanded,
        nodes,
        edges,
        boxes,
        node_of_op,
        width,
        height,
        len(ops),
        in_place=not opened and within is None,
    )


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


def _layers(n: int, edges: list[tuple[int, int]]) -> list[int] | None:
    """Longest-path layers, with feeders pulled down next to their first consumer.

    A feeder is a node all of whose predecessors are feeders (inputs and constants are,
    and so is a chain such as bias -> broadcast -> broadcast): it exists to feed later
    ops, so it sits one layer above the first op that reads it instead of at the top of
    the drawing. Returns None when the visible graph has a cycle (folded scopes can make
    one); igraph then breaks the cycle itself.
    """
    succ: list[list[int]] = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    for s, d in edges:
        succ[s].append(d)
        pred[d].append(s)
    layer = [0] * n
    remaining = [len(p) for p in pred]
    order = [i for i in range(n) if not remaining[i]]
    for i in order:  # grows while it is read: a topological order
        for j in succ[i]:
            layer[j] = max(layer[j], layer[i] + 1)
            remaining[j] -= 1
            if remaining[j] == 0:
                order.append(j)
    if len(order) != n:
        return None
    feeder = [False] * n
    for i in order:
        feeder[i] = all(feeder[p] for p in pred[i])
    for i in reversed(order):
        if feeder[i] and succ[i]:
            layer[i] = max(0, min(layer[j] for j in succ[i]) - 1)
    return layer


def _spread(coords: list[list[float]]) -> list[list[float]]:
    """Keep igraph's order within each layer but at least one unit apart.

    igraph places the components of a disconnected graph independently, and leaving
    long edges out of the layering disconnects it (a parameter read only far below), so
    vertices of different components can land on the same spot. A left-to-right sweep
    per layer pushes each vertex clear of the one before it.
    """
    rows: dict[float, list[int]] = defaultdict(list)
    for i, (_, y) in enumerate(coords):
        rows[y].append(i)
    out = [list(c) for c in coords]
    for members in rows.values():
        members.sort(key=lambda i: coords[i][0])
        for prev, cur in itertools.pairwise(members):
            out[cur][0] = max(out[cur][0], out[prev][0] + 1.0)
    return out


@dataclass
class _Sugiyama:
    """A layered placement of ``n`` vertices: a column and a layer each, and the bends
    of each edge that crosses layers (``(column, layer)`` per layer crossed)."""

    columns: list[float]
    layers: list[int]
    bends: dict[int, list[tuple[float, int]]]
    long: set[int]


def _sugiyama(n: int, pairs: list[tuple[int, int]], order: list[int]) -> _Sugiyama:
    """Sugiyama placement. Edges that skip many layers (a parameter read again by the
    optimizer, residuals kept for the backward pass) are left out of the crossing
    reduction, which would otherwise widen every layer they cross; they are drawn as
    curves between their end nodes (``long``). ``order`` is the program order of the
    vertices: an edge pointing back up it closes a cycle that folding scopes made and
    does not constrain the layering."""
    if not n:
        return _Sugiyama([], [], {}, set())
    forward = [i for i, (s, d) in enumerate(pairs) if order[s] < order[d]]
    layers = _layers(n, [pairs[i] for i in forward])
    if layers is not None:
        short = [i for i in forward if layers[pairs[i][1]] - layers[pairs[i][0]] <= MAX_SPAN]
    else:
        short = forward
    # Long-ish edges get one dummy vertex per layer they cross, added here rather than
    # by igraph so that each bend is known to belong to its edge.
    total = n
    ext_edges: list[tuple[int, int]] = []
    ext_layers = list(layers) if layers is not None else None
    chains: dict[int, list[int]] = {}
    for i in short:
        s, d = pairs[i]
        if ext_layers is None or layers[d] - layers[s] <= 1:
            ext_edges.append((s, d))
            continue
        chain = []
        prev = s
        for lay in range(layers[s] + 1, layers[d]):
            ext_layers.append(lay)
            chain.append(total)
            ext_edges.append((prev, total))
            prev = total
            total += 1
        ext_edges.append((prev, d))
        chains[i] = chain
    g = ig.Graph(n=total, edges=ext_edges, directed=True)
    layout = g.layout_sugiyama(layers=ext_layers, hgap=1, vgap=1, maxiter=40)
    coords = _spread(layout.coords)
    x0 = min(c[0] for c in coords)
    bends = {
        i: [(coords[k][0] - x0, int(round(coords[k][1]))) for k in chain]
        for i, chain in chains.items()
    }
    return _Sugiyama(
        [c[0] - x0 for c in coords[:n]],
        [int(round(c[1])) for c in coords[:n]],
        bends,
        set(range(len(pairs))) - set(short),
    )


def _program_order(nodes: list[Node]) -> list[int]:
    # Nodes are listed in program order; inputs come first whatever their index.
    return [-1 if n.kind == "input" else i for i, n in enumerate(nodes)]


def _place(nodes: list[Node], edges: list[Edge]) -> tuple[float, float]:
    """Lay out every visible node at once (``_sugiyama``)."""
    if not nodes:
        return 0.0, 0.0
    placed = _sugiyama(len(nodes), [(e.src, e.dst) for e in edges], _program_order(nodes))
    for node, x, layer in zip(nodes, placed.columns, placed.layers, strict=True):
        node.x = x * X_PITCH
        node.y = layer * Y_PITCH
        node.layer = layer
    for i, edge in enumerate(edges):
        bends = [(x * X_PITCH, lay * Y_PITCH) for x, lay in placed.bends.get(i, [])]
        _route(nodes, edge, bends, i in placed.long)
    return _extent(nodes)


def _route(nodes: list[Node], edge: Edge, bends: list[tuple[float, float]], long: bool) -> None:
    a, b = nodes[edge.src], nodes[edge.dst]
    edge.points = [(a.x, a.y + NODE_H / 2), *bends, (b.x, b.y - NODE_H / 2)]
    edge.long = long


def _extent(nodes: list[Node]) -> tuple[float, float]:
    xs = [n.x for n in nodes]
    return max(xs) - min(xs) + NODE_W, max(n.y for n in nodes) + NODE_H


class _Rows:
    """The layer of every placed unit and bend, in one array: unfolding a scope shifts
    every layer from the scope's own down by the height of its contents at once."""

    def __init__(self) -> None:
        self.rows = np.zeros(256, dtype=np.int64)
        self.size = 0

    def add(self, layers: list[int]) -> int:
        start = self.size
        end = start + len(layers)
        if end > len(self.rows):
            grown = np.zeros(max(end, 2 * len(self.rows)), dtype=np.int64)
            grown[:start] = self.rows[:start]
            self.rows = grown
        self.rows[start:end] = layers
        self.size = end
        return start

    def shift(self, at: int, by: int, end: int) -> None:
        """Move every layer from ``at`` down by ``by``, among the first ``end``."""
        rows = self.rows[:end]
        rows[rows >= at] += by


def _scope_parts(node: Node) -> list[str]:
    return node.scope.split("/") if node.kind in ("op", "scope") and node.scope else []


def _place_unfolding(
    nodes: list[Node], edges: list[Edge], base: frozenset[str], expanded: frozenset[str]
) -> tuple[float, float]:
    """Lay out the frame with the scopes of ``base`` open, then open each other scope of
    ``expanded`` (parents first) in place: its contents, laid out on their own, take the
    folded node's place, centred under where it was, and everything from its layer down
    moves down by the height of the contents, all by the same amount. Nodes above a
    scope never move when it unfolds, nor do those below move sideways, so unfolding
    one scope keeps the rest of the drawing where it was."""
    parts = [_scope_parts(n) for n in nodes]
    unit_of: list[str] = []
    for i, node in enumerate(nodes):
        unit = node.key
        for k in range(1, len(parts[i]) + 1):
            path = "/".join(parts[i][:k])
            if path not in base:
                unit = f"scope:{path}"
                break
        unit_of.append(unit)
    edges_of: list[list[int]] = [[] for _ in nodes]
    for j, edge in enumerate(edges):
        edges_of[edge.src].append(j)
        edges_of[edge.dst].append(j)
    order = _program_order(nodes)
    rows = _Rows()
    unit_x: dict[str, float] = {}
    unit_row: dict[str, int] = {}
    members: dict[str, list[int]] = defaultdict(list)
    # Per edge: its bends' x and the index of their first layer in ``rows``.
    route: list[tuple[list[float], int] | None] = [None] * len(edges)
    long = [False] * len(edges)

    def place(units: list[str], candidates, x_of) -> int:
        """Lay out ``units`` and route the unrouted ``candidates`` edges between two of
        them; returns the layers they take, with their layers and x set."""
        index = {u: k for k, u in enumerate(units)}
        unit_order = [min(order[i] for i in members[u]) for u in units]
        pairs: dict[tuple[int, int], int] = {}
        born: list[tuple[int, int]] = []
        for j in candidates:
            if route[j] is not None:
                continue
            s, d = unit_of[edges[j].src], unit_of[edges[j].dst]
            if s == d or s not in index or d not in index:
                continue
            pair = (index[s], index[d])
            born.append((j, pairs.setdefault(pair, len(pairs))))
        placed = _sugiyama(len(units), list(pairs), unit_order)
        top = min(placed.layers)
        for u, col, layer in zip(units, placed.columns, placed.layers, strict=True):
            unit_x[u] = x_of(col, placed.columns)
            unit_row[u] = rows.add([layer - top])
        for j, p in born:
            bends = placed.bends.get(p, [])
            xs = [x_of(col, placed.columns) for col, _ in bends]
            route[j] = (xs, rows.add([lay - top for _, lay in bends]))
            long[j] = p in placed.long
        return max(placed.layers) - top + 1

    for i, unit in enumerate(unit_of):
        members[unit].append(i)
    place(list(members), range(len(edges)), lambda col, _cols: col * X_PITCH)
    for path in sorted(expanded - base, key=lambda p: (p.count("/"), p)):
        key = f"scope:{path}"
        if key not in unit_x:
            continue  # its parent is folded
        depth = path.count("/") + 1
        x, row = unit_x.pop(key), unit_row.pop(key)
        at = int(rows.rows[row])
        inside = members.pop(key)
        children: dict[str, None] = {}
        for i in inside:
            p = parts[i]
            unit = nodes[i].key if len(p) == depth else "scope:" + "/".join(p[: depth + 1])
            unit_of[i] = unit
            members[unit].append(i)
            children[unit] = None
        rows.rows[row] = -1  # the folded node's slot: it is gone
        candidates = sorted({j for i in inside for j in edges_of[i]})
        start = rows.size

        def x_of(col: float, cols: list[float], x: float = x) -> float:
            return x + (col - (min(cols) + max(cols)) / 2) * X_PITCH

        height = place(list(children), candidates, x_of)
        rows.shift(at, height, start)
        rows.rows[start : rows.size] += at
    for i, node in enumerate(nodes):
        node.x = unit_x[unit_of[i]]
        node.layer = int(rows.rows[unit_row[unit_of[i]]])
        node.y = node.layer * Y_PITCH
    for j, edge in enumerate(edges):
        xs, first = route[j] or ([], 0)
        bends = [(x, float(rows.rows[first + k]) * Y_PITCH) for k, x in enumerate(xs)]
        _route(nodes, edge, bends, long[j])
    return _extent(nodes)
