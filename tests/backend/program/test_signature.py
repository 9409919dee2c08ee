from shardscope.backend.program.signature import ArgumentLine, argument_line

SOURCE = '''"""A program."""
import jax


def helper(params, x):
    return x


def step(
    params,
    tokens,
    *,
    scale=1.0,
):
    return helper(params, tokens)


PROGRAM = jax.jit(step, donate_argnums=0)
'''


def test_the_parameter_line_of_the_program_function():
    assert argument_line(SOURCE, "params['layers'][0]['w_out']") == ArgumentLine(10, "step", True)
    assert argument_line(SOURCE, "tokens") == ArgumentLine(11, "step", True)
    assert argument_line(SOURCE, "scale") == ArgumentLine(13, "step", True)
    # a name that is no parameter: the def line
    assert argument_line(SOURCE, "result[0]") == ArgumentLine(9, "step", False)


def test_a_file_without_program_or_its_def_gives_none():
    assert argument_line("def f(x):\n    return x\n", "x") is None
    assert argument_line("import m\nPROGRAM = m.f\n", "x") is None


def test_lines_with_gaps_are_searched_line_by_line():
    # a saved session keeps lines around ops: the text does not parse as a whole
    kept = "\n".join(["", "def mlp(params,", "        x):", "    with (", "", "PROGRAM = mlp"])
    assert argument_line(kept, "x") == ArgumentLine(3, "mlp", True)
    assert argument_line(kept, "params['w1']") == ArgumentLine(2, "mlp", True)
    assert argument_line(kept, "other") == ArgumentLine(2, "mlp", False)
    assert argument_line("    with (\n", "x") is None


def test_the_examples_own_signatures():
    from pathlib import Path

    import shardscope

    text = (Path(shardscope.__file__).parent / "assets/examples/mlp.py").read_text()
    found = argument_line(text, "x")
    assert found is not None and found.exact
    assert text.splitlines()[found.line - 1].startswith("def mlp(params, x)")


def test_a_captured_function_is_found_at_its_recorded_line():
    script = "import jax\n\n\n@jax.jit\ndef predict(w, x):\n    return x @ w\n\n\ndef loss(w,\n         x):\n    return 0\n"
    # the capture records a decorated function's first decorator line
    assert argument_line(script, "x", def_line=4) == ArgumentLine(5, "predict", True)
    assert argument_line(script, "x", def_line=9) == ArgumentLine(10, "loss", True)
    assert argument_line(script, "y", def_line=9) == ArgumentLine(9, "loss", False)
    assert argument_line(script, "x", def_line=6) is None
    # lines with gaps (a saved session's): the def at or below the line
    kept = script.replace("import jax", "    with (")
    assert argument_line(kept, "x", def_line=4) == ArgumentLine(5, "predict", True)


def test_the_site_of_a_programs_function():
    from shardscope.backend.program.load import load_program
    from shardscope.backend.program.signature import signature_site
    from tests.support.inputs import MLIR

    program = load_program("example:mlp")
    path, line = signature_site(program)
    assert path == program.path
    assert open(path).read().splitlines()[line - 1].startswith("def mlp(")
    program.def_site = ("/a/script.py", 21)  # a capture's: as recorded
    assert signature_site(program) == ("/a/script.py", 21)
    assert signature_site(load_program(str(MLIR / "plain.mlir"))) is None
