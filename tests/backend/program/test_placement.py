"""Placement of the program graph: rows without overlaps, feeders near their use, scopes
unfolding in place."""

from collections import defaultdict

import pytest

from shardscope.backend.program.layout import (
    Frame,
    FrameIndex,
    all_scopes,
    build_layout,
    default_expanded,
)
from shardscope.backend.program.load import list_examples, load_program
from shardscope.backend.program.placement import (
    NODE_H,
    NODE_W,
    X_PITCH,
    Y_PITCH,
    Edge,
    Node,
    place,
)
from tests.support.layouts import overlaps as _overlaps


def _layout(source, expanded=None):
    graph = load_program(source).graph
    index = FrameIndex(graph)
    frame = Frame(graph.main)
    if expanded is None:
        expanded = default_expanded(graph, index, frame)
    return graph, build_layout(graph, frame, expanded, index=index)


@pytest.mark.parametrize("source", [f"example:{n}" for n in list_examples()])
def test_no_two_nodes_of_a_row_overlap(source):
    assert _overlaps(_layout(source)[1]) == []


def test_a_folded_24_layer_transformer_has_no_overlaps():
    # Parameters read only by far-away ops are left out of the layering, which splits the
    # graph into pieces that igraph places independently.
    assert _overlaps(_layout("example:transformer?layers=24")[1]) == []


def test_a_bias_chain_sits_just_above_the_op_that_reads_it():
    graph, layout = _layout("example:mlp", expanded={"layer1", "layer2"})
    by_label = defaultdict(list)
    for node in layout.nodes:
        by_label[node.label].append(node)
    (b2,) = by_label["params['b2']"]
    add2 = next(n for n in by_label["add"] if n.scope == "layer2")
    # b2 -> broadcast -> broadcast -> add: three rows above the add, not at the top.
    assert add2.layer - b2.layer == 3
    assert b2.layer > 0


def _within(node, scope):
    return node.scope == scope or (node.scope or "").startswith(scope + "/")


def _moves(before, after, scope):
    """How each node outside ``scope`` moved between two layouts: {(dx, dy): count}."""
    pos = {n.key: (n.x, n.y) for n in before.nodes}
    moved = defaultdict(int)
    for n in after.nodes:
        if n.key in pos and not _within(n, scope):
            x, y = pos[n.key]
            moved[(round(n.x - x, 6), round(n.y - y, 6))] += 1
    return dict(moved)


@pytest.mark.parametrize(
    ("opened", "scope"),
    [
        ((), "transpose(jvp(layer_10))"),
        ((), "jvp(layer_3)"),
        (("jvp(layer_3)",), "jvp(layer_3)/attn"),
        (("sgd", "jvp(layer_3)", "jvp(layer_3)/attn"), "jvp(layer_3)/mlp"),
    ],
)
def test_unfolding_a_scope_moves_the_rest_down_rigidly_or_not_at_all(opened, scope):
    graph = load_program("example:transformer?layers=24").graph
    index = FrameIndex(graph)
    frame = Frame(graph.main)
    before = build_layout(graph, frame, frozenset(opened), index=index)
    after = build_layout(graph, frame, frozenset(opened) | {scope}, index=index)
    folded = before.nodes[before.node_by_key(f"scope:{scope}")]
    contents = [n for n in after.nodes if _within(n, scope)]
    assert len(contents) > 1
    moved = _moves(before, after, scope)
    still = moved.pop((0.0, 0.0))
    (((dx, dy), count),) = moved.items()  # one vector for every node that moved
    assert dx == 0.0 and dy > 0 and still > 0 and count > 0
    rows = {n.y for n in contents}
    # The contents fill the rows the moved nodes left, starting at the folded node's row.
    assert min(rows) == folded.y and max(rows) < folded.y + dy
    by_key = {n.key: n for n in after.nodes}
    for n in before.nodes:
        if n.key in by_key and n.y < folded.y:
            assert (by_key[n.key].x, by_key[n.key].y) == (n.x, n.y)
    assert _overlaps(after) == []


def test_a_fully_unfolded_24_layer_transformer_has_no_overlaps():
    graph = load_program("example:transformer?layers=24").graph
    index = FrameIndex(graph)
    frame = Frame(graph.main)
    everything = frozenset(all_scopes(graph, index, frame))
    layout = build_layout(graph, frame, everything, index=index)
    assert layout.in_place
    assert {n.kind for n in layout.nodes} == {"op", "input", "output"}
    assert _overlaps(layout) == []
    # every edge runs downwards from its source's row to its consumer's
    layer = [n.layer for n in layout.nodes]
    down = sum(layer[e.dst] > layer[e.src] for e in layout.edges)
    assert down / len(layout.edges) > 0.99


def test_a_diamond_is_placed_in_three_rows_with_its_middle_side_by_side():
    nodes = [Node(k, "op", k) for k in ("top", "left", "right", "bottom")]
    edges = [Edge(0, 1, (1,)), Edge(0, 2, (2,)), Edge(1, 3, (3,)), Edge(2, 3, (4,))]
    width, height = place(nodes, edges)
    assert [n.layer for n in nodes] == [0, 1, 1, 2]
    assert [n.y for n in nodes] == [0.0, Y_PITCH, Y_PITCH, 2 * Y_PITCH]
    assert abs(nodes[1].x - nodes[2].x) >= X_PITCH
    assert height == 2 * Y_PITCH + NODE_H and width >= X_PITCH + NODE_W
    for edge in edges:
        (x0, y0), (x1, y1) = edge.points[0], edge.points[-1]
        assert (x0, x1) == (nodes[edge.src].x, nodes[edge.dst].x) and y0 < y1
