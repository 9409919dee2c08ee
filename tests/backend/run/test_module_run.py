"""A ``.mlir`` module or a capture run on seeded inputs on fake CPU devices
(``run_seeded``, by way of ``dispatch.run_program``), held against ``jax.jit(...).lower(...).compile()`` of the same function, mesh and
shardings run on the same inputs in this process (64 host devices, tests/conftest.py)."""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardscope.backend.errors import MeshError, SpecError
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.program.load import load_program
from shardscope.backend.run.dispatch import run_program
from shardscope.backend.run.inputs import random_array
from shardscope.backend.run.module_run import runs_module
from shardscope.backend.sharding.mesh import Mesh

SHAPES = ((16, 32), (32, 8))
SPECS = (P("data", None), P(None, "model"))
ORDERS = {"iota": tuple(range(8)), "strided": (0, 2, 4, 6, 1, 3, 5, 7)}


def f(x, w):
    h = jnp.tanh(x @ w)
    return h.sum(axis=1), h


def f_numpy(x, w):
    h = np.tanh(x.astype(np.float64) @ w)
    return [h.sum(axis=1), h]


def constrained(x, w):
    h = jnp.tanh(x @ w)
    mesh = jax.sharding.get_abstract_mesh()
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("model", None)))
    return jnp.exp(h)


def constrained_numpy(x, w):
    return [np.exp(np.tanh(x.astype(np.float64) @ w))]


NUMPY = {f: f_numpy, constrained: constrained_numpy}


