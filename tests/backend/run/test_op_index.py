"""``op_index.OpIndex``: the program op an HLO op name names."""

from __future__ import annotations

from shardscope.backend.program.graph import ProgramGraph
from shardscope.backend.run.op_index import OpIndex
from tests.support.compile_oracle import loaded
from tests.support.inputs import PROGRAMS


def test_an_hlo_op_name_finds_the_op_in_a_body_by_its_ending():
    program = loaded(str(PROGRAMS / "run_collectives_nested.py"))
    graph: ProgramGraph = program.graph
    index = OpIndex(graph)
    op = next(o for o in graph.ops if o.location_name and "/" in o.location_name)
    assert index.find(f"jit(outer)/while/body/{op.location_name}", op.source_line) is not None
    assert index.find("jit(f)/no_such_op", None) is None


def test_a_reduction_is_found_before_the_constant_jax_made_for_it():
    # A sum's initial value is a constant with the sum's own name and line: the combined
    # all-reduce of run_collectives_nested names the sum, never the constant.
    program = loaded(str(PROGRAMS / "run_collectives_nested.py"))
    graph: ProgramGraph = program.graph
    index = OpIndex(graph)
    shared = [
        (c, r)
        for c in graph.ops
        if c.name == "stablehlo.constant" and c.location_name
        for r in graph.ops
        if r.name == "stablehlo.reduce"
        and (r.location_name, r.source_line) == (c.location_name, c.source_line)
    ]
    assert shared
    for _constant, reduce in shared:
        found = index.find(f"jit(outer)/{reduce.location_name}", reduce.source_line)
        assert graph.ops[found].name == "stablehlo.reduce"
