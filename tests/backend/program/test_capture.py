"""Capturing an unmodified script: what it jits, with its shardings, calls and limits."""

import re
import subprocess
import sys

import pytest

from shardscope.backend.errors import ProgramError
from shardscope.backend.isolation.worker_job import worker_env
from shardscope.backend.program.capture import (
    capture_script,
    count_ops,
    module_mesh_text,
    module_name_of,
)
from shardscope.backend.program.load import load_program
from shardscope.backend.propagation.propagate import propagate
from tests.support.inputs import write_input

TRAIN = "tests/inputs/capture/train.py"
RESHARDED = "tests/inputs/capture/resharded.py"


@pytest.fixture(scope="module")
def captured():
    return capture_script([sys.executable, TRAIN, "3"])


@pytest.mark.slow
def test_both_jitted_functions_are_captured_with_calls_mesh_and_place(captured):
    assert captured.ended == "finished" and captured.devices == 8
    by_name = {f.name: f for f in captured.functions}
    assert set(by_name) == {"loss", "predict"}
    # grad(loss) ran three times, predict once: its calls traced inside loss are not runs
    assert by_name["loss"].calls == 3 and by_name["predict"].calls == 1
    assert by_name["loss"].mesh == {"data": 2, "model": 4}
    lines = open(TRAIN).read().splitlines()
    predict = by_name["predict"]
    assert predict.file.endswith("train.py")
    # a decorated function's first line is its decorator's, as Python counts it
    assert lines[predict.line - 1] == "@jax.jit" and lines[predict.line] == "def predict(w, x):"
    # JAX's eager operations (w - 0.1 * g) are counted, not kept
    assert captured.skipped and all(not m.endswith(("_loss", "_predict")) for m in captured.skipped)


@pytest.mark.slow
def test_a_captured_function_propagates_with_the_scripts_shardings(captured, tmp_path):
    from shardscope.backend.session.persistence import write_json

    path = tmp_path / "cap.json"
    write_json(path, captured.to_json())
    program = load_program(f"{path}#loss")
    assert program.kind == "capture" and program.name == "loss"
    assert program.mesh == {"data": 2, "model": 4}
    result = propagate(program, None, {})
    specs = {v.name: v.spec for v in result.values if v.name}
    assert specs["w"] == [[], ["model"]] and specs["x"] == [["data"], []]
    largest = load_program(str(path))
    assert largest.name == max(captured.functions, key=lambda f: f.ops).name


@pytest.mark.slow
def test_steps_stop_a_training_loop_early(tmp_path):
    marker = tmp_path / "after.txt"
    script = write_input(
        tmp_path,
        "loop.py",
        "import jax\n"
        "step = jax.jit(lambda x: x * 2)\n"
        "for i in range(1000):\n"
        "    step(1.0)\n"
        f"open({str(marker)!r}, 'w').write('ran to the end')\n",
    )
    capture = capture_script([sys.executable, script], steps=2)
    assert capture.ended == "stopped after --steps" and not marker.exists()
    (function,) = capture.functions
    assert function.name == "<lambda>" and function.calls == 2


@pytest.mark.slow
def test_a_recompiled_function_is_kept_once_per_compile(tmp_path):
    script = write_input(
        tmp_path,
        "shapes.py",
        "import jax.numpy as jnp, jax\n"
        "f = jax.jit(lambda x: x + 1)\n"
        "f(jnp.ones(3)); f(jnp.ones(4)); f(jnp.ones(4))\n",
    )
    capture = capture_script([sys.executable, script])
    # each compile with its own runs: the first shape once, the second twice
    assert [(f.name, f.calls) for f in capture.functions] == [("<lambda>", 1), ("<lambda>.2", 2)]


