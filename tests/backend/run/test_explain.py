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


PATTERNS = [
    "explain_pipeline_roll.py",
    "explain_halo_slice.py",
    "explain_rms_norm.py",
    "explain_moe.py",
    "explain_embedding.py",
    "explain_zero1.py",
]


def _causes(c):
    """Each operand's cause of a compiled collective."""
    return [t.cause for t in c.tensors] if c.tensors else [c.cause]


@pytest.mark.parametrize("file", PATTERNS)
def test_every_collective_of_a_pattern_has_a_cause_at_a_line_of_the_program(file):
    path = PROGRAMS / file
    result = _result(str(path))
    lines = path.read_text().splitlines()
    # As many collective operands of each kind as the compiler's own compile holds.
    own = read_collectives(compiled_text(loaded(str(path))))
    kinds: dict[str, int] = {}
    for c in own:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + c["operands"]
    got: dict[str, int] = {}
    for c in result.compiled_collectives:
        got[c.kind] = got.get(c.kind, 0) + c.operands
        assert c.cause is not None and c.cause.kind != "unknown", c.cause
        assert len(c.tensors) == c.operands
        for cause in _causes(c):
            assert cause.kind not in ("unknown", "combined"), cause.text
            assert Path(cause.file) == path and cause.line is not None, cause
            assert lines[cause.line - 1].strip(), cause
    assert got == kinds


def _compiled_text_of(file: str) -> str:
    return compiled_text(loaded(str(PROGRAMS / file)))


def test_a_roll_along_the_stage_axis_is_a_rotation_sent_across_devices():
    file = "explain_pipeline_roll.py"
    result = _result(str(PROGRAMS / file))
    lines = (PROGRAMS / file).read_text().splitlines()
    permutes = [c for c in result.compiled_collectives if c.kind == "collective-permute"]
    assert permutes and all(c.axes == ("stage",) for c in permutes)
    on_roll = [c for c in permutes if "jnp.roll" in lines[c.cause.line - 1]]
    (roll,) = on_roll
    assert roll.cause.kind == "shift"
    assert result.graph.ops[roll.cause.op].name == "stablehlo.concatenate"
    assert "dimension 0" in roll.cause.text and "stage" in roll.cause.text
    # The body of the scan runs once per tick: 4 of them.
    assert roll.runs_per_call == 4
    # ``out[-1]``: only the last stage holds it; an all-reduce over stage gives it to all.
    (last,) = [
        c
        for c in result.compiled_collectives
        if "out[-1]" in lines[c.cause.line - 1] and c.kind == "all-reduce"
    ]
    assert last.cause.kind == "select" and last.axes == ("stage",)


def test_a_slice_by_one_along_a_sharded_dimension_is_a_halo_exchange():
    file = "explain_halo_slice.py"
    result = _result(str(PROGRAMS / file))
    lines = (PROGRAMS / file).read_text().splitlines()
    (halo,) = [c for c in result.compiled_collectives if c.kind == "collective-permute"]
    assert halo.cause.kind == "shift" and halo.axes == ("seq",)
    assert "halo" in halo.cause.text
    op = result.graph.ops[halo.cause.op]
    text = lines[op.source_line - 1]
    assert op.name == "stablehlo.slice" and ("1:]" in text or ":-1]" in text)
    # The compiler's own compile holds a collective-permute for the same line.
    own = read_collectives(_compiled_text_of(file))
    assert any(c["kind"] == "collective-permute" and c["line"] == op.source_line for c in own)


def test_a_norm_reduced_where_its_operand_lies_shows_the_compiled_sharding():
    file = "explain_rms_norm.py"
    result = _result(str(PROGRAMS / file))
    lines = (PROGRAMS / file).read_text().splitlines()
    (norm,) = [
        c
        for c in result.compiled_collectives
        if c.axes == ("tensor",) and "jnp.square" in lines[c.cause.line - 1]
    ]
    cause = norm.cause
    assert cause.kind == "rule" and "reduces its dimension 2" in cause.text
    square = result.graph.values[cause.value]
    propagated = tuple(tuple(d) for d in result.values[cause.value].spec)
    assert cause.compiled is not None and cause.compiled != propagated
    assert cause.had == cause.compiled and cause.compiled[2] == ("tensor",)
    assert f"propagation: {spec_text(propagated)}" in cause.text
    assert f"compiled: {spec_text(cause.compiled)}" in cause.text
    # The compiler's own compile: the square's per-device shape is cut as ``compiled`` says.
    text = _compiled_text_of(file)
    local = {
        tuple(int(d) for d in m[1].split(","))
        for m in re.finditer(r"= f32\[([0-9,]+)\]\{[^}]*\} multiply\(%(\S+), %\2\)", text)
    }
    mesh = loaded(str(PROGRAMS / file)).mesh
    cut = tuple(
        n // math.prod(mesh[a] for a in axes)
        for n, axes in zip(square.shape, cause.compiled, strict=True)
    )
    assert cut in local, (cut, local)


