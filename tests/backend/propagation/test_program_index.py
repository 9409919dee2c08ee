"""The module tagged like the program graph: value keys map to graph ids, calls are inlined
as XLA does before Shardy runs."""

from shardscope.backend.propagation import sdyread
from shardscope.backend.propagation.program_index import ProgramIndex, inline_calls
from shardscope.backend.propagation.propagate import prepare
from tests.support.compile_oracle import loaded


def test_calls_are_inlined_like_xla():
    prep = prepare(loaded("tests/inputs/corpus/cond_call.py"))
    assert "func.call" not in str(prep.module)
    assert inline_calls(prep.module, prep.index) == 0
    assert prep.index.call_results  # each program call records what replaced its results


def test_every_op_is_tagged_with_its_graph_id_and_its_results_map_back():
    program = loaded("example:mlp")
    prep = prepare(program)
    graph = prep.graph
    tagged = {}
    for op in sdyread.walk(prep.module.operation):
        tag = sdyread.tag_of(op)
        if tag is not None and tag >= 0:
            tagged[tag] = op.name
    assert len(tagged) > len(graph.ops) // 2
    assert all(graph.ops[tag].name == name for tag, name in tagged.items())
    for op in graph.ops:
        for j, vid in enumerate(op.results):
            assert prep.index.graph_id(("res", op.id, j)) == vid
    main = graph.functions[graph.main]
    tag = prep.index.func_tag[graph.main]
    for j, vid in enumerate(main.arguments):
        assert prep.index.ids_for(("arg", tag, 0, j)) == [vid]


def test_a_copy_keeps_its_own_tables():
    prep = prepare(loaded("example:mlp"))
    copy = prep.index.copy()
    assert isinstance(copy, ProgramIndex)
    copy.copy_of[10**6] = 0
    copy.key_to_id[("res", 10**6, 0)] = 0
    assert 10**6 not in prep.index.copy_of and ("res", 10**6, 0) not in prep.index.key_to_id
    assert copy.graph_op(10**6) == 0 and prep.index.graph_op(10**6) is None
