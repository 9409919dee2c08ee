"""What the program graph view shows of a frame: its nodes, edges and scope boxes."""

from collections import Counter

from shardscope.backend.program.layout import (
    Frame,
    FrameIndex,
    build_layout,
    scope_paths,
)
from shardscope.backend.program.load import load_program
from tests.support.layouts import overlaps as _overlaps


def test_a_folded_scope_is_one_node_counting_the_ops_it_holds():
    graph = load_program("example:transformer").graph
    index = FrameIndex(graph)
    frame = Frame(graph.main)
    layout = build_layout(graph, frame, frozenset(), index=index)
    scopes = [n for n in layout.nodes if n.kind == "scope"]
    assert len(scopes) > 1 and all(n.enterable for n in scopes)
    held = Counter(layout.node_of_op.values())
    for n in scopes:
        count = held[layout.node_by_key(n.key)]
        assert n.count == count and n.detail == f"{count} ops"


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
