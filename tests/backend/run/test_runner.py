"""Running programs for real on fake CPU devices, checked against jax itself.

Every built-in example runs once per module (shared by the tests). The expectations are
computed here, independently, with jax on 8 of the test process's own CPU devices: the
same seeded inputs placed with ``jax.device_put`` give the shards and index ranges each
device must hold, and the unsharded function gives the values.
"""

import runpy

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding

from shardscope.backend.errors import MeshError, ShardscopeError
from shardscope.backend.program.load import list_examples, load_program
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.run.dispatch import run_program
from shardscope.backend.run.inputs import input_data
from shardscope.backend.run.program_run import too_many_devices
from shardscope.backend.run.request import RunRequest
from shardscope.backend.run.shards import checksum, pooled
from shardscope.backend.sharding.mesh import Mesh as OurMesh
from shardscope.backend.sharding.spec import parse_spec
from tests.support.inputs import INPUTS, PROGRAMS
from tests.support.processes import gone_within

pytestmark = pytest.mark.slow
HOSTILE = INPUTS / "hostile"


@pytest.fixture(scope="module")
def runs():
    out = {}
    for name in list_examples():
        program = load_program(f"example:{name}")
        propagation = propagate(program) if name in ("mlp", "matmul6") else None
        out[name] = (program, run_program(program, propagation=propagation, runs=2))
    return out


def _jax_mesh(shape):
    devices = np.array(jax.devices()[: int(np.prod(list(shape.values())))])
    return Mesh(devices.reshape(tuple(shape.values())), tuple(shape))


def _ranges(index, shape):
    return tuple(tuple(s.indices(n)[:2]) for s, n in zip(index, shape, strict=True))


def test_every_example_runs(runs):
    assert set(runs) == set(list_examples())
    for program, result in runs.values():
        assert result.platform == "cpu"
        assert result.device_count == 8
        assert len(result.outputs) == len(program.result_names)
        assert [a.name for a in result.arguments] == program.arg_names
        assert result.compile_s > 0 and result.run_s > 0 and len(result.run_times) == 2
        assert result.memory["argument"] > 0


def test_argument_shards_equal_jax_device_put(runs):
    for program, result in runs.values():
        mesh = _jax_mesh(result.mesh)
        ns = runpy.run_path(program.path, run_name="__shardscope__")
        leaves = jax.tree.leaves((ns["EXAMPLE_ARGS"], ns.get("EXAMPLE_KWARGS") or {}))
        for i, (leaf, arg) in enumerate(zip(leaves, result.arguments, strict=True)):
            data = input_data(leaf, i)
            spec = parse_spec(arg.spec).padded(data.ndim).to_jax()
            placed = jax.device_put(data, NamedSharding(mesh, spec))
            expected = {
                s.device.id: (_ranges(s.index, data.shape), checksum(np.asarray(s.data)))
                for s in placed.addressable_shards
            }
            got = {s.device: (s.index, s.checksum) for s in arg.shards}
            assert got == expected, (program.name, arg.name)
            assert arg.max_rel_error == 0.0 and arg.replicas_match


def test_argument_specs_are_the_programs(runs):
    program, result = runs["mlp"]
    assert result.tensor("x").spec == "data,_"
    assert result.tensor("params['w1']").spec == "_,model"


def test_output_shards_hold_the_unsharded_values(runs):
    for name in ("mlp", "attention", "matmul6", "conflict", "scan"):
        program, result = runs[name]
        ns = runpy.run_path(program.path, run_name="__shardscope__")
        args = ns["EXAMPLE_ARGS"]
        leaves, tree = jax.tree.flatten(args)
        host = jax.tree.unflatten(tree, [input_data(leaf, i) for i, leaf in enumerate(leaves)])
        expected = jax.tree.leaves(jax.jit(ns["PROGRAM"])(*host))
        for out, want in zip(result.outputs, expected, strict=True):
            want = np.asarray(want)
            assert (
                out.max_rel_error is not None and out.max_rel_error < 1e-4
            )  # float32 sums in another order
            assert out.replicas_match
            covered = np.zeros(want.shape, dtype=bool)
            for shard in out.shards:
                piece = want[tuple(slice(a, b) for a, b in shard.index)]
                assert piece.shape == shard.shape
                covered[tuple(slice(a, b) for a, b in shard.index)] = True
                if shard.values is not None:
                    # large pieces come as block means (at most 64x64 of them)
                    np.testing.assert_allclose(
                        np.array(shard.values).reshape(shard.values_shape),
                        pooled(piece) if shard.pooled else piece,
                        rtol=1e-4,
                        atol=1e-4 * float(np.abs(want).max()),
                    )
            assert covered.all()


