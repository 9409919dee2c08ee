"""``explain``: each compiled collective's cause, holder and runs per call, and XLA's
warnings on their ops, on real compiles (``propagate_compiled``) held against the
program's own ``jax.jit(...).lower(...).compile()`` (tests/support/compile_oracle)."""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import pytest

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.run.explain import spec_text
from tests.support.compile_oracle import compiled_text, loaded
from tests.support.inputs import PROGRAMS

EXAMPLES = ["attention", "conflict", "matmul6", "mlp", "scan", "transformer?layers=2"]
SHARD_MAP = ["compiled_shard_map_dp.py", "compiled_fsdp.py", "compiled_tensor_parallel.py"]
# What the user writes inside shard_map for each collective.
USER_CALLS = re.compile(r"\b(?:psum|psum_scatter|all_gather|ppermute|all_to_all)\(")


@functools.cache
def _result(source: str):
    return analyse(loaded(source))


def _dim_of(dims, axis: str) -> int | None:
    return next((i for i, d in enumerate(dims) if axis in d), None)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_examples_collectives_move_a_real_tensor_between_two_shardings(name):
    result = _result(f"example:{name}")
    assert result.compiled_collectives
    for c in result.compiled_collectives:
        assert c.cause is not None
        # A combined collective's operands are explained one by one.
        causes = [t.cause for t in c.tensors] if c.cause.kind == "combined" else [c.cause]
        assert len(causes) == (c.operands if c.cause.kind == "combined" else 1)
        for cause in causes:
            _moves_a_real_tensor(result, c, cause)


def _moves_a_real_tensor(result, c, cause) -> None:
    graph = result.graph
    assert cause is not None and cause.kind in ("conflict", "rule", "reshard"), c.name
    assert cause.value is not None and 0 <= cause.value < len(graph.values), c.name
    assert cause.tensor == graph.values[cause.value].display_name
    propagated = tuple(tuple(d) for d in result.values[cause.value].spec)
    assert cause.had == (cause.compiled or propagated)
    # The tensor is one the op reads or makes.
    op = graph.ops[cause.op]
    assert cause.value in (*op.operands, *op.results), c.name
    # Each axis the collective moves leaves the dimension it held in ``had``.
    assert c.axes
    for axis in c.axes:
        held = _dim_of(cause.had, axis)
        assert held is not None and held != _dim_of(cause.needed, axis), (c.name, axis)
    assert cause.provenance == cause.value
    assert spec_text(cause.had) in cause.text and cause.line is not None


def test_the_conflict_example_explains_each_collective_by_its_conflict():
    result = _result("example:conflict")
    # As many as the compiler's own compile of the program holds.
    expected = read_collectives(compiled_text(loaded("example:conflict")))
    assert len(result.compiled_collectives) == len(expected) > 0
    (conflict,) = result.conflicts
    moved = set()
    for c in result.compiled_collectives:
        assert c.cause.kind == "conflict" and c.cause.conflict == 0, c.cause.text
        assert c.cause.op == conflict.op
        # The tensor is one of the conflict's, gathered over the axes it proposed.
        (proposal,) = [p for p in conflict.proposals if p.value == c.cause.value]
        assert set(c.axes) == set(proposal.axes)
        moved.add(c.cause.value)
    assert moved == {p.value for p in conflict.proposals}


def test_a_partial_sum_is_explained_by_the_contracted_dimension():
    result = _result("example:mlp")
    (c,) = [c for c in result.compiled_collectives if c.kind == "all-reduce"]
    assert c.cause.kind == "rule" and "contracts" in c.cause.text
    op = result.graph.ops[c.cause.op]
    assert op.name == "stablehlo.dot_general" and c.cause.value in op.operands


def test_a_reshard_is_explained_by_the_constraint():
    result = _result(str(PROGRAMS / "compiled_explicit_reshard.py"))
    assert result.compiled_collectives
    for c in result.compiled_collectives:
        assert c.cause.kind == "reshard", c.cause.text
        op = result.graph.ops[c.cause.op]
        # The constraint's result has the sharding the collective makes.
        assert c.cause.needed == tuple(tuple(d) for d in result.values[op.results[0]].spec)


