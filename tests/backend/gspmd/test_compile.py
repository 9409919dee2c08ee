"""The GSPMD compile worker: a GSPMD-annotated module in, shardings and instructions out."""

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.gspmd.compare import compile_module

MODULE = """
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<8x4xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> tensor<8x4xf32> {
    %0 = stablehlo.sine %x : tensor<8x4xf32> loc("shardscope.op.0")
    return %0 : tensor<8x4xf32>
  }
}
"""


@pytest.mark.slow
def test_a_module_compiles_on_its_own_devices():
    report = compile_module(MODULE, 4, timeout=120)
    assert report["inputs"] == ["{devices=[4,1]<=[4]}"]
    # The result had no sharding: propagation gave it the argument's.
    assert report["outputs"] == ["{devices=[4,1]<=[4]}"]
    sine = [i for i in report["instructions"] if i["opcode"] == "sine"]
    assert sine == [
        {
            "opcode": "sine",
            "shape": [8, 4],
            "op_name": "shardscope.op.0",
            "sharding": "{devices=[4,1]<=[4]}",
        }
    ]


@pytest.mark.slow
def test_a_module_the_compiler_rejects_is_one_line():
    with pytest.raises(ShardscopeError, match=r"^GSPMD compile failed: \w+: "):
        compile_module("module {", 4, timeout=120)
