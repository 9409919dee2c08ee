"""Conflicts on Shardy's factors: the conflict example's add and matmul6's dots."""

from shardscope.backend.propagation.conflicts import (
    AXIS_USED,
    LONGEST_COMMON_PREFIX,
    Conflict,
    Proposal,
    Reshard,
    factor_axes,
    factor_name,
    settling_steps,
)
from shardscope.backend.propagation.timeline import Step, Timeline
from shardscope.backend.sharding.values import ValueSharding
from tests.support.compile_oracle import propagated


def test_conflict_example_reports_the_add():
    result = propagated("example:conflict")
    adds = [c for c in result.conflicts if c.op_name == "stablehlo.add"]
    assert len(adds) == 1
    c = adds[0]
    assert c.factor == "i" and c.dims == {"operand-0": [0], "operand-1": [0], "result-0": [0]}
    assert {p.axes for p in c.proposals} == {("data",), ("model",)}
    origins = {p.axes: p.origin for p in c.proposals}
    assert "(x, user)" in origins[("data",)] and "(y, user)" in origins[("model",)]
    assert c.kept == () and c.rule == LONGEST_COMMON_PREFIX
    assert {r.tensor for r in c.reshards} == {"operand-0", "operand-1"}
    # The partitioner's own reshard for it: y is moved onto data before the add.
    kinds = {x.kind for x in c.collectives}
    assert "collective_permute" in kinds
    assert c.to_json()["rule"] == LONGEST_COMMON_PREFIX


def test_matmul6_rows_rows_is_an_axis_used_by_another_factor():
    result = propagated("example:matmul6")
    graph = result.graph
    by_scope = {graph.ops[c.op].scope.split("/")[-1]: c for c in result.conflicts}
    assert by_scope["rows_rows"].rule == AXIS_USED
    assert by_scope["mismatch"].rule == LONGEST_COMMON_PREFIX
    assert "rows_cols" not in by_scope and "replicated" not in by_scope


def test_factor_axes_split_a_compound_dimension():
    # [ij] with i=4, j=8 holding data(4) then model(2): data goes to i, model to j.
    got = factor_axes(
        ((0, 1),), ValueSharding((("data", "model"),), (True,)), {"data": 4, "model": 2}, (4, 8)
    )
    assert got[0][0] == ("data",) and got[1][0] == ("model",)
    assert factor_name(0) == "i" and factor_name(18) == "z_1"


def test_conflict_json_renames_reshard_axes_and_nests_its_parts():
    proposal = Proposal("operand-0", 1, ("data",), "input: 0 (x, user)")
    reshard = Reshard("operand-1", 2, (0,), ("model",), (), "all_gather")
    c = Conflict(3, "stablehlo.add", "i", 8, {"operand-0": [0]}, [proposal], (), "r", [reshard])
    got = c.to_json()
    assert list(got) == [
        "op",
        "op_name",
        "factor",
        "factor_size",
        "dims",
        "proposals",
        "kept",
        "rule",
        "reshards",
        "collectives",
    ]
    assert got["proposals"] == [
        {"tensor": "operand-0", "value": 1, "axes": ["data"], "origin": "input: 0 (x, user)"}
    ]
    assert got["reshards"] == [
        {
            "tensor": "operand-1",
            "value": 2,
            "dims": [0],
            "from": ["model"],
            "to": [],
            "kind": "all_gather",
        }
    ]
    assert got["kept"] == [] and got["collectives"] == [] and got["dims"] == {"operand-0": [0]}


def test_settling_steps_at_the_op_or_the_last_step_into_its_tensors():
    result = propagated("example:conflict")
    graph = result.graph
    (add,) = [c for c in result.conflicts if c.op_name == "stablehlo.add"]
    # no axis crosses the add (it keeps nothing): the conflict is settled by step 0, which
    # brings data into the add's first operand
    assert settling_steps(result.conflicts, result.timeline, graph) == {0: [0]}
    assert result.timeline.steps[0].values[0] in graph.ops[add.op].operands
    # a later step across the op itself settles it there
    op = graph.ops[add.op]
    across = Step(7, add.op, "stablehlo.add", "data", "operand-0", ("result-0",), op.results)
    timeline = Timeline(steps=[*result.timeline.steps, across], initial={}, final={})
    assert settling_steps(result.conflicts, timeline, graph) == {7: [0]}
    # no step at all: no conflict is settled at any step
    assert settling_steps(result.conflicts, Timeline(steps=[], initial={}, final={}), graph) == {}