def _runs_per_compile(output: str) -> list[int]:
    """Each compile's runs, in the order of the compiles, as the script's plain run says
    them: a call whose compile count grew ran a new compile, kept for its params' spec."""
    runs: list[int] = []
    by_spec: dict[str, int] = {}
    compiles = 0
    for line in output.splitlines():
        m = re.fullmatch(r"call \d+: params (.*), compiles (\d+)", line)
        if m is None:
            continue
        spec, now = m[1], int(m[2])
        if now > compiles:
            assert spec not in by_spec and now == compiles + 1
            by_spec[spec] = len(runs)
            runs.append(0)
        compiles = now
        runs[by_spec[spec]] += 1
    return runs


@pytest.mark.slow
def test_a_function_compiled_again_for_other_shardings_counts_each_compiles_runs():
    plain = subprocess.run(
        [sys.executable, RESHARDED],
        env=worker_env(8),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    runs = _runs_per_compile(plain.stdout)
    assert len(runs) == 2 and sum(runs) == 3
    capture = capture_script([sys.executable, RESHARDED])
    assert [f.name for f in capture.functions] == ["update", "update.2"]
    assert [f.calls for f in capture.functions] == runs


@pytest.mark.parametrize(
    ("argv", "kwargs", "message"),
    [
        ([], {}, "no command to capture"),
        (["no-such-command-here"], {}, "no such command"),
        ([sys.executable, "-c", "pass"], {"devices": 0}, "--devices 0"),
        ([sys.executable, "-c", "pass"], {"steps": 0}, "--steps 0"),
    ],
)
def test_bad_requests_are_one_line_errors(argv, kwargs, message):
    with pytest.raises(ProgramError, match=message) as info:
        capture_script(argv, **kwargs)
    assert "\n" not in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("import jax\nprint('no jit here')\n", "compiled nothing with jax.jit"),
        ("import jax.numpy as jnp\nprint(jnp.ones(3) * 2)\n", r"eager operation\(s\) only"),
        ("raise SystemExit(3)\n", "exited with status 3"),
        ("import time\ntime.sleep(60)\n", "stopped after 2 s"),
    ],
)
def test_a_script_that_compiles_nothing_says_why(tmp_path, code, message):
    script = write_input(tmp_path, "s.py", code)
    with pytest.raises(ProgramError, match=message) as info:
        capture_script([sys.executable, script], timeout=2 if "sleep" in code else 120)
    assert "\n" not in str(info.value)


def test_module_names_mesh_and_op_counts_are_read_from_the_text():
    assert module_name_of("<lambda>") == "jit__lambda" == module_name_of("_lambda")
    assert module_name_of("loss") == "jit_loss"
    text = (
        'sdy.mesh @empty_mesh = <[]>\nsdy.mesh @mesh = <["data"=2, "model"=4]>\n'
        "  %0 = stablehlo.add %a, %b : tensor<f32>\n  %1 = sdy.sharding_constraint %0\n"
    )
    assert module_mesh_text(text) == {"data": 2, "model": 4}
    assert count_ops(text) == 2
    assert count_ops("[" * 5000) == 0


def test_arguments_are_renamed_by_the_users_paths_in_one_pass():
    from shardscope.backend.program.capture import by_user_names

    text = (
        'func.func public @main(%arg0: tensor<2xf32> loc("a[0]"), %arg1: tensor<2xf32> '
        'loc("a[1]"), %arg2: tensor<f32> loc("x")) {\n#loc1 = loc("a[0]")\n'
    )
    names = {"a[0]": "a[1]", "a[1]": "a[0]", "x": None, "q": "w['k\"']"}
    renamed = by_user_names(text, names)
    # Two names swapped stay swapped: not renamed one after the other.
    assert renamed.count('loc("a[1]")') == 2 and renamed.count('loc("a[0]")') == 1
    # A name two calls gave two ways (None) stays JAX's.
    assert 'loc("x")' in renamed
    assert by_user_names(text, None) == text == by_user_names(text, {})
    # A quote in the user's path is escaped as MLIR reads it.
    assert by_user_names('loc("q")', names) == 'loc("w[\'k\\"\']")'