def _jmesh(order: tuple[int, ...]) -> jax.sharding.Mesh:
    devices = {d.id: d for d in jax.devices()}
    grid = np.array([devices[i] for i in order]).reshape(4, 2)
    return jax.sharding.Mesh(grid, ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def _jitted(fn, order: tuple[int, ...]):
    mesh = _jmesh(order)
    shardings = tuple(NamedSharding(mesh, s) for s in SPECS)
    return jax.jit(fn, in_shardings=shardings), mesh


def _structs():
    return [jax.ShapeDtypeStruct(s, jnp.float32) for s in SHAPES]


def _export(fn, path, *, gspmd: bool = False) -> str:
    """``fn`` lowered with its shardings, locations and all, written to ``path``."""
    jitted, mesh = _jitted(fn, ORDERS["iota"])
    was = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", not gspmd)
    try:
        with jax.set_mesh(mesh):
            text = jitted.trace(*_structs()).lower().as_text(debug_info=True)
    finally:
        jax.config.update("jax_use_shardy_partitioner", was)
    path.write_text(text)
    return str(path)


def _oracle(fn, order: tuple[int, ...], *, gspmd: bool = False):
    """jax.jit's own compile of ``fn`` on the mesh in ``order``, run on the module run's
    seeded inputs: its outputs, its placed arguments and its collectives."""
    jitted, mesh = _jitted(fn, order)
    was = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", not gspmd)
    try:
        with jax.set_mesh(mesh):
            compiled = jitted.lower(*_structs()).compile()
    finally:
        jax.config.update("jax_use_shardy_partitioner", was)
    host = [random_array(s, np.float32, i) for i, s in enumerate(SHAPES)]
    args = [jax.device_put(h, s) for h, s in zip(host, compiled.input_shardings[0], strict=True)]
    outs = jax.tree.leaves(compiled(*args))
    assignment = [int(d.id) for d in compiled.runtime_executable().local_devices()]
    collectives = read_collectives(compiled.as_text(), assignment, 8)
    return host, args, outs, collectives


def _layout(array) -> list[tuple[int, list[list[int]]]]:
    out = []
    for shard in array.addressable_shards:
        index = [list(s.indices(n)[:2]) for s, n in zip(shard.index, array.shape, strict=True)]
        out.append((int(shard.device.id), index))
    return sorted(out)


def _shown(tensor) -> list[tuple[int, list[list[int]]]]:
    return sorted((s.device, [list(r) for r in s.index]) for s in tensor.shards)


def _groups(collectives) -> list:
    return sorted((c["kind"], c["operands"], c["groups"]) for c in collectives)


def _check(result, fn, order, *, gspmd: bool = False) -> None:
    host, args, outs, collectives = _oracle(fn, order, gspmd=gspmd)
    assert result.inputs == "seeded"
    assert any("seeded, not" in n for n in result.notes)
    assert result.device_order == list(order)
    for tensor, placed in zip(result.arguments, args, strict=True):
        assert _shown(tensor) == _layout(placed), tensor.name
    # The function in NumPy on the same inputs.
    plain = NUMPY[fn](*host)
    for tensor, out, want in zip(result.outputs, outs, plain, strict=True):
        assert _shown(tensor) == _layout(out), tensor.name
        assert tensor.max_rel_error is not None and tensor.max_rel_error < 1e-5
        want = np.asarray(want)
        for shard in tensor.shards:
            piece = want[tuple(slice(a, b) for a, b in shard.index)]
            got = np.array(shard.values, dtype=np.float64).reshape(shard.values_shape)
            np.testing.assert_allclose(got, piece, rtol=1e-5, atol=1e-6)
    got = [
        {"kind": c.kind, "operands": c.operands, "groups": [list(g) for g in c.device_groups]}
        for c in result.collectives
    ]
    assert got and _groups(got) == _groups(collectives)


@pytest.fixture(scope="module")
def mlir_file(tmp_path_factory):
    return _export(f, tmp_path_factory.mktemp("mlir") / "f.mlir")


@pytest.fixture(scope="module")
def gspmd_file(tmp_path_factory):
    return _export(constrained, tmp_path_factory.mktemp("mlir") / "gspmd.mlir", gspmd=True)


@pytest.mark.slow
@pytest.mark.parametrize("order", list(ORDERS))
def test_an_mlir_module_runs_as_jax_jit_compiles_it(mlir_file, order):
    program = load_program(mlir_file)
    assert runs_module(program)
    mesh = Mesh.from_dict({"data": 4, "model": 2}, ORDERS[order])
    result = run_program(program, mesh, runs=2)
    _check(result, f, ORDERS[order])
    assert [t.name for t in result.arguments] == ["x", "w"]
    assert result.memory["argument"] > 0 and len(result.run_times) == 2


@pytest.mark.slow
def test_a_gspmd_module_runs_with_its_own_shardings(gspmd_file):
    program = load_program(gspmd_file)
    assert program.annotation_kind == "gspmd"
    result = run_program(program, {"data": 4, "model": 2}, runs=1)
    _check(result, constrained, ORDERS["iota"], gspmd=True)
    assert any("with GSPMD, not Shardy" in n for n in result.notes)
    assert result.outputs[0].spec == "model,_"


@pytest.mark.slow
def test_run_program_runs_a_module_and_a_capture(tmp_path, mlir_file):
    from shardscope.backend.program.capture import capture_script
    from shardscope.backend.session.persistence import write_json

    result = run_program(load_program(mlir_file), {"data": 4, "model": 2}, runs=1)
    assert result.inputs == "seeded" and result.collectives

    captured = capture_script([sys.executable, "tests/inputs/capture/train.py", "1"])
    path = tmp_path / "cap.json"
    write_json(path, captured.to_json())
    program = load_program(f"{path}#predict")
    assert runs_module(program)
    result = run_program(program, runs=1)
    assert result.mesh == {"data": 2, "model": 4} and result.inputs == "seeded"
    w = result.tensor("w")
    # The script's shardings: w over model in its columns, x over data in its rows.
    assert w.spec == "_,model" and result.tensor("x").spec == "data,_"
    assert {s.shape for s in w.shards} == {(16, 8)}
    assert all(t.max_rel_error is not None and t.max_rel_error < 1e-5 for t in result.outputs)


def test_a_mesh_too_big_is_one_line(mlir_file):
    with pytest.raises(MeshError, match=r"^the mesh .* needs 128 devices but 64 CPU") as info:
        run_program(load_program(mlir_file), {"data": 64, "model": 2})
    assert "\n" not in str(info.value)


def test_a_spec_on_a_missing_axis_is_one_line(mlir_file):
    with pytest.raises(SpecError) as info:
        run_program(load_program(mlir_file), {"data": 4, "model": 2}, {"x": "expert,_"})
    assert "expert" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.slow
def test_a_torch_xla_capture_runs_in_its_device_order_with_torch_xlas_collectives(tmp_path):
    import json
    import shutil

    from shardscope.backend.program.capture import Capture
    from shardscope.backend.program.torch_capture import collect_torch

    shutil.copytree("tests/inputs/torch/tiny_capture", tmp_path / "capture")
    captured = Capture(["python", "tiny.py"], 4, "finished")
    assert collect_torch(tmp_path / "capture", captured, timeout=120)
    path = tmp_path / "torch.json"
    path.write_text(json.dumps(captured.to_json()))
    program = load_program(str(path))
    assert program.framework == "torch_xla" and program.device_order == (0, 2, 1, 3)
    result = run_program(program, runs=1)
    assert result.device_order == [0, 2, 1, 3] and result.inputs == "seeded"
    assert any(
        n.startswith("the inputs are seeded, not the torch_xla script's") for n in result.notes
    )
    # run as captured, it is partitioned as torch_xla partitions it: by GSPMD
    assert any(
        n.startswith("XLA compiled the module with GSPMD, as torch_xla does") for n in result.notes
    )
    batch = result.tensor("batch")
    # batch over data in its rows: device 1 sits at mesh position 2, data index 1.
    assert batch.spec == "data,_"
    assert {s.device: s.index[0] for s in batch.shards} == {
        0: (0, 2),
        2: (0, 2),
        1: (2, 4),
        3: (2, 4),
    }
    assert result.tensor("model.up.weight").spec == "model,_"
    assert all(t.max_rel_error is not None and t.max_rel_error < 1e-5 for t in result.outputs)
    # The same collectives, tensor for tensor, as torch_xla's own compiled module.
    own: dict[str, int] = {}
    for c in read_collectives(program.compiled_hlo):
        own[c["kind"]] = own.get(c["kind"], 0) + c["operands"]
    ran: dict[str, int] = {}
    for c in result.collectives:
        ran[c.kind] = ran.get(c.kind, 0) + c.operands
    assert ran == own and ran


@pytest.mark.slow
def test_a_torch_xla_capture_with_the_users_specs_is_partitioned_by_shardy_and_says_so(tmp_path):
    import json
    import shutil

    from shardscope.backend.program.capture import Capture
    from shardscope.backend.program.torch_capture import collect_torch

    shutil.copytree("tests/inputs/torch/tiny_capture", tmp_path / "capture")
    captured = Capture(["python", "tiny.py"], 4, "finished")
    assert collect_torch(tmp_path / "capture", captured, timeout=120)
    path = tmp_path / "torch.json"
    path.write_text(json.dumps(captured.to_json()))
    result = run_program(load_program(str(path)), specs={"batch": "_,_"}, runs=1)
    assert result.tensor("batch").spec == "_,_"
    assert any("compiled the module with Shardy" in n for n in result.notes), result.notes


def test_a_cancelled_module_run_ends_its_worker(mlir_file):
    import threading

    from shardscope.backend.run.cancel import Cancel, RunCancelled

    cancel = Cancel()
    threading.Timer(0.3, cancel.cancel).start()
    with pytest.raises(RunCancelled):
        run_program(load_program(mlir_file), {"data": 4, "model": 2}, cancel=cancel)


def _rows_and_padding(tensor) -> dict[int, tuple]:
    return {s.device: (s.index[0], s.padding) for s in tensor.shards}


# 3 rows over data=2 of a (2, 4) mesh: devices 0-3 hold rows 0-1, devices 4-7 row 2 and
# a row of padding.
UNEVEN_ROWS = {
    **{d: ((0, 2), (0, 0)) for d in range(4)},
    **{d: ((2, 3), (1, 0)) for d in range(4, 8)},
}


@pytest.mark.slow
def test_an_uneven_gspmd_module_runs_padded_and_matches_the_unsharded_run():
    program = load_program("tests/inputs/mlir/uneven.mlir")
    result = run_program(program, {"data": 2, "model": 4}, runs=1)
    assert any("with GSPMD, not Shardy" in n for n in result.notes)
    w, x = random_array((3, 6), np.float32, 0), random_array((8, 6), np.float32, 1)
    wanted = {"result[0]": np.tanh(w.astype(np.float64) @ x.T), "result[1]": np.exp(w)}
    for tensor in result.outputs:
        assert tensor.max_rel_error is not None and tensor.max_rel_error < 1e-6
        assert tensor.shape == wanted[tensor.name].shape
    assert _rows_and_padding(result.tensor("result[0]")) == UNEVEN_ROWS
    # w's 6 columns over model=4 in tiles of 2: the last tile is all padding.
    last = next(s for s in result.tensor("w").shards if s.device == 7)
    assert last.index == ((2, 3), (6, 6)) and last.padding == (1, 2) and last.shape == (1, 0)
    assert last.padding_text == "tile [2, 2] with padding 1 in dim 0, 2 in dim 1"


@pytest.mark.slow
def test_a_torch_xla_capture_with_an_uneven_sharding_runs_as_torch_xla_holds_it():
    program = load_program("tests/inputs/torch/capture_uneven.json#sync1")
    result = run_program(program, runs=1)
    assert any(
        n.startswith("XLA compiled the module with GSPMD, as torch_xla") for n in result.notes
    )
    w = result.tensor("w")
    assert w.spec == "data,_" and _rows_and_padding(w) == UNEVEN_ROWS
    assert all(t.max_rel_error is not None and t.max_rel_error < 1e-5 for t in result.outputs)
    # Each device holds a [2, 32] tile of w, as in torch_xla's own compiled module.
    layout = "entry_computation_layout={(f32[2,32]{1,0}, f32[4,8]{1,0})"
    assert layout in program.compiled_hlo and layout in result.hlo_text
