"""How a cause is worded: where, a conflict, an op's rule."""

from __future__ import annotations

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.run.cause_words import conflict_text, rule_text, where_text
from shardscope.backend.run.moved_tensor import Found
from tests.support.compile_oracle import loaded


def test_where_names_the_line_and_a_backward_pass():
    assert where_text("dot_general", 10, "backward") == "dot_general (line 10, backward)"
    assert where_text("dot_general", 10, "forward") == "dot_general (line 10)"
    assert where_text("dot_general", None, "forward") == "dot_general"


def test_a_conflict_and_a_rule_are_worded_from_the_program():
    result = analyse(loaded("example:conflict")).propagation
    (conflict,) = result.conflicts
    text = conflict_text(result.conflicts, 0)
    assert text.startswith(f"conflict 0 on factor {conflict.factor} (")
    assert f"by {conflict.rule}" in text
    op = result.graph.ops[conflict.op]
    value = op.operands[0]
    found = Found(value, (("data",), ()), ((), ()), 0, "contract")
    assert rule_text(result.graph, op, found, {"data"}, compiled=False) == (
        f"{op.short_name} contracts its dimension 0, sharded there: each device sums its "
        f"part and the partial sums are added across devices"
    )
    assert "which XLA compiled sharded" in rule_text(result.graph, op, found, {"data"}, True)
