"""Backward ops of a torch_xla capture read at the script's line of the module call whose
forward they differentiate."""

import shutil
from pathlib import Path

import pytest

from shardscope.backend.program.capture_file import Capture
from shardscope.backend.program.load import load_program
from shardscope.backend.program.torch_capture import collect_torch
from shardscope.backend.program.torch_lines import backward_lines, line_of

TORCH = "/venv/lib/python3.11/site-packages/torch"
LINES = {
    "layers.0.mlp": {"file": "/u/model.py", "line": 50},
    "layers.0.mlp.fc1": {"file": "/u/model.py", "line": 37},
    "head": {"file": "/u/model.py", "line": 65},
    "block.fc": {"file": "/u/model.py", "line": 23},
}

MODULE = f"""module @m {{
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32> loc(#loc10)
    %1 = stablehlo.multiply %0, %arg0 : tensor<4xf32> loc(#loc11)
    %2 = stablehlo.negate %1 : tensor<4xf32> loc(#loc12)
    %3 = stablehlo.abs %2 : tensor<4xf32> loc(#loc13)
    %4 = stablehlo.sine %3 : tensor<4xf32> loc(#loc14)
    %5 = stablehlo.cosine %4 : tensor<4xf32> loc("backward/layers/0/mlp/aten__gelu_backward")
    return %5 : tensor<4xf32>
  }}
}}
#loc1 = loc("{TORCH}/autograd/graph.py":841:0)
#loc2 = loc("{TORCH}/utils/checkpoint.py":210:0)
#loc3 = loc("/u/model.py":23:0)
#loc4 = loc(callsite(#loc1 at #loc2))
#loc5 = loc(callsite(#loc1 at #loc3))
#loc10 = loc("backward/layers/0/mlp/fc1/aten__mm")
#loc11 = loc("backward/block/fc/aten__mm"(#loc4))
#loc12 = loc("backward/recompute/block/fc/aten__addmm"(#loc5))
#loc13 = loc("backward/aten__mul")
#loc14 = loc("layers/0/mlp/fc1/aten__mm"(#loc3))
"""


def test_a_backward_op_with_no_location_gets_its_modules_call():
    text = backward_lines(MODULE, LINES)
    assert '#loc10 = loc("backward/layers/0/mlp/fc1/aten__mm"("/u/model.py":37:0))' in text
    # an op's own location written in its line
    assert 'loc("backward/layers/0/mlp/aten__gelu_backward"("/u/model.py":50:0))' in text


def test_a_backward_op_with_only_torchs_frames_gets_its_modules_call():
    text = backward_lines(MODULE, LINES)
    assert '#loc11 = loc("backward/block/fc/aten__mm"("/u/model.py":23:0))' in text


def test_ops_with_a_line_of_the_scripts_and_ops_of_no_module_keep_their_locations():
    text = backward_lines(MODULE, LINES)
    for kept in (
        '#loc12 = loc("backward/recompute/block/fc/aten__addmm"(#loc5))',
        '#loc13 = loc("backward/aten__mul")',
        '#loc14 = loc("layers/0/mlp/fc1/aten__mm"(#loc3))',
    ):
        assert kept in text


def test_the_innermost_module_path_of_the_scope_with_a_line_is_used():
    lines = {k: (v["file"], v["line"]) for k, v in LINES.items()}
    assert line_of("backward/layers/0/mlp/fc1/aten__mm", lines) == ("/u/model.py", 37)
    # gelu's backward was made by mlp's own forward
    assert line_of("backward/layers/0/mlp/aten__gelu_backward", lines) == ("/u/model.py", 50)
    # a module with no call line of its own falls back to the module that called it
    assert line_of("backward/layers/0/mlp/act/aten__gelu", lines) == ("/u/model.py", 50)
    # recomputation, and a module scoped below a module that does not hold it
    assert line_of("backward/recompute/block/fc/aten__addmm", lines) == ("/u/model.py", 23)
    assert line_of("backward/layers/0/mlp/head/aten__mm", lines) == ("/u/model.py", 65)
    assert line_of("backward/aten__mul", lines) is None
    assert line_of("backward/embed/aten__mm", lines) is None


@pytest.mark.parametrize(
    "table",
    [
        None,
        [],
        "x",
        {},
        {"layers.0.mlp.fc1": None},
        {"layers.0.mlp.fc1": {"file": "/u/model.py", "line": "37"}},
        {"layers.0.mlp.fc1": {"file": "/u/model.py", "line": 0}},
        {"layers.0.mlp.fc1": {"file": "/u/model.py", "line": True}},
        {"layers.0.mlp.fc1": {"file": 3, "line": 37}},
        {"layers.0.mlp.fc1": {"line": 37}},
    ],
)
def test_a_missing_or_malformed_table_leaves_the_text_as_it_is(table):
    assert backward_lines(MODULE, table) == MODULE


def test_a_file_name_with_quotes_is_written_as_mlir_reads_it(tmp_path):
    odd = '/u/my "odd" \\ dir/modèle.py'
    text = backward_lines(MODULE, {"layers.0.mlp.fc1": {"file": odd, "line": 7}})
    path = tmp_path / "m.mlir"
    path.write_text(text, encoding="utf-8")
    (op,) = [o for o in load_program(str(path)).graph.ops if o.name == "stablehlo.add"]
    assert (op.source_file, op.source_line) == (odd, 7)


def test_the_loaded_program_reads_the_lines_of_the_backward_ops(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODULE)
    before = {o.name: o for o in load_program(str(path)).graph.ops}
    path.write_text(backward_lines(MODULE, LINES))
    after = {o.name: o for o in load_program(str(path)).graph.ops}
    assert before["stablehlo.add"].source_line is None
    assert before["stablehlo.multiply"].source_file.startswith(TORCH)
    seen = {name: (after[name].source_file, after[name].source_line) for name in after}
    assert seen["stablehlo.add"] == ("/u/model.py", 37)
    assert seen["stablehlo.multiply"] == ("/u/model.py", 23)
    assert seen["stablehlo.cosine"] == ("/u/model.py", 50)
    assert seen["stablehlo.negate"] == ("/u/model.py", 23)  # the recomputation's own
    assert seen["stablehlo.abs"] == (None, None)
    assert after["stablehlo.add"].location_name == "backward/layers/0/mlp/fc1/aten__mm"


TINY = Path("tests/inputs/torch/tiny.py").resolve()


def test_a_captured_backward_op_reads_at_its_modules_call(tmp_path):
    """The checked-in capture of tiny.py: the backward of ``up`` at the line calling it."""
    folder = tmp_path / "capture"
    shutil.copytree("tests/inputs/torch/tiny_capture", folder)
    capture = Capture(["python", "tiny.py"], 4, "finished")
    assert collect_torch(folder, capture, timeout=120)
    path = tmp_path / "m.mlir"
    path.write_text(capture.functions[0].mlir)
    ops = load_program(str(path)).graph.ops
    backward = [o for o in ops if (o.location_name or "").startswith("backward/up/")]
    assert backward
    text = TINY.read_text().splitlines()
    for op in backward:
        assert op.source_file.endswith("tests/inputs/torch/tiny.py"), op.source_file
        assert "self.up(x)" in text[op.source_line - 1]
