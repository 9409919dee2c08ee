"""Reading Shardy's attributes and naming values by the op tags that survive passes."""

import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from shardscope.backend.program.mlir import parse_module, run_passes
from shardscope.backend.propagation import sdyread
from shardscope.backend.propagation.pipeline import pipeline_stages
from shardscope.backend.sharding.values import ValueSharding
from tests.support.inputs import MLIR

TEXT = """
module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(
      %arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2, ?}, {}], replicated={"y"}>},
      %arg1: tensor<i32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", ?}]>}) {
    %0 = stablehlo.sine %arg0 : tensor<8x4xf32>
    %1:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg1) : tensor<8x4xf32>, tensor<i32>
    cond {
      %c = stablehlo.constant dense<3> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_0, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %3 = stablehlo.cosine %iterArg : tensor<8x4xf32>
      stablehlo.return %3, %iterArg_0 : tensor<8x4xf32>, tensor<i32>
    }
    return %1#0 : tensor<8x4xf32>
  }
}
"""


@pytest.fixture
def module():
    """The module with its function tagged -1 and its ops tagged 0, 1, ... in walk order."""
    module = parse_module(TEXT)
    (func,) = sdyread.func_ops(module)
    i64 = ir.IntegerType.get_signless(64, context=module.context)
    func.attributes[sdyread.TAG] = ir.IntegerAttr.get(i64, -1)
    for i, op in enumerate(sdyread.walk(func)):
        op.attributes[sdyread.TAG] = ir.IntegerAttr.get(i64, i)
    return module


def ops_by_name(module):
    (func,) = sdyread.func_ops(module)
    return {op.name: op for op in sdyread.walk(func)}


def test_walk_is_pre_order_without_the_root(module):
    (func,) = sdyread.func_ops(module)
    assert sdyread.func_name(func) == "main"
    assert [op.name for op in sdyread.walk(func)] == [
        "stablehlo.sine",
        "stablehlo.while",
        "stablehlo.constant",
        "stablehlo.compare",
        "stablehlo.return",
        "stablehlo.cosine",
        "stablehlo.return",
        "func.return",
    ]
    assert [sdyread.tag_of(op) for op in sdyread.walk(func)] == list(range(8))
    assert sdyread.tag_of(func) == -1


def test_an_untagged_op_has_no_tag_and_its_values_no_key():
    module = parse_module(TEXT)
    sine = ops_by_name(module)["stablehlo.sine"]
    assert sdyread.tag_of(sine) is None
    assert sdyread.value_key(sine.results[0]) is None


def test_value_keys_name_results_and_region_arguments(module):
    ops = ops_by_name(module)
    (func,) = sdyread.func_ops(module)
    loop = ops["stablehlo.while"]
    assert sdyread.value_key(ops["stablehlo.sine"].results[0]) == ("res", 0, 0)
    assert sdyread.value_key(loop.results[1]) == ("res", 1, 1)
    assert sdyread.value_key(sdyread.first_block(func).arguments[1]) == ("arg", -1, 0, 1)
    body = sdyread.first_block(loop, 1)
    assert sdyread.region_index(body) == 1
    assert sdyread.value_key(body.arguments[0]) == ("arg", 1, 1, 0)
    assert sdyread.value_key(ops["stablehlo.cosine"].operands[0]) == ("arg", 1, 1, 0)
    assert sdyread.terminator(sdyread.first_block(func)).name == "func.return"


def test_a_scan_gives_the_same_keys(module):
    (func,) = sdyread.func_ops(module)
    scan = sdyread.Scan(module.operation)
    inside = [op.name for op in sdyread.walk(func)]
    assert [op.name for op in scan.ops] == ["sdy.mesh", "func.func", *inside]
    assert scan.tags == [None, -1, *range(len(inside))]
    for op in sdyread.walk(func):
        for value in [*op.operands, *op.results]:
            assert scan.value_key(value) == sdyread.value_key(value)


def test_shardings_with_sub_axes_open_dims_and_replicated_axes():
    module = parse_module(TEXT)
    (func,) = sdyread.func_ops(module)
    arg, plain = sdyread.arg_attr(func, "arg_attrs", "sdy.sharding")
    assert plain is None
    assert sdyread.read_sharding(arg) == ValueSharding(
        dims=(("x:(1)2",), ()), closed=(False, True), replicated=("y",)
    )
    (res,) = sdyread.arg_attr(func, "res_attrs", "sdy.sharding")
    assert sdyread.read_sharding(res) == ValueSharding((("x",), ("y",)), (True, False))
    assert sdyread.arg_attr(func, "res_attrs", "sdy.propagation_edges") == [None]
    assert sdyread.arg_attr(sdyread.walk(func)[0], "arg_attrs", "sdy.sharding") == []


def test_axis_names_of_full_and_sub_axes():
    module = parse_module(TEXT)
    (func,) = sdyread.func_ops(module)
    arg, _ = sdyread.arg_attr(func, "arg_attrs", "sdy.sharding")
    (res,) = sdyread.arg_attr(func, "res_attrs", "sdy.sharding")

    def first_axis(attr):
        dim = sdy.DimensionShardingAttr(sdy.TensorShardingAttr(attr).dimension_shardings[0])
        return dim.axes[0]

    assert sdyread.axis_name(first_axis(arg)) == "x:(1)2"
    assert sdyread.axis_name(first_axis(res)) == "x"


def test_what_propagation_records_reads_back():
    module = parse_module((MLIR / "sdy.mlir").read_text())
    run_passes(module, pipeline_stages()[0])
    (func,) = sdyread.func_ops(module)
    dot = next(op for op in sdyread.walk(func) if op.name == "stablehlo.dot_general")
    attrs = dot.attributes
    assert sdyread.read_edges(attrs["sdy.propagation_edges"]) == [
        sdyread.Edge(0, "data", "operand-0", ("result-0",)),
        sdyread.Edge(0, "model", "operand-1", ("result-0",)),
    ]
    assert sdyread.read_per_value(attrs["sdy.sharding"]) == [
        ValueSharding((("data",), ("model",)), (False, False))
    ]
    (origins,) = ir.ArrayAttr(attrs["sdy.sharding_origins"])
    assert sdyread.dict_of(origins) == {"data": "input: 0", "model": "input: 1"}
    x_origins = sdyread.arg_attr(func, "arg_attrs", "sdy.sharding_origins")[0]
    assert sdyread.dict_of(x_origins) == {"data": "self"}


def test_edges_of_several_steps_and_sub_axes():
    module = parse_module(TEXT)
    with module.context:
        attr = ir.Attribute.parse(
            '#sdy.propagation_edges<[{step-2 = [{"x" = operand-0 -> [result-0]}]}, '
            '{step-5 = [{"y":(1)2 = result-0 -> [operand-0, operand-1]}]}]>'
        )
    assert sdyread.read_edges(attr) == [
        sdyread.Edge(2, "x", "operand-0", ("result-0",)),
        sdyread.Edge(5, "y:(1)2", "result-0", ("operand-0", "operand-1")),
    ]


def test_reads_are_cached_per_attribute_until_cleared():
    module = parse_module(TEXT)
    (func,) = sdyread.func_ops(module)
    (attr, _) = sdyread.arg_attr(func, "arg_attrs", "sdy.sharding")
    sdyread.clear_cache()
    calls = []

    def read(a):
        calls.append(a)
        return len(calls)

    assert sdyread.cached(attr, read) == 1
    assert sdyread.cached(attr, read) == 1
    sdyread.clear_cache()
    assert sdyread.cached(attr, read) == 2
    sdyread.clear_cache()