def test_compiled_collectives_equal_the_hlo_text(runs):
    for _, result in runs.values():
        text = result.hlo_text
        counts = {}
        for kind in (
            "all-gather",
            "all-reduce",
            "reduce-scatter",
            "all-to-all",
            "collective-permute",
        ):
            n = text.count(f" {kind}(")
            if n:
                counts[kind] = n
        assert result.kinds() == counts
    assert runs["mlp"][1].kinds() == {"all-reduce": 1}
    assert runs["transformer"][1].kinds() == {"all-reduce": 5}


def test_a_combined_collective_lists_each_operand(runs):
    combined = [c for c in runs["transformer"][1].collectives if c.operands > 1]
    assert len(combined) == 1
    assert len(combined[0].shapes) == combined[0].operands == len(combined[0].sources)


def test_collectives_have_groups_bytes_and_source(runs):
    (c,) = runs["mlp"][1].collectives
    assert c.kind == "all-reduce"
    assert c.device_groups == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert c.shape == (8, 16)
    assert c.bytes == 2 * 8 * 16 * 4 // 2  # a ring all-reduce over 2 devices
    assert c.source == "jit(mlp)/layer2/dot_general" and c.line == 14
    assert [p.kind for p in c.predicted] == ["all-reduce"]


def test_predicted_and_compiled_are_matched(runs):
    result = runs["matmul6"][1]
    matched = {c.source.split("/")[1] for c in result.collectives if c.predicted}
    assert matched == {"rows_rows", "contract"}
    unpredicted = {c.source.split("/")[1] for c in result.collectives if not c.predicted}
    assert unpredicted == {"mismatch", "contract_lhs"}
    assert {p.source.split("/")[1] for p in result.predicted_only} == {"contract_lhs", "mismatch"}


def test_the_json_form_has_the_documented_keys(runs):
    data = runs["mlp"][1].to_json()
    for key in (
        "platform",
        "device_count",
        "outputs",
        "arguments",
        "collectives",
        "warnings",
        "compile_s",
        "run_s",
        "memory",
    ):
        assert key in data
    out = data["outputs"][0]
    assert {"name", "shape", "spec", "shards", "max_rel_error"} <= set(out)
    assert {"device", "index", "checksum"} <= set(out["shards"][0])
    assert {"kind", "device_groups", "shape", "bytes", "source", "line", "predicted"} <= set(
        data["collectives"][0]
    )


def test_a_shard_map_programs_own_collectives_are_listed(tmp_path):
    src = (
        "from functools import partial\nimport jax\nimport jax.numpy as jnp\n"
        "from jax.sharding import PartitionSpec as P\n\n"
        "def f(x):\n"
        "    @partial(jax.shard_map, in_specs=P('data', None), out_specs=P(None, None))\n"
        "    def local(a):\n"
        "        return jax.lax.psum(a.sum(0, keepdims=True), 'data')\n"
        "    return local(x)\n\n"
        "PROGRAM = f\nEXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)\n"
        "MESH = {'data': 4}\n"
    )
    path = tmp_path / "psum.py"
    path.write_text(src)
    program = load_program(str(path))
    result = run_program(program, runs=1)
    (c,) = result.collectives
    assert c.kind == "all-reduce" and "shard_map/psum" in c.source and c.line == 9
    assert c.device_groups == ((0, 1, 2, 3),)
    # its reference is the program on the same mesh without the run's specs, and says so
    from shardscope.backend.run.worker_reference import SAME_MESH

    assert result.outputs[0].max_rel_error == 0.0
    assert result.notes == [SAME_MESH]


def test_xla_warnings_are_joined_to_their_op():
    result = run_program(load_program(str(PROGRAMS / "run_remat.py")), runs=1)
    (warning,) = [w for w in result.warnings if "rematerialization" in w.message]
    assert warning.op_name == "x"


def test_a_mesh_larger_than_the_devices_is_refused(runs, monkeypatch):
    program = runs["mlp"][0]
    with pytest.raises(MeshError) as caught:
        run_program(program, {"data": 16, "model": 8})
    assert str(caught.value) == (
        "the mesh data=16,model=8 needs 128 devices but 64 CPU devices can be attached: use "
        "a mesh of at most 64 devices (--mesh), or allow more with SHARDSCOPE_RUN_CPU_DEVICES=128"
    )
    monkeypatch.setenv("SHARDSCOPE_RUN_CPU_DEVICES", "4")
    with pytest.raises(MeshError, match="needs 8 devices but 4 CPU devices"):
        run_program(program)


def test_an_accelerator_too_small_is_refused_in_one_line():
    mesh = OurMesh.from_dict({"data": 4, "model": 2})
    assert too_many_devices(mesh, 4, "gpu") == (
        "the mesh data=4,model=2 needs 8 devices but 4 GPU devices are attached: use a mesh "
        "of at most 4 devices (--mesh), or run where 8 are attached"
    )


