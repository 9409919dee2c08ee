"""Reading MLIR locations."""

import pytest
from jaxlib.mlir import ir

from shardscope.backend.program.locations import (
    LocationReader,
    read_location,
    scope_of,
    split_name_path,
)
from shardscope.backend.program.mlir import new_context


@pytest.fixture
def context():
    with new_context() as ctx:
        yield ctx


def test_op_location_with_call_sites(context):
    loc = ir.Location.name(
        "jit(f)/block/dot_general",
        childLoc=ir.Location.callsite(
            ir.Location.name("block", childLoc=ir.Location.file("/tmp/t.py", 6, 24)),
            [ir.Location.file("/tmp/t.py", 8, 8), ir.Location.file("/tmp/t.py", 14, 10)],
        ),
    )
    info = read_location(loc)
    assert info.name == "jit(f)/block/dot_general"
    assert (info.file, info.line) == ("/tmp/t.py", 6)


def test_a_call_site_without_a_file_in_its_callee_reads_the_caller(context):
    loc = ir.Location.callsite(ir.Location.name("inner"), [ir.Location.file("a.py", 4, 1)])
    info = read_location(loc)
    assert info.name is None and (info.file, info.line) == ("a.py", 4)


def test_argument_location_is_a_key_path(context):
    info = read_location(ir.Location.name("params['w1']"))
    assert info.name == "params['w1']" and info.file is None


def test_plain_file_location_and_unknown(context):
    assert read_location(ir.Location.file("a.py", 3, 1)).line == 3
    assert read_location(ir.Location.file("a.py", 3, 1)).name is None
    assert read_location(ir.Location.unknown()) == read_location(ir.Location.unknown())
    assert read_location(ir.Location.unknown()).name is None


def test_quotes_and_fused(context):
    loc = ir.Location.fused(
        [
            ir.Location.name('x "y"/add', childLoc=ir.Location.file("f.py", 2, 1)),
            ir.Location.file("g.py", 9, 9),
        ]
    )
    info = read_location(loc)
    assert info.name == 'x "y"/add' and (info.file, info.line) == ("f.py", 2)


def test_diagnostic_locations_come_untyped_and_are_still_read(context):
    with pytest.raises(ir.MLIRError) as caught:
        ir.Module.parse("module {\n  func.func @f(%x: i32 {\n}")
    location = caught.value.error_diagnostics[0].location
    assert type(location) is ir.Location
    assert read_location(location).line == 2


def test_shared_parts_are_read_once(context):
    shared = ir.Location.callsite(
        ir.Location.file("m.py", 10, 1), [ir.Location.file("main.py", 1, 1)]
    )
    reader = LocationReader()
    first = reader.read(ir.Location.name("a/add", childLoc=shared))
    second = reader.read(ir.Location.name("a/mul", childLoc=shared))
    assert (first.file, first.line) == (second.file, second.line) == ("m.py", 10)
    assert (first.name, second.name) == ("a/add", "a/mul")


def test_scopes():
    assert scope_of("jit(f)/block/add") == "block"
    assert scope_of("jit(f)/add") == ""
    assert (
        scope_of("jit(f)/transpose(jvp(layer_0))/attn/dot_general")
        == "transpose(jvp(layer_0))/attn"
    )
    assert scope_of("cell/tanh") == "cell"
    assert scope_of(None) == ""
    assert split_name_path("a(b/c)/d") == ["a(b/c)", "d"]


def test_split_outside_brackets():
    from shardscope.backend.program.locations import split_outside

    assert split_outside("a(b:c):d", ":") == ["a(b:c)", "d"]
    assert split_outside("x{a,b},y(c,d),", ",", "{(", "})") == ["x{a,b}", "y(c,d)", ""]


def test_a_librarys_frames_are_passed_over_for_the_users_line(context):
    flax = "/v/lib/python3.11/site-packages/flax/nnx/nn/linear.py"
    loc = ir.Location.name(
        "jit(step)/dot_general",
        childLoc=ir.Location.callsite(
            ir.Location.file(flax, 390, 4),
            [ir.Location.file(flax, 120, 8), ir.Location.file("/home/me/train.py", 21, 10)],
        ),
    )
    assert (read_location(loc).file, read_location(loc).line) == ("/home/me/train.py", 21)
    # Every frame a library's: the innermost.
    only = ir.Location.callsite(ir.Location.file(flax, 390, 4), [ir.Location.file(flax, 12, 1)])
    assert (read_location(only).file, read_location(only).line) == (flax, 390)


def test_a_flax_models_ops_name_the_users_lines_as_the_compiled_module_does():
    pytest.importorskip("flax", reason="needs the models extra: pip install -e '.[models]'")
    from pathlib import Path

    from shardscope.backend.program.load import load_program

    path = Path(__file__).resolve().parents[2] / "inputs" / "programs" / "nnx_train.py"
    graph = load_program(str(path)).graph
    files = {op.source_file for op in graph.ops if op.source_file}
    # The model's and the optimizer's ops all name the user's file, none Flax's or Optax's.
    assert str(path) in files
    assert not [f for f in files if "site-packages" in f]
