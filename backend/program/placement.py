"""Where the visible nodes of a frame go: layers, columns and the route of each edge.

Placement is igraph's Sugiyama layout with two additions of its own: feeders (inputs,
constants and the chains they head) sit just above their first reader, and edges that
skip many layers stay out of the crossing reduction. ``place_unfolding`` opens scopes
in place, moving the rest of the drawing rigidly, so that unfolding one scope keeps
everything else where it was.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

import igraph as ig
import numpy as np

NODE_W = 168.0
NODE_H = 46.0
X_PITCH = 200.0
Y_PITCH = 118.0
# Edges spanning more layers than this are drawn as curves outside the crossing reduction.
MAX_SPAN = 3


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


def place(nodes: list[Node], edges: list[Edge]) -> tuple[float, float]:
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


def place_unfolding(
    nodes: list[Node], edges: list[Edge], base: frozenset[str], expanded: frozenset[str]
) -> tuple[float, float]:
    """Lay out the frame with the scopes of ``base`` open, then open each other scope of
    ``expanded`` (parents first) in place: its contents, laid out on their own, take the
    folded node's place, centred under where it was, and everything from its layer down
    moves down by the height of the contents, all by the same amount. Nodes above a
    scope never move when it unfolds, nor do those below move sideways, so unfolding
    one scope keeps the rest of the drawing where it was."""
    unfolding = _Unfolding(nodes, edges, base)
    unfolding.place(list(unfolding.members), range(len(edges)), lambda col, _cols: col * X_PITCH)
    for path in sorted(expanded - base, key=lambda p: (p.count("/"), p)):
        unfolding.unfold(path)
    unfolding.finish()
    return _extent(nodes)


class _Unfolding:
    """Units (a node, or a scope folded into one) placed so far, and the layers of the
    units and of the edges' bends in one ``_Rows``, shifted as scopes open."""

    def __init__(self, nodes: list[Node], edges: list[Edge], base: frozenset[str]) -> None:
        self.nodes = nodes
        self.edges = edges
        self.parts = [_scope_parts(n) for n in nodes]
        self.unit_of = [
            _unit(node, parts, base) for node, parts in zip(nodes, self.parts, strict=True)
        ]
        self.edges_of: list[list[int]] = [[] for _ in nodes]
        for j, edge in enumerate(edges):
            self.edges_of[edge.src].append(j)
            self.edges_of[edge.dst].append(j)
        self.order = _program_order(nodes)
        self.rows = _Rows()
        self.unit_x: dict[str, float] = {}
        self.unit_row: dict[str, int] = {}
        self.members: dict[str, list[int]] = defaultdict(list)
        for i, unit in enumerate(self.unit_of):
            self.members[unit].append(i)
        # Per edge: its bends' x and the index of their first layer in ``rows``.
        self.route: list[tuple[list[float], int] | None] = [None] * len(edges)
        self.long = [False] * len(edges)

    def place(self, units: list[str], candidates, x_of) -> int:
        """Lay out ``units`` and route the unrouted ``candidates`` edges between two of
        them; returns the layers they take, with their layers and x set."""
        index = {u: k for k, u in enumerate(units)}
        unit_order = [min(self.order[i] for i in self.members[u]) for u in units]
        pairs: dict[tuple[int, int], int] = {}
        born: list[tuple[int, int]] = []
        for j in candidates:
            if self.route[j] is not None:
                continue
            s, d = self.unit_of[self.edges[j].src], self.unit_of[self.edges[j].dst]
            if s == d or s not in index or d not in index:
                continue
            pair = (index[s], index[d])
            born.append((j, pairs.setdefault(pair, len(pairs))))
        placed = _sugiyama(len(units), list(pairs), unit_order)
        top = min(placed.layers)
        for u, col, layer in zip(units, placed.columns, placed.layers, strict=True):
            self.unit_x[u] = x_of(col, placed.columns)
            self.unit_row[u] = self.rows.add([layer - top])
        for j, p in born:
            bends = placed.bends.get(p, [])
            xs = [x_of(col, placed.columns) for col, _ in bends]
            self.route[j] = (xs, self.rows.add([lay - top for _, lay in bends]))
            self.long[j] = p in placed.long
        return max(placed.layers) - top + 1

    def unfold(self, path: str) -> None:
        """Open folded scope ``path`` in place, unless its parent is still folded."""
        key = f"scope:{path}"
        if key not in self.unit_x:
            return
        depth = path.count("/") + 1
        x, row = self.unit_x.pop(key), self.unit_row.pop(key)
        at = int(self.rows.rows[row])
        inside = self.members.pop(key)
        children: dict[str, None] = {}
        for i in inside:
            p = self.parts[i]
            unit = self.nodes[i].key if len(p) == depth else "scope:" + "/".join(p[: depth + 1])
            self.unit_of[i] = unit
            self.members[unit].append(i)
            children[unit] = None
        self.rows.rows[row] = -1  # the folded node's slot: it is gone
        candidates = sorted({j for i in inside for j in self.edges_of[i]})
        start = self.rows.size

        def x_of(col: float, cols: list[float]) -> float:
            return x + (col - (min(cols) + max(cols)) / 2) * X_PITCH

        height = self.place(list(children), candidates, x_of)
        self.rows.shift(at, height, start)
        self.rows.rows[start : self.rows.size] += at

    def finish(self) -> None:
        """Give every node its unit's position and every edge its route."""
        rows = self.rows.rows
        for i, node in enumerate(self.nodes):
            node.x = self.unit_x[self.unit_of[i]]
            node.layer = int(rows[self.unit_row[self.unit_of[i]]])
            node.y = node.layer * Y_PITCH
        for j, edge in enumerate(self.edges):
            xs, first = self.route[j] or ([], 0)
            bends = [(x, float(rows[first + k]) * Y_PITCH) for k, x in enumerate(xs)]
            _route(self.nodes, edge, bends, self.long[j])


def _unit(node: Node, parts: list[str], base: frozenset[str]) -> str:
    """What ``node`` is placed as while only ``base`` is open: itself, or its folded scope."""
    for k in range(1, len(parts) + 1):
        path = "/".join(parts[:k])
        if path not in base:
            return f"scope:{path}"
    return node.key
