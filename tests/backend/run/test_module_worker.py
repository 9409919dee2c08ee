"""The module run worker, in this process (64 host devices, tests/conftest.py): inputs of
each argument's dtype, donated arguments, and the module's own refusals."""

import json
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import load_program
from shardscope.backend.run.dispatch import run_program
from shardscope.backend.run.inputs import random_array
from shardscope.backend.run.module_worker import run_module_job
from shardscope.backend.sharding.mesh import Mesh
from tests.support.torch_scripts import TORCH_PYTHON, needs_torch

# A module of three dtypes whose first argument is donated to its first result, as
# torch_xla's in-place updates are.
MIXED = """
module @m {
  sdy.mesh @mesh = <["data"=2]>
  func.func public @main(
      %arg0: tensor<4x2xbf16> {tf.aliasing_output = 0 : i32,
                               sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
      %arg1: tensor<4xui32>, %arg2: tensor<4xi1>)
      -> (tensor<4x2xbf16>, tensor<4xui32>) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4x2xbf16>
    %1 = stablehlo.select %arg2, %arg1, %arg1 : tensor<4xi1>, tensor<4xui32>
    return %0, %1 : tensor<4x2xbf16>, tensor<4xui32>
  }
}
"""


@pytest.fixture(autouse=True)
def _host_devices():
    """The CPU client started on tests/conftest.py's 64 devices before a job's mesh could
    start it on its own count (``module_worker._set_up``), whichever test runs first."""
    jax.devices("cpu")


def _job(module: str, **extra) -> dict:
    mesh = Mesh.from_dict({"data": 2})
    return {"module": module, "mesh": mesh.to_json(), "arg_names": ["p", "q", "r"], **extra}


def test_each_dtype_gets_its_seeded_input_and_donated_arguments_run_again():
    report = run_module_job(_job(MIXED, runs=3), None)
    assert report["ok"] and len(report["run_times"]) == 3
    p, q, r = report["arguments"]
    assert (p["dtype"], q["dtype"], r["dtype"]) == ("bfloat16", "uint32", "bool")
    assert p["spec"] == "data,_" and [s["index"] for s in p["shards"]] == [
        [[0, 2], [0, 2]],
        [[2, 4], [0, 2]],
    ]
    # The same seeded data the runs of Python programs use, argument by argument.
    data = random_array((4,), np.uint32, 1)
    assert q["shards"][0]["values"] == [float(v) for v in data]
    doubled, picked = report["outputs"]
    assert doubled["max_rel_error"] == 0.0 and picked["max_rel_error"] == 0.0
    assert doubled["spec"] == "data,_" and report["collectives"] == []


def test_a_module_without_tensor_arguments_is_refused_in_one_line():
    token = MIXED.replace("%arg2: tensor<4xi1>)", "%arg2: tensor<4xi1>, %arg3: !stablehlo.token)")
    with pytest.raises(ShardscopeError, match=r"argument 3 is a !stablehlo.token, not a tensor"):
        run_module_job(_job(token), None)


def test_a_mesh_larger_than_the_devices_is_refused():
    report = run_module_job({**_job(MIXED), "mesh": Mesh.from_dict({"data": 128}).to_json()}, None)
    assert not report["ok"] and "needs 128 devices but the worker has 64" in report["error"]


def test_uneven_shardings_run_padded_and_each_tile_says_its_padding():
    # w [3, 6] and x [8, 6] split over (data=2, model=4): rows of w in tiles of 2 (the
    # second holding 1 row and 1 of padding), columns in tiles of 2 (the last all
    # padding). XLA's executable takes and gives each device its whole tile.
    module = Path("tests/inputs/mlir/uneven.mlir").read_text()
    job = {
        "module": module,
        "partitioner": "gspmd",
        "mesh": Mesh.from_dict({"data": 2, "model": 4}).to_json(),
        "arg_names": ["w", "x"],
    }
    report = run_module_job(job, None)
    assert report["ok"], report
    assert "(f32[2,2]{1,0}, f32[4,2]{1,0})->(f32[2,8]{1,0}, f32[2,2]{1,0})" in report["hlo_text"]
    w, x = (random_array(s, np.float32, i) for i, s in enumerate([(3, 6), (8, 6)]))
    expected = [np.tanh(w.astype(np.float64) @ x.T), np.exp(w.astype(np.float64))]
    for tensor, want in zip(report["outputs"], expected, strict=True):
        assert tensor["shape"] == list(want.shape)
        assert tensor["max_rel_error"] is not None and tensor["max_rel_error"] < 1e-6
        for shard in tensor["shards"]:
            piece = want[tuple(slice(a, b) for a, b in shard["index"])]
            assert shard["shape"] == list(piece.shape)
            got = shard["values"] if shard["values_from"] is None else None
            if got is not None:
                np.testing.assert_allclose(np.reshape(got, piece.shape), piece, rtol=1e-6)
    rows, full = report["outputs"]
    assert {s["device"]: s["padding"] for s in rows["shards"]} == {
        **{d: [0, 0] for d in range(4)},
        **{d: [1, 0] for d in range(4, 8)},
    }
    by_device = {s["device"]: s for s in full["shards"]}
    assert by_device[7]["index"] == [[2, 3], [6, 6]] and by_device[7]["padding"] == [1, 2]
    assert by_device[3]["shape"] == [2, 0] and by_device[3]["padding"] == [0, 2]
    placed = {s["device"]: s for s in report["arguments"][0]["shards"]}
    assert placed[4]["index"] == [[2, 3], [0, 2]] and placed[4]["padding"] == [1, 0]
    assert placed[4]["values"] == w[2:3, 0:2].ravel().tolist()
    assert all(t["max_rel_error"] == 0.0 for t in report["arguments"])


@needs_torch
@pytest.mark.slow
def test_a_captured_torch_xla_script_with_an_uneven_sharding_runs(tmp_path):
    out = tmp_path / "uneven.json"
    script = Path("tests/inputs/torch/uneven.py").resolve()
    proc = subprocess.run(
        [sys.executable, "main.py", "capture", "--json", "--out", str(out), "--", TORCH_PYTHON]
        + [str(script)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [f["name"] for f in json.loads(proc.stdout)["functions"]] == ["sync1"]
    program = load_program(f"{out}#sync1")
    result = run_program(program, runs=1)
    w = result.tensor("w")
    assert w.spec == "data,_" and w.max_rel_error == 0.0
    assert {s.device: (s.index[0], s.padding) for s in w.shards} == {
        **{d: ((0, 2), (0, 0)) for d in range(4)},
        **{d: ((2, 3), (1, 0)) for d in range(4, 8)},
    }
    assert all(t.max_rel_error is not None and t.max_rel_error < 1e-5 for t in result.outputs)
    # torch_xla's own compile holds w as a [2, 32] tile on each device, as the run does.
    layout = "entry_computation_layout={(f32[2,32]{1,0}, f32[4,8]{1,0})"
    assert layout in program.compiled_hlo and layout in result.hlo_text