@pytest.mark.parametrize("file", SHARD_MAP)
def test_a_collective_written_in_shard_map_is_the_users_with_its_line(file):
    path = PROGRAMS / file
    result = _result(str(path))
    lines = path.read_text().splitlines()
    written = {i + 1 for i, text in enumerate(lines) if USER_CALLS.search(text)}
    got = set()
    assert result.compiled_collectives
    for c in result.compiled_collectives:
        assert c.origin == "user" and c.cause.kind == "user", c.name
        assert Path(c.cause.file).name == file and c.cause.line is not None
        got.add(c.cause.line)
        # Held by the shard_map op at top level.
        holder = result.graph.ops[c.holder]
        assert holder.name == "sdy.manual_computation" and holder.parent is None
    assert written <= got, (written, got)


def test_a_scan_body_collective_is_held_by_the_loop_and_runs_once_per_step():
    result = _result("example:scan")
    text = compiled_text(loaded("example:scan"))
    # The compiler's own trip count for the scan over the sequence.
    counts = {int(n) for n in re.findall(r'"known_trip_count":\{"n":"(\d+)"\}', text)}
    in_body = [c for c in result.compiled_collectives if c.computation != _entry(text)]
    assert in_body
    for c in in_body:
        holder = result.graph.ops[c.holder]
        assert holder.name == "stablehlo.while" and holder.parent is None
        assert c.runs_per_call in counts and c.runs_per_call == 16  # STEPS of the example


def test_nested_jit_checkpoint_and_loops_attribute_to_the_top_level_op():
    path = PROGRAMS / "run_collectives_nested.py"
    result = _result(str(path))
    graph = result.graph
    source = path.read_text().splitlines()
    scan_line = next(i + 1 for i, t in enumerate(source) if "lax.scan(" in t)
    fori_line = next(i + 1 for i, t in enumerate(source) if "fori_loop(" in t)
    held = {}
    for c in result.compiled_collectives:
        if c.holder is None:
            assert c.runs_per_call == 1
            continue
        holder = graph.ops[c.holder]
        assert holder.parent is None and holder.function == "main"
        held[holder.source_line] = c
    # The scan's body (a checkpoint around a nested jit) runs 3 times, the fori_loop's 2.
    assert (
        held[scan_line].runs_per_call
        == graph.values[graph.value_by_name("params['ws']").id].shape[0]
    )
    assert held[fori_line].runs_per_call == 2
    for c in held.values():
        assert graph.ops[c.holder].name == "stablehlo.while"
        assert c.cause.kind == "rule" and c.cause.value is not None


def test_nested_loops_multiply_and_a_nested_jit_is_held_by_its_call():
    result = _result(str(PROGRAMS / "explain_loops.py"))
    graph = result.graph
    by_runs = {c.runs_per_call: c for c in result.compiled_collectives}
    # 2 outer steps of 3 inner ones.
    assert set(by_runs) == {1, 6}
    assert graph.ops[by_runs[6].holder].name == "stablehlo.while"
    call = graph.ops[by_runs[1].holder]
    assert call.name == "func.call" and call.callee == "project" and call.parent is None
    for c in result.compiled_collectives:
        assert c.cause.kind == "conflict" and c.cause.value is not None


def test_a_full_rematerialization_is_shown_on_its_op_with_the_bytes_gathered():
    program = loaded(str(PROGRAMS / "run_remat.py"))
    result = _result(str(PROGRAMS / "run_remat.py"))
    (warning,) = [w for w in result.xla_warnings if "rematerialization" in w.message]
    op = result.graph.ops[warning.op]
    assert op.name == "stablehlo.custom_call" and warning.line == op.source_line
    x = result.graph.value_by_name("x")
    pieces = math.prod(program.mesh.values())
    whole = math.prod(x.shape) * 4  # f32
    assert warning.bytes == whole - whole // pieces
    assert result.to_json()["xla_warnings"][0]["bytes"] == warning.bytes


def _entry(text: str) -> str:
    return re.search(r"^ENTRY %([\w.\-]+)", text, re.M)[1]
