"""The module run worker, in this process (64 host devices, tests/conftest.py): inputs of
each argument's dtype, donated arguments, and the module's own refusals."""

import numpy as np
import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.run.inputs import random_array
from shardscope.backend.run.module_worker import run_module_job
from shardscope.backend.sharding.mesh import Mesh

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
