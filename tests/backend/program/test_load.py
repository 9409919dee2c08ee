"""Loading programs: built-in examples, Python files, .mlir files, and bad input."""

import os
from pathlib import Path

import pytest

from shardscope.backend.errors import ProgramError
from shardscope.backend.isolation.forkserver import shared_server
from shardscope.backend.isolation.worker_job import Crash
from shardscope.backend.program.load import (
    EXAMPLES_DIR,
    _crash_message,
    list_examples,
    load_program,
    python_source,
    split_source,
)
from tests.support.inputs import MLIR, PROGRAMS, write_input

DATA = MLIR


@pytest.fixture(scope="module")
def examples():
    return {name: load_program(f"example:{name}") for name in list_examples()}


def test_builtin_examples_are_all_there():
    assert {"mlp", "attention", "transformer", "scan", "conflict", "matmul6"} <= set(
        list_examples()
    )


def test_every_example_loads_with_names_shapes_and_defaults(examples):
    for name, program in examples.items():
        assert program.kind == "example" and program.name == name
        assert program.path == str(EXAMPLES_DIR / f"{name}.py")
        assert program.mesh, f"{name} has no default MESH"
        graph = program.graph
        assert graph.ops, name
        args = graph.arguments
        assert all(v.role == "arg" and v.name for v in args)
        # every default spec names a real argument
        assert set(program.specs) <= set(program.arg_names), name
        assert program.result_names == [f"result[{i}]" for i in range(len(graph.results))]
        # every op of the entry function points at a line of the example file
        main_ops = [op for op in graph.ops if op.function == graph.main]
        assert any(op.source_file == program.path for op in main_ops), name


def test_mlp_names_shapes_roles_scopes_and_lines(examples):
    program = examples["mlp"]
    graph = program.graph
    assert program.arg_names == [
        "params['b1']",
        "params['b2']",
        "params['w1']",
        "params['w2']",
        "x",
    ]
    w1 = graph.value_by_name("params['w1']")
    assert w1.shape == (64, 256) and w1.dtype == "f32" and w1.role == "arg"
    out = graph.value_by_name("result[0]")
    assert out.role == "result" and out.shape == (32, 16)
    dots = [op for op in graph.ops if op.name == "stablehlo.dot_general"]
    assert [op.scope for op in dots] == ["layer1", "layer2"]
    source = Path(program.path).read_text().splitlines()
    for op in dots:
        assert "@" in source[op.source_line - 1], source[op.source_line - 1]
    tree = graph.scope_tree()
    assert set(tree.children) == {"layer1", "layer2"}
    assert program.specs["x"] == ["data", None]
    assert program.mesh == {"data": 4, "model": 2}


def test_transformer_layers_parameter_and_value_and_grad(examples):
    two = examples["transformer"]
    # JAX's name stack: forward ops under jvp(...), gradients under transpose(jvp(...))
    scopes = set(two.graph.scope_tree().children)
    assert {"jvp(layer_0)", "jvp(layer_1)", "transpose(jvp(layer_0))", "sgd"} <= scopes
    assert "jvp(layer_2)" not in scopes
    four = load_program("example:transformer?layers=4")
    assert four.params == {"layers": "4"}
    assert "params['layers'][3]['w_in']" in four.arg_names
    assert "transpose(jvp(layer_3))" in four.graph.scope_tree().children


def test_conflict_and_matmul6(examples):
    assert examples["conflict"].specs == {"x": ["data", None], "y": ["model", None]}
    m6 = examples["matmul6"]
    dots = [op for op in m6.graph.ops if op.name == "stablehlo.dot_general"]
    assert len(dots) == 6
    assert {op.scope for op in dots} == {
        "rows_cols",
        "contract",
        "contract_lhs",
        "rows_rows",
        "mismatch",
        "replicated",
    }


def test_pytree_program_with_kwargs_and_code_annotation():
    program = load_program(str(PROGRAMS / "pytree.py"))
    assert program.kind == "python"
    assert program.arg_names == [
        "params['layers'][0]['b']",
        "params['layers'][0]['w']",
        "params['layers'][1]['b']",
        "params['layers'][1]['w']",
        "batch['x']",
        "scale['s']",
    ]
    assert program.graph.value_by_name("scale['s']").shape == ()
    assert program.specs == {"batch['x']": ["data"]}
    (note,) = program.code_annotations
    assert note.sharding == '#sdy.sharding<@mesh, [{"data"}, {}]>'
    assert program.graph.values[note.value].shape == (4, 8)
    assert program.annotation_kind == "sdy"
    assert {"layer_0", "layer_1"} <= set(program.graph.scope_tree().children)


def test_split_source():
    assert split_source("example:transformer?layers=24") == (
        "example:transformer",
        {"layers": "24"},
    )
    assert split_source("a.py") == ("a.py", {})


