"""Find: names and sharding queries, with counts, on real programs."""

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.layout import Frame, build_layout
from shardscope.backend.program.load import load_program
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.session.document import Session
from shardscope.backend.session.find import find, parse_query


@pytest.fixture(scope="module")
def conflict():
    program = load_program("example:conflict")
    session = Session()
    session.set_program(program)
    session.set_propagation(propagate(program))
    return session


@pytest.fixture(scope="module")
def mlp():
    return load_program("example:mlp").graph


def _labels(result, kind):
    return [m.label for m in result.matches if m.kind == kind]


def test_words_find_ops_scopes_named_tensors_and_callees_with_counts(mlp):
    result = find(mlp, "LAYER")
    scopes = {m.label: m.count for m in result.matches if m.kind == "scope"}
    # ops of each scope, counted as a folded scope's node counts them
    layout = build_layout(mlp, Frame(mlp.main), frozenset())
    expected = {n.label: n.count for n in layout.nodes if n.kind == "scope"}
    assert set(expected) == {"layer1", "layer2"}
    assert scopes == expected and all(n > 1 for n in expected.values())
    assert result.counts()["scope"] == 2 and result.summary() == "2 scopes"
    first = {m.label: mlp.ops[m.op] for m in result.matches}
    assert all(op.short_name != "constant" for op in first.values())

    dots = find(mlp, "dot_gen")
    assert _labels(dots, "op") == ["dot_general", "dot_general"]
    assert _labels(dots, "tensor") == []  # unnamed results: their ops are listed
    assert dots.summary() == "2 ops"

    relu = find(mlp, "relu")
    (callee,) = [m for m in relu.matches if m.kind == "callee"]
    calls = [op.id for op in mlp.ops if op.callee == "relu"]
    assert (callee.label, callee.count, callee.op) == ("@relu", len(calls), calls[0])
    assert _labels(relu, "op") == ["call @relu"] * len(calls)

    named = find(mlp, "params w")
    assert _labels(named, "tensor") == ["params['w1']", "params['w2']"]
    assert all(m.value is not None for m in named.matches)


def test_axis_lists_every_tensor_whose_shown_sharding_uses_it(conflict):
    graph = conflict.graph
    result = find(graph, "axis:model", spec_of=conflict.display_spec)
    expected = [
        v.display_name
        for v in graph.values
        if (v.producer is not None or v.role == "arg")
        and any("model" in d.axes for d in conflict.display_spec(v.id).dims)
    ]
    assert expected and _labels(result, "tensor") == expected
    assert {m.kind for m in result.matches} == {"tensor"}
    y = graph.value_by_name("y").id
    assert y in {m.value for m in result.matches}
    x = graph.value_by_name("x").id
    assert x not in {m.value for m in result.matches}  # x is sharded on data
    assert find(graph, "axis:model x", spec_of=conflict.display_spec).matches == []
    assert find(graph, "axis:nosuch", spec_of=conflict.display_spec).summary() == "no match"


def test_collective_and_conflict_filters_read_the_propagation_result(conflict):
    graph, result = conflict.graph, conflict.propagation
    add = next(op.id for op in graph.ops if op.short_name == "add")
    kinds = {c.kind for c in result.collectives}
    assert {"all_gather", "collective_permute"} <= kinds  # what the example predicts

    (hit,) = find(graph, "conflict", result=result).matches
    assert (hit.kind, hit.op) == ("op", add)
    permute = find(graph, "collective:collective-permute", result=result)
    assert [m.op for m in permute.matches] == [add]
    assert "collective_permute" in permute.matches[0].detail
    # an all-gather at the return: the returned tensor, under any spelling of the kind
    for spelling in ("collective:all-gather", "collective:all_gather", "COLLECTIVE:AllGather"):
        (gather,) = find(graph, spelling, result=result).matches
        returned = next(c.value for c in result.collectives if c.kind == "all_gather")
        assert (gather.kind, gather.value) == ("tensor", returned)
        assert "all_gather at the return" in gather.detail
    every = find(graph, "collective", result=result)
    assert every.counts()["op"] == 1 and every.counts()["tensor"] == 1
    assert find(graph, "collective:all-to-all", result=result).matches == []
    assert find(graph, "conflict").matches == []  # not propagated: nothing to list


def test_bad_queries_say_what_to_write_and_empty_ones_find_nothing(mlp):
    with pytest.raises(ShardscopeError, match="axis:NAME, collective"):
        find(mlp, "shape:4")
    with pytest.raises(ShardscopeError, match="axis:model"):
        parse_query("axis:")
    assert find(mlp, "   ").matches == []
    assert find(mlp, "zzzz").summary() == "no match"


def test_scopes_are_listed_in_natural_order():
    from shardscope.backend.program.layout import FrameIndex, all_scopes

    graph = load_program("example:transformer?layers=11").graph
    labels = [m.scope for m in find(graph, "layer_").matches if m.kind == "scope"]
    forward = [s for s in labels if s.startswith("jvp(") and "/" not in s]
    assert forward == [f"jvp(layer_{i})" for i in range(11)]
    backward = [s for s in labels if s.startswith("transpose(")]
    assert backward == [f"transpose(jvp(layer_{i}))" for i in range(11)]
    paths = all_scopes(graph, FrameIndex(graph), Frame(graph.main))
    tops = [p for p in paths if p.startswith("jvp(layer_") and "/" not in p]
    assert tops == [f"jvp(layer_{i})" for i in range(11)]
    # parents first, then each level in natural order
    assert paths.index("jvp(layer_10)") < paths.index("jvp(layer_2)/attn")
