"""Layered layout of the program graph: rows without overlaps, feeders near their use."""

import itertools
from collections import defaultdict

import pytest

from shardscope.backend.program.layout import (
    NODE_W,
    Frame,
    FrameIndex,
    build_layout,
    default_expanded,
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