def test_a_users_pmean_riding_a_combined_all_reduce_is_explained_per_operand():
    file = "explain_moe.py"
    path = PROGRAMS / file
    result = _result(str(path))
    lines = path.read_text().splitlines()
    pmean = next(i + 1 for i, t in enumerate(lines) if "pmean(" in t)
    (combined,) = [c for c in result.compiled_collectives if c.kind == "all-reduce"]
    assert combined.operands > 1 and combined.cause.kind == "combined"
    origins = {t.origin for t in combined.tensors}
    assert origins == {"user", "partitioner"} and combined.origin == "mixed"
    (user,) = [t for t in combined.tensors if t.origin == "user"]
    assert user.cause.kind == "user" and user.cause.line == pmean
    for t in combined.tensors:
        assert t.cause.text in combined.cause.text
    # Each operand's cause is in the JSON too.
    entry = next(e for e in result.to_json()["collectives"] if e["kind"] == "all-reduce")
    assert [t["cause"]["kind"] for t in entry["tensors"]] == [
        t.cause.kind for t in combined.tensors
    ]
    assert {t["origin"] for t in entry["tensors"]} == {"user", "partitioner"}


def test_backward_collectives_are_told_from_forward_ones():
    file = "explain_moe.py"
    result = _result(str(PROGRAMS / file))
    a2a = [c for c in result.compiled_collectives if c.kind == "all-to-all"]
    by_line: dict[int, set[str]] = {}
    for c in a2a:
        by_line.setdefault(c.cause.line, set()).add(c.cause.direction)
        assert {t.direction for t in c.tensors} == {c.cause.direction}
        assert ("backward" in c.cause.text) == (c.cause.direction == "backward")
    # The second all_to_all runs forward and, in the gradient, backward.
    assert {"forward", "backward"} in by_line.values()
    # JAX names the transpose's ops ``transpose(...)``: the compiler's own text agrees.
    assert "transpose(jvp())" in _compiled_text_of(file)


def test_an_embedding_lookup_from_a_vocabulary_sharded_table_is_a_selection():
    file = "explain_embedding.py"
    result = _result(str(PROGRAMS / file))
    (lookup,) = [c for c in result.compiled_collectives if c.axes == ("model",)]
    assert lookup.cause.kind == "select"
    assert result.graph.ops[lookup.cause.op].name == "stablehlo.gather"
    assert lookup.cause.had[0] == ("model",)


def test_a_reshard_over_part_of_an_axis_names_the_part():
    result = _result(str(PROGRAMS / "explain_zero1.py"))
    partial = [c for c in result.compiled_collectives if c.axes is None]
    assert partial, "the compiler's reshard to the parameters' sharding gathers over a sub-axis"
    for c in partial:
        assert c.cause.kind == "reshard" and "part of data" in c.cause.text


@pytest.mark.slow
def test_a_captured_pipeline_script_has_every_collective_explained_at_its_lines(tmp_path):
    import os
    import subprocess
    import sys

    from shardscope.app.cli.main import main
    from shardscope.backend.program.load import load_program
    from tests.support.inputs import REPO

    script = REPO / "tests" / "inputs" / "capture" / "pipeline_train.py"
    out = tmp_path / "capture.json"
    argv = ["capture", "--out", str(out), "--", sys.executable, str(script)]
    assert main(argv) == 0
    result = analyse(load_program(f"{out}#step"))
    # The plain run of the same script, its own compile written out.
    hlo = tmp_path / "plain.txt"
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    subprocess.run([sys.executable, str(script), str(hlo)], check=True, env=env, timeout=300)
    own: dict[str, int] = {}
    for c in read_collectives(hlo.read_text()):
        own[c["kind"]] = own.get(c["kind"], 0) + c["operands"]
    got: dict[str, int] = {}
    lines = script.read_text().splitlines()
    for c in result.compiled_collectives:
        got[c.kind] = got.get(c.kind, 0) + c.operands
        for cause in _causes(c):
            assert cause.kind != "unknown", cause.text
            assert Path(cause.file) == script and lines[cause.line - 1].strip(), cause
    assert got == own
    kinds = {cause.kind for c in result.compiled_collectives for cause in _causes(c)}
    assert {"shift", "rule"} <= kinds
