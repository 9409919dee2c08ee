"""MLIR contexts and pass running: detached copies, compiler errors as ShardscopeError."""

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.mlir import ModuleView, detached_copy, parse_module, run_passes

TEXT = """
module @m {
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>) {
    %0 = stablehlo.sine %arg0 : tensor<8xf32>
    %1 = stablehlo.sine %arg0 : tensor<8xf32>
    %2 = stablehlo.add %0, %1 : tensor<8xf32>
    return %2 : tensor<8xf32>
  }
}
"""


def test_passes_run_on_a_detached_copy_leave_the_module_alone():
    module = parse_module(TEXT)
    copy = detached_copy(module)
    assert isinstance(copy, ModuleView) and copy.context == module.context
    run_passes(copy, "builtin.module(func.func(cse))")
    assert str(copy).count("stablehlo.sine") == 1
    assert str(module).count("stablehlo.sine") == 2
    run_passes(module, "builtin.module(func.func(cse))")
    assert str(module).count("stablehlo.sine") == 1


def test_a_failing_pipeline_is_a_shardscope_error_with_the_compiler_message():
    module = parse_module(TEXT)
    # A pipeline anchored on func.func cannot run on the module op: the pass manager fails.
    with pytest.raises(ShardscopeError, match="can't run 'func.func' pass manager"):
        run_passes(module, "func.func(cse)")


def test_nesting_depth_counts_brackets_outside_strings():
    from shardscope.backend.program.mlir import nesting_depth

    assert nesting_depth('loc(fused["a", "b"])') == 2
    assert nesting_depth('loc("((((" to "[[[")') == 1
    assert nesting_depth("(%a) -> tensor<4xf32>") == 1
    assert nesting_depth("") == 0


def test_the_closing_bracket_is_found_past_nested_ones_and_quoted_text():
    from shardscope.backend.program.mlir import closing_bracket

    text = 'f(%a: tensor<4xf32> {x = "a)b"}, %b) -> x'
    assert closing_bracket(text, 1) == text.index(") ->")
    text = 'loc("n\\"(x"(callsite(#a at #b)))'
    assert closing_bracket(text, 3) == len(text) - 1
    assert closing_bracket("f(a, (b)", 1) is None
