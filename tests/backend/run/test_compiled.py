"""``propagate_compiled`` (through ``analyse``): the collectives XLA really emits, held against the program's
own ``jax.jit(...).lower(...).compile()`` on fake CPU devices (tests/support/compile_oracle)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.propagation.propagate import start_propagation
from shardscope.backend.run.cancel import RunCancelled
from shardscope.backend.run.compiled import (
    COMPILE_CANCELLED,
    MAX_CPU_DEVICES,
    PendingCompile,
    _AxesOf,
    propagate_compiled,
    start_compile,
)
from shardscope.backend.sharding.mesh import Mesh, parse_mesh
from tests.support.compile_oracle import compiled_text, jit_arguments, loaded
from tests.support.inputs import PROGRAMS

EXAMPLES = ["mlp", "conflict", "scan", "attention", "matmul6", "transformer"]
FILES = {
    "shard_map data parallel": "compiled_shard_map_dp.py",
    "FSDP": "compiled_fsdp.py",
    "tensor parallel": "compiled_tensor_parallel.py",
    "Explicit axes and reshard": "compiled_explicit_reshard.py",
    "scan, checkpoint, nested jit, combined all-reduce": "run_collectives_nested.py",
}


def _instructions(collectives) -> list[tuple[str, int]]:
    return sorted((c["kind"], c["operands"]) for c in collectives)


def _check(source: str) -> dict:
    program = loaded(source)
    result = analyse(program).to_json()
    expected = read_collectives(compiled_text(program))
    got = result["collectives"]
    assert _instructions(got) == _instructions(expected), source
    for c in got:
        assert len(c["tensors"]) == c["operands"], c
        for t in c["tensors"]:
            assert t["op"] is not None and t["line"] is not None, (source, c["name"], t)
    return result


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_examples_collectives_are_the_compiled_modules(name):
    result = _check(f"example:{name}")
    assert result["memory"]["argument"] > 0 and result["memory"]["peak"] > 0


@pytest.mark.parametrize("what", list(FILES))
def test_collectives_equal_the_compilers_own(what):
    result = _check(str(PROGRAMS / FILES[what]))
    origins = {c["origin"] for c in result["collectives"]}
    if what in ("shard_map data parallel", "FSDP", "tensor parallel"):
        # shard_map's psum, all_gather, psum_scatter: the user wrote them.
        assert origins == {"user"}, what
    else:
        # A reshard is a sharding the user asks for: the partitioner moves the data.
        assert origins == {"partitioner"}, what


def test_a_combined_all_reduce_names_each_tensors_op_and_line():
    result = _check(str(PROGRAMS / "run_collectives_nested.py"))
    combined = [c for c in result["collectives"] if c["operands"] > 1]
    assert combined
    for c in combined:
        assert len({t["op"] for t in c["tensors"]}) == c["operands"]
        # Each tensor says which prediction explains it.
        assert len(c["predicted"]) == c["operands"]
    assert all(p["matched"] for p in result["predicted_collectives"])


def test_a_prediction_no_compiled_collective_matches_is_flagged():
    # Shardy predicts collectives XLA's partitioner does not emit on this example
    # (counted in the same run), and says so on each of them.
    result = analyse(loaded("example:conflict")).to_json()
    explained = {r["index"] for c in result["collectives"] for r in c["predicted"]}
    for i, p in enumerate(result["predicted_collectives"]):
        if p["kind"] != "all_slice":
            assert p["matched"] == (i in explained)


def test_a_mesh_over_the_limit_gets_a_note_and_no_compile():
    program = loaded("example:mlp")
    side = MAX_CPU_DEVICES  # data x model = 2 * MAX_CPU_DEVICES devices
    result = analyse(program, {"data": side, "model": 2})
    assert result.compiled_collectives is None and result.memory is None
    note = [w for w in result.warnings if "compiled collectives" in w]
    assert len(note) == 1 and "smaller mesh" in note[0]


def test_a_mesh_in_another_device_order_lists_device_ids_as_jax_jit_does():
    import jax
    import numpy as np
    from jax.sharding import Mesh as JaxMesh
    from jax.sharding import NamedSharding

    from shardscope.backend.sharding.mesh import parse_mesh
    from shardscope.backend.sharding.spec import Spec

    order = [0, 2, 4, 6, 1, 3, 5, 7]
    program = loaded("example:mlp")
    mesh = parse_mesh("data=4,model=2", order)
    got = analyse(program, mesh).compiled_collectives
    # The compiler's own answer on the same devices in the same order.
    fn, args, _ = jit_arguments(program)
    jmesh = JaxMesh(np.array(jax.devices())[order].reshape(4, 2), ("data", "model"))
    leaves, tree = jax.tree.flatten(args)
    placed = []
    for a, name in zip(leaves, program.arg_names, strict=True):
        spec = program.specs.get(name)
        sharding = (
            NamedSharding(jmesh, Spec.from_json(spec).padded(a.ndim).to_jax()) if spec else None
        )
        placed.append(jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding))
    placed = jax.tree.unflatten(tree, placed)
    with jax.set_mesh(jmesh):
        compiled = jax.jit(fn).lower(*placed).compile()
    assignment = [d.id for d in compiled._executable.xla_executable.local_devices()]
    assert assignment == order
    expected = read_collectives(compiled.as_text(), assignment, 8)
    assert [c.device_groups for c in got] == [tuple(map(tuple, c["groups"])) for c in expected]
    # The groups are device ids, so they name the mesh axes they span.
    assert got and all(c.axes for c in got)


def test_device_groups_name_the_axes_they_span():
    mesh = Mesh.from_dict({"data": 2, "model": 2})
    spans = _AxesOf(mesh)
    assert spans.axes("all-reduce", ((0, 1), (2, 3))) == ("model",)
    assert spans.axes("all-reduce", ((0, 2), (1, 3))) == ("data",)
    assert spans.axes("all-gather", ((0, 1, 2, 3),)) == ("data", "model")
    assert spans.axes("all-reduce", ((0, 3), (1, 2))) is None
    assert spans.axes("collective-permute", ((0, 2), (2, 0), (1, 3), (3, 1))) == ("data",)


def _group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                members.append(int(entry.name))
    return members


@pytest.mark.parametrize("stage", ["importing", "given its module"])
def test_a_cancelled_compile_ends_its_worker_at_once(stage):
    pending = PendingCompile(8, 60.0)
    pid_file = pending._cancel._folder
    deadline = time.monotonic() + 30
    while (pid_file is None or not (pid_file / "pid").exists()) and time.monotonic() < deadline:
        time.sleep(0.01)
        pid_file = pending._cancel._folder
    group = int((pid_file / "pid").read_text())
    assert _group(group)
    if stage == "given its module":
        program = loaded("example:mlp")
        pending.give(start_propagation(program, keep_annotated=True).annotated_text)
    started = time.monotonic()
    pending.cancel()
    with pytest.raises(RunCancelled, match=COMPILE_CANCELLED):
        pending.report()
    assert time.monotonic() - started < 3.0
    assert _group(group) == []


def test_a_compile_started_before_the_load_gives_the_compilers_collectives():
    # The CLI starts the worker from --mesh before the program loads; the collectives are
    # those of the compiler's own compile on the program's mesh.
    started = start_compile(parse_mesh("data=4,model=2"), 120.0)
    assert started is not None and started.devices == 8
    program = loaded("example:mlp")
    result, outcome = propagate_compiled(program, {"data": 4, "model": 2}, started=started)
    expected = read_collectives(compiled_text(program))
    got = [c.to_json() for c in outcome.collectives]
    assert _instructions(got) == _instructions(expected)
    assert started.report()["ok"]


def test_a_compile_started_for_another_device_count_is_ended_and_a_fitting_one_used():
    started = start_compile(parse_mesh("data=2,model=2"), 120.0)
    program = loaded("example:mlp")
    result, outcome = propagate_compiled(program, {"data": 4, "model": 2}, started=started)
    with pytest.raises(RunCancelled):
        started.report()
    expected = read_collectives(compiled_text(program))
    # Compiled on the mesh's 8 devices, not the 4 the ended worker was started for.
    groups = [c.device_groups for c in outcome.collectives]
    assert groups == [tuple(map(tuple, c["groups"])) for c in expected]


def test_no_compile_starts_without_a_mesh_or_past_the_device_limit():
    assert start_compile(None, 10.0) is None
    assert start_compile(parse_mesh(f"data={MAX_CPU_DEVICES},model=2"), 10.0) is None