def test_a_program_that_raises_when_run_is_one_line():
    program = load_program(str(HOSTILE / "run_raises.py"))
    with pytest.raises(ShardscopeError) as caught:
        run_program(program, runs=1)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{HOSTILE / 'run_raises.py'}:9: the run failed: ValueError")


def test_a_program_that_aborts_when_run_is_one_line():
    program = load_program(str(HOSTILE / "run_aborts.py"))
    with pytest.raises(ShardscopeError) as caught:
        run_program(program, runs=1)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("run_aborts: the run crashed")


def test_a_program_that_hangs_is_stopped_at_the_time_limit():
    program = load_program(str(HOSTILE / "run_hangs.py"))
    with pytest.raises(ShardscopeError, match="^the run did not finish within 5 s"):
        run_program(program, runs=1, timeout=5)


def test_a_mlir_module_runs_its_module_and_is_never_planned_as_python():
    from shardscope.backend.run.runner import plan_run

    program = load_program(str(INPUTS / "mlir" / "sdy.mlir"))
    with pytest.raises(ShardscopeError, match="run needs a Python program"):
        plan_run(RunRequest(program))
    result = run_program(program, runs=1, reference=False)
    assert result.inputs == "seeded" and [t.name for t in result.arguments] == ["x", "w"]


def test_a_spec_on_an_unknown_axis_is_refused(runs):
    with pytest.raises(ShardscopeError, match="names axis 'nope'"):
        run_program(runs["mlp"][0], specs={"x": "nope,_"})


def test_a_plan_that_fails_stops_the_waiting_worker(monkeypatch):
    from shardscope.backend.isolation import jobs
    from shardscope.backend.run.runner import execute

    started = []
    real_popen = jobs.subprocess.Popen

    def popen(*args, **kwargs):
        proc = real_popen(*args, **kwargs)
        started.append(proc.pid)
        return proc

    def plan():
        raise ShardscopeError("the program did not load")

    monkeypatch.setattr(jobs.subprocess, "Popen", popen)
    with pytest.raises(ShardscopeError, match="^the program did not load$"):
        execute(plan, timeout=60)
    (pid,) = started
    assert gone_within(pid, 5)


def test_a_plan_given_later_runs_as_one_given_at_once(runs):
    from shardscope.backend.run.runner import execute, plan_run

    program = runs["conflict"][0]
    result = execute(lambda: plan_run(RunRequest(program, runs=1)), timeout=120)
    assert result.kinds() == runs["conflict"][1].kinds()
    assert [a.shards for a in result.arguments] == [a.shards for a in runs["conflict"][1].arguments]


def test_shard_map_on_the_programs_own_explicit_mesh_runs_and_its_values_are_right():
    # shard_map with and without mesh=, on MESH = jax.make_mesh(...) (Explicit axes)
    program = load_program(str(PROGRAMS / "run_shard_map_own_mesh.py"))
    result = run_program(program, runs=1)
    x = input_data(jax.ShapeDtypeStruct((8, 4), np.float32), 0)
    blocks = x.reshape(4, 2, 4)
    y = blocks * 2 + blocks.sum(axis=0)
    want = (y - y.max(axis=0)).reshape(8, 4)
    (out,) = result.outputs
    assert out.spec == "data,_" and len(out.shards) == 4
    for shard in out.shards:
        (rows, cols) = shard.index
        piece = want[rows[0] : rows[1], cols[0] : cols[1]]
        np.testing.assert_allclose(np.array(shard.values).reshape(piece.shape), piece, rtol=1e-6)
    assert result.arguments[0].spec == "data,_"


def test_a_plan_on_two_hosts_given_later_runs_on_two_hosts_as_the_one_process_run(runs):
    from shardscope.backend.run.runner import execute, plan_run

    program, one = runs["mlp"]
    result = execute(lambda: plan_run(RunRequest(program, runs=1, hosts=2)), timeout=120)
    assert result.hosts == 2
    for mine, theirs in zip(result.arguments, one.arguments, strict=True):
        assert [(s.device, s.index, s.checksum) for s in mine.shards] == [
            (s.device, s.index, s.checksum) for s in theirs.shards
        ]
        assert [s.host for s in mine.shards] == [s.device // 4 for s in mine.shards]
    assert [c.device_groups for c in result.collectives] == [
        c.device_groups for c in one.collectives
    ]
    assert [c.crosses_hosts for c in result.collectives] == [False]


def test_a_plan_the_hosts_do_not_split_is_refused():
    from shardscope.backend.run.runner import plan_run

    program = load_program("example:mlp")
    with pytest.raises(MeshError, match="do not split evenly among 3 hosts"):
        plan_run(RunRequest(program, hosts=3))
    plan = plan_run(RunRequest(program, dcn="data=2"))
    assert plan.hosts.count == 2 and plan.mesh.device_order == (0, 1, 2, 3, 4, 5, 6, 7)
