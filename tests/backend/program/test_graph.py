"""The program graph: ids in one deterministic walk, values and their users, regions, scopes."""

import dataclasses

import pytest

from shardscope.backend.program.graph import build_graph
from shardscope.backend.program.load import load_program
from shardscope.backend.program.mlir import parse_module
from tests.support.inputs import CORPUS, MLIR

# The helper is defined before main: ids still start with main's arguments and ops.
TEXT = """
module @m {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func private @helper(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.sine %arg0 : tensor<8xf32> loc("jit(f)/inner/sin")
    return %0 : tensor<8xf32>
  }
  func.func public @main(%arg0: tensor<8xf32> loc("x"), %arg1: tensor<f32> loc("s"))
      -> (tensor<8xf32>, tensor<8xf32>) {
    %0 = call @helper(%arg0) : (tensor<8xf32>) -> tensor<8xf32> loc("jit(f)/block/helper")
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<8xf32> loc("jit(f)/block/mul")
    return %2, %2 : tensor<8xf32>, tensor<8xf32>
  }
}
"""


@pytest.fixture(scope="module")
def examples():
    return {name: load_program(f"example:{name}") for name in ("attention", "scan")}


@pytest.fixture(scope="module")
def graph():
    return build_graph(parse_module(TEXT))


def test_main_comes_first_then_the_other_functions(graph):
    assert graph.main == "main"
    assert [(op.id, op.name, op.function) for op in graph.ops] == [
        (0, "func.call", "main"),
        (1, "stablehlo.broadcast_in_dim", "main"),
        (2, "stablehlo.multiply", "main"),
        (3, "stablehlo.sine", "helper"),
    ]
    # arguments first, then each op's results, function by function
    assert graph.functions["main"].arguments == [0, 1]
    assert [op.results for op in graph.ops] == [(2,), (3,), (4,), (6,)]
    assert graph.functions["helper"].arguments == [5]
    assert graph.functions["main"].public and not graph.functions["helper"].public


def test_values_know_their_names_roles_producers_and_users(graph):
    x, s = graph.arguments
    assert (x.name, x.shape, x.dtype, x.role) == ("x", (8,), "f32", "arg")
    assert (s.name, s.shape, s.rank) == ("s", (), 0)
    assert x.users == [0] and s.users == [1]
    assert graph.ops[2].operands == (2, 3)
    assert [v.id for v in graph.results] == [4, 4]  # one value returned twice
    out = graph.values[4]
    assert (out.role, out.name, out.producer, out.result_index) == ("result", "result[0]", 2, 0)
    assert graph.value_by_name("result[1]") is out
    assert graph.value_by_name("x") is x and graph.value_by_name("nope") is None
    helper_arg = graph.values[5]
    assert helper_arg.role == "intermediate" and helper_arg.display_name == "helper: %arg0"
    assert graph.values[2].display_name == "block/call %0"


def test_calls_scopes_and_meshes(graph):
    call = graph.ops[0]
    assert call.callee == "helper" and call.short_name == "call" and call.dialect == "func"
    assert [op.scope for op in graph.ops] == ["block", "", "block", "inner"]
    tree = graph.scope_tree()
    assert set(tree.children) == {"block"} and tree.ops == [1]
    assert tree.children["block"].ops == [0, 2] and tree.op_count() == 3
    assert set(graph.scope_tree("helper").children) == {"inner"}
    assert [op.id for op in graph.walk_ops("helper")] == [3]
    assert graph.meshes == {"mesh": {"data": 4, "model": 2}}


def test_the_same_module_text_always_gives_the_same_ids():
    text = (MLIR / "sdy.mlir").read_text()

    def fingerprint(graph):
        return (
            graph.main,
            [dataclasses.astuple(op) for op in graph.ops],
            [dataclasses.astuple(value) for value in graph.values],
        )

    first = build_graph(parse_module(text))
    second = build_graph(parse_module(text))  # another MLIR context, another parse
    assert fingerprint(first) == fingerprint(second)
    assert [op.name for op in first.ops] == [
        "stablehlo.dot_general",
        "stablehlo.tanh",
        "stablehlo.constant",
        "stablehlo.reduce",
        "stablehlo.add",  # inside the reduce's region, right after the reduce
    ]
    assert first.ops[4].parent == 3 and first.ops[3].regions[0].ops == [4]


def test_shardings_written_in_the_module_are_kept():
    graph = build_graph(parse_module((MLIR / "sdy.mlir").read_text()))
    x, w = graph.arguments
    assert x.code_sharding == '#sdy.sharding<@mesh, [{"data"}, {}]>'
    assert w.code_sharding == '#sdy.sharding<@mesh, [{}, {"model"}]>'
    assert [v.result_info for v in graph.results] == ["result[0]", "result[1]"]
    assert graph.source_files() == [graph.ops[0].source_file]


def test_a_module_without_functions_is_refused():
    with pytest.raises(ValueError, match="no func.func"):
        build_graph(parse_module("module {\n}\n"))


def test_attention_splits_heads_with_reshapes(examples):
    graph = examples["attention"].graph
    reshapes = [op for op in graph.ops if op.name == "stablehlo.reshape"]
    shapes = {graph.values[op.results[0]].shape for op in reshapes}
    assert (8, 64, 8, 16) in shapes  # batch, seq, heads, head_dim
    assert {"qkv", "scores", "mix", "out_proj"} <= set(graph.scope_tree().children)


def test_scan_has_a_while_with_cond_and_body_regions(examples):
    graph = examples["scan"].graph
    (loop,) = [op for op in graph.ops if op.name == "stablehlo.while"]
    assert len(loop.regions) == 2
    cond, body = loop.regions
    assert cond.arguments and body.arguments
    assert all(graph.ops[i].parent == loop.id for i in cond.ops + body.ops)
    assert graph.ops[body.ops[0]].scope.startswith("rnn/while/body")
    calls = [graph.ops[i] for i in body.ops if graph.ops[i].name == "func.call"]
    assert calls and all(c.callee in graph.functions for c in calls)


def test_listing_key_puts_arguments_then_results_by_index():
    graph = load_program("example:transformer").graph
    main = graph.functions[graph.main]
    ranked = sorted({*main.arguments, *main.results}, key=graph.listing_key())
    assert ranked[: len(main.arguments)] == main.arguments
    assert ranked[len(main.arguments) :] == list(dict.fromkeys(main.results))
    # Definition order differs from result order here, so id order would list them wrongly.
    assert main.results != sorted(main.results)


@pytest.mark.parametrize(
    "source", ["example:transformer", "example:scan", str(CORPUS / "two_calls.py")]
)
def test_every_display_name_names_one_value(source):
    graph = load_program(source).graph
    names = [v.display_name for v in graph.values]
    assert len(set(names)) == len(names)


def test_a_name_shared_across_functions_says_its_function():
    graph = load_program(str(CORPUS / "two_calls.py")).graph
    names = {v.display_name for v in graph.values}
    # The same callee body is three functions after lowering (scale, scale_0, scale_1).
    assert {"scale: constant %cst", "scale_0: constant %cst", "scale_1: constant %cst"} <= names
    # A name used once keeps its short form.
    assert "constant %cst" in names and "a" in names
