"""Writing Shardy's attributes: mesh, argument/result shardings, constraints."""

from shardscope.backend.program.mlir import parse_module
from shardscope.backend.propagation import sdywrite
from shardscope.backend.sharding.spec import parse_spec

TEXT = """
module @m {
  func.func public @main(%arg0: tensor<8x4xf32>) -> (tensor<8x4xf32>) {
    %0 = stablehlo.sine %arg0 : tensor<8x4xf32>
    %1 = stablehlo.cosine %0 : tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
"""


def test_mesh_args_results_and_constraints_are_written():
    module = parse_module(TEXT)
    sdywrite.set_mesh(module, {"a": 2, "b": 4})
    func = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
    sdywrite.annotate_arg(func, 0, parse_spec("a?,_"))
    sdywrite.annotate_result(func, 0, parse_spec("_,b@p1"))
    sine = func.regions[0].blocks[0].operations[0].operation
    sdywrite.constrain(sine.results[0], parse_spec("a,b"), 99)
    text = str(module)
    assert 'sdy.mesh @mesh = <["a"=2, "b"=4]>' in text
    assert '#sdy.sharding<@mesh, [{"a", ?}, {}]>' in text
    assert '#sdy.sharding<@mesh, [{}, {"b"}p1]>' in text
    assert 'sdy.sharding_constraint %0 <@mesh, [{"a"}, {"b"}]>' in text
    assert "stablehlo.cosine %1" in text  # the later use reads the constrained value
    sdywrite.set_mesh(module, {"a": 2, "b": 4, "c": 2})
    again = str(module)
    assert again.count("sdy.mesh @") == 1 and '"c"=2' in again
