"""Layered layout of the program graph: rows without overlaps, feeders near their use."""

import itertools
from collections import defaultdict

import pytest

from shardscope.backend.program.layout import (
    NODE_W,
    Frame,
    FrameIndex,
    all_scopes,
    build_layout,
    default_expanded,
    scope_paths,
)
from shardscope.backend.program.load import list_examples, load_program


def _layout(source, expanded=None):
    graph = load_program(source).graph
    index = FrameIndex(graph)
    frame = Frame(graph.main)
    if expanded is None:
        expanded = default_expanded(graph, index, frame)
    return graph, build_layout(graph, frame, expanded, index=index)


def _overlaps(layout):
    rows = defaultdict(list)
    for node in layout.nodes:
        rows[round(node.y)].append(node)
    out = []
    for row in rows.values():
        row.sort(key=lambda n: n.x)
        out += [(a.label, b.label) for a, b in itertools.pairwise(row) if b.x - a.x < NODE_W]
    return out


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


def test_one_scope_is_laid_out_alone_with_its_inputs_and_outputs():
    graph = load_program("example:transformer").graph
    index = FrameIndex(graph)
    frame = Frame(graph.main)
    scope = "jvp(layer_0)/attn"
    expanded = frozenset(scope_paths(graph, index, frame, scope))
    assert scope in expanded and "jvp(layer_0)" in expanded
    assert all(p.startswith(scope) for p in expanded - {"jvp(layer_0)"})
    layout = build_layout(graph, frame, expanded, index=index, within=scope)
    ops = [n for n in layout.nodes if n.kind == "op"]
    assert len(ops) > 20 and all(n.scope.startswith(scope) for n in ops)
    assert _overlaps(layout) == [] and not layout.in_place
    inside = {n.op for n in ops}
    # every input node is a value made outside the scope; constants outside stay hidden
    inputs = [n for n in layout.nodes if n.kind == "input"]
    assert inputs and all(graph.values[n.value].producer not in inside for n in inputs)
    assert all(
        graph.ops[graph.values[n.value].producer].name != "stablehlo.constant"
        for n in inputs
        if graph.values[n.value].producer is not None
    )
    # each output node is a value made inside and used outside (the block's result at least)
    outputs = [n for n in layout.nodes if n.kind == "output"]
    assert outputs and all(graph.values[n.value].producer in inside for n in outputs)
    assert all(any(u not in inside for u in graph.values[n.value].users) for n in outputs)
    whole = build_layout(graph, frame, expanded, index=index)
    assert len(whole.nodes) > len(layout.nodes)