@pytest.mark.parametrize("kind", ["plain", "sdy", "gspmd"])
def test_mlir_files_of_each_annotation_kind(kind):
    program = load_program(str(DATA / f"{kind}.mlir"))
    assert program.kind == "mlir"
    assert program.annotation_kind == {"plain": "none", "sdy": "sdy", "gspmd": "gspmd"}[kind]
    graph = program.graph
    assert program.arg_names == ["x", "w"]
    x = graph.value_by_name("x")
    assert x.shape == (16, 32) and x.role == "arg"
    assert [v.shape for v in graph.results] == [(16,), (16, 8)]
    (dot,) = [op for op in graph.ops if op.name == "stablehlo.dot_general"]
    assert dot.scope == "proj" and dot.source_line == 17
    assert dot.source_file.endswith("make_mlir.py")
    if kind == "sdy":
        assert program.mesh == {"data": 4, "model": 2}
        assert x.code_sharding == '#sdy.sharding<@mesh, [{"data"}, {}]>'
    elif kind == "gspmd":
        assert x.code_sharding == "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
    else:
        assert x.code_sharding is None and not program.code_annotations


# -- bad input ---------------------------------------------------------------------------


def test_missing_file_names_the_fix(tmp_path):
    with pytest.raises(ProgramError, match=r"no such file; give a \.py or \.mlir path") as err:
        load_program(str(tmp_path / "missing.json#step"))
    assert "a capture .json (FILE.json#NAME for one of its functions)" in str(err.value)


def test_unknown_example_lists_the_examples():
    with pytest.raises(ProgramError, match="choose one of: attention"):
        load_program("example:nope")


def test_program_that_hangs_times_out(tmp_path):
    path = write_input(tmp_path, "hang.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    with pytest.raises(ProgramError, match=r"did not finish within 3 s.*--timeout"):
        load_program(path, timeout=3)


def test_program_that_crashes_the_worker(tmp_path):
    path = write_input(tmp_path, "crash.py", "import os\nos.abort()\n")
    with pytest.raises(ProgramError, match="killed by SIGABRT"):
        load_program(path)


@pytest.fixture(params=["fork server", "fresh worker"])
def route(request):
    """Load through the warm fork server, or (with it busy) through a fresh worker."""
    if request.param == "fork server":
        yield request.param
        return
    server = shared_server()
    assert server.try_acquire()
    try:
        yield request.param
    finally:
        server.release()


def test_hangs_and_crashes_read_the_same_on_either_route(tmp_path, route):
    hang = write_input(tmp_path, "hang.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    with pytest.raises(ProgramError) as info:
        load_program(hang, timeout=2)
    assert str(info.value) == (
        f"{hang}: loading did not finish within 2 s (does the program loop or wait forever?); "
        f"fix it, or allow more time with --timeout"
    )
    crash = write_input(
        tmp_path,
        "crash.py",
        "import os, sys\nprint('giving up', file=sys.stderr, flush=True)\nos.abort()\n",
    )
    with pytest.raises(ProgramError) as info:
        load_program(crash)
    assert str(info.value) == (
        f"{crash}: the worker loading this program was killed by SIGABRT (last output: "
        f"giving up); the program or the compiler crashed: run the file with python directly "
        f"to see the full error"
    )


def test_malformed_mlir_names_line_and_fix(tmp_path):
    path = write_input(
        tmp_path,
        "bad.mlir",
        "module {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %0 = stablehlo.addd %a, %a : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n",
    )
    with pytest.raises(ProgramError) as info:
        load_program(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: malformed MLIR:") and "stablehlo.addd" in message
    assert "as_text()" in message


def test_mlir_without_function(tmp_path):
    path = write_input(tmp_path, "empty.mlir", "module {\n}\n")
    with pytest.raises(ProgramError, match="no func.func"):
        load_program(path)


def test_unknown_file_type(tmp_path):
    path = write_input(tmp_path, "prog.txt", "hello")
    with pytest.raises(ProgramError, match="unknown file type '.txt'"):
        load_program(path)


def test_a_program_without_mesh_takes_its_own_shardings_mesh():
    from shardscope.backend.program.load import own_mesh

    program = load_program(str(PROGRAMS / "own_mesh_axes.py"))
    assert program.mesh == {"dp": 2, "tp": 2}
    assert own_mesh('sdy.mesh @empty = <[]>\nsdy.mesh @m2 = <["a"=2, "b"=4]>') == {"a": 2, "b": 4}
    assert own_mesh("module {}") is None


def test_a_loader_killed_for_memory_says_so():
    message = _crash_message(Path("/x/big.py"), Crash(-6, "std::bad_alloc", out_of_memory=True))
    assert message.startswith("/x/big.py: loading this program ran out of memory")
    plain = _crash_message(Path("/x/big.py"), Crash(-11, None))
    assert "was killed by SIGSEGV" in plain


def test_python_source_names_only_python_programs_that_exist(tmp_path):
    path, params, name = python_source("example:transformer?layers=3")
    assert name == "transformer" and params == {"layers": "3"}
    assert path.is_absolute() and path.name == "transformer.py"
    program = tmp_path / "prog.py"
    program.write_text("PROGRAM = 1\n")
    assert python_source(str(program)) == (program.resolve(), {}, None)
    assert python_source(f"{program}?rows=6") == (program.resolve(), {"rows": "6"}, None)
    (tmp_path / "folder.py").mkdir()
    os.mkfifo(tmp_path / "fifo.py")
    for other in (
        "example:nope",
        str(tmp_path / "missing.py"),
        str(tmp_path / "folder.py"),
        str(tmp_path / "fifo.py"),
        str(tmp_path / "module.mlir"),
        f"{tmp_path / 'capture.json'}#f",
    ):
        assert python_source(other) is None, other
