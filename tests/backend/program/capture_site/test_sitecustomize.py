"""The hook capture puts in a script's Python: counts runs of jitted functions, keeps
jax.jit's behaviour, stops at a step limit, and hides nothing else."""

import json
import os
import subprocess
import sys

import pytest

from shardscope.backend.program.capture import SITE


def run_hooked(tmp_path, code, *, capture=True, steps=None, extra_path=None, dump=None):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    for name in ("SHARDSCOPE_CAPTURE_DIR", "SHARDSCOPE_CAPTURE_STEPS", "JAX_DUMP_IR_TO"):
        env.pop(name, None)
    if dump is not None:
        env.update(JAX_DUMP_IR_TO=str(dump), JAX_DUMP_IR_MODES="stablehlo")
    if capture:
        env["SHARDSCOPE_CAPTURE_DIR"] = str(tmp_path)
    if steps is not None:
        env["SHARDSCOPE_CAPTURE_STEPS"] = str(steps)
    env["PYTHONPATH"] = os.pathsep.join([str(SITE), *([str(extra_path)] if extra_path else [])])
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    records = tmp_path / "functions.json"
    functions = json.loads(records.read_text())["functions"] if records.exists() else None
    return proc, functions


@pytest.mark.slow
def test_runs_are_counted_and_jit_behaves_as_before(tmp_path):
    code = (
        "import functools, jax, jax.numpy as jnp\n"
        "@jax.jit\n"
        "def inner(x):\n"
        "    return x * 2\n"
        "@functools.partial(jax.jit, static_argnames='n')\n"
        "def outer(x, n):\n"
        "    return inner(x) + n\n"
        "class Model:\n"
        "    @functools.partial(jax.jit, static_argnums=0)\n"
        "    def apply(self, x):\n"
        "        return x + 1\n"
        "m = Model()\n"
        "assert float(outer(jnp.float32(1), n=3)) == 5.0\n"
        "assert float(outer(jnp.float32(1), n=3)) == 5.0\n"
        "assert float(m.apply(jnp.float32(1))) == 2.0\n"
        "assert 'stablehlo' in outer.lower(jnp.float32(1), n=3).as_text()\n"
        "print(inner.__name__)\n"
    )
    proc, functions = run_hooked(tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "inner"
    calls = {f["name"]: f["calls"] for f in functions}
    assert calls == {"inner": 0, "outer": 2, "apply": 1}


@pytest.mark.slow
def test_each_compile_counts_the_runs_that_ran_it(tmp_path):
    # A float that is not static compiles once for any value; a new shape compiles again.
    code = (
        "import jax, jax.numpy as jnp\n"
        "f = jax.jit(lambda x, y: x * y)\n"
        "sizes = []\n"
        "for n, y in [(3, 1.0), (3, 2.0), (4, 2.0), (3, 3.0), (4, 5.0)]:\n"
        "    f(jnp.ones(n), y)\n"
        "    sizes.append(f._cache_size())\n"
        "print(*sizes)\n"
    )
    dump = tmp_path / "dump"
    proc, functions = run_hooked(tmp_path, code, dump=dump)
    assert proc.returncode == 0, proc.stderr
    # the plain count: the jit held one compile after the first call, two from the third
    assert proc.stdout.split() == ["1", "1", "2", "2", "2"]
    (record,) = functions
    dumped = sorted(p.name for p in dump.glob("*_compile.mlir") if "_lambda" in p.name)
    assert record["calls"] == 5
    # the fourth call (a new float after the other shape) ran the first compile again
    assert list(record["compiles"].items()) == [(dumped[0], 3), (dumped[1], 2)]


@pytest.mark.slow
def test_the_step_limit_ends_the_script_cleanly(tmp_path):
    code = "import jax\nf = jax.jit(lambda x: x)\nfor i in range(50):\n    f(i)\nprint('end')\n"
    proc, functions = run_hooked(tmp_path, code, steps=3)
    assert proc.returncode == 0 and "end" not in proc.stdout
    assert functions == [{"name": "<lambda>", "file": "<string>", "line": 2, "calls": 3}]
    assert (tmp_path / "stopped").exists()


def test_without_a_capture_it_does_nothing_and_a_hidden_sitecustomize_still_runs(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import builtins\nbuiltins.HIDDEN_RAN = True\n")
    code = (
        "import builtins, sys\nprint(getattr(builtins, 'HIDDEN_RAN', False), 'jax' in sys.modules)"
    )
    proc, functions = run_hooked(tmp_path, code, capture=False, extra_path=other)
    assert proc.stdout.split() == ["True", "False"] and functions is None


@pytest.mark.slow
def test_an_equinox_functions_arguments_are_named_by_the_users_paths(tmp_path):
    pytest.importorskip("equinox", reason="equinox is not installed: pip install -e '.[models]'")
    code = (
        "import equinox as eqx, jax, jax.numpy as jnp\n"
        "@eqx.filter_jit\n"
        "def step(model, batch, *, scale):\n"
        "    return model(batch['x']) * scale\n"
        "model = eqx.nn.Linear(3, 2, key=jax.random.key(0))\n"
        "x = jnp.ones(3)\n"
        "step(model, {'x': x, 'n': 3}, scale=jnp.float32(2))\n"
        "plain = jax.jit(lambda v: v + 1)\n"
        "plain(x)\n"
    )
    proc, functions = run_hooked(tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    by_name = {f["name"]: f for f in functions}
    # Each array among the arguments by its path in the user's call; the int stays static.
    names = by_name["step"]["arg_names"]
    assert sorted(names.values()) == ["batch['x']", "model.bias", "model.weight", "scale"]
    assert all(old != new for old, new in names.items())
    assert by_name["step"]["file"] == "<string>" and by_name["step"]["line"] == 2
    assert "arg_names" not in by_name["<lambda>"]


def test_the_python_that_launches_the_command_is_left_alone(tmp_path):
    # The launcher (isolation.start.exec_command) becomes the user's command: importing
    # jax there, or running the user's own sitecustomize, would only delay the command.
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('yes')\n")
    env = {
        **os.environ,
        "SHARDSCOPE_CAPTURE_DIR": str(tmp_path),
        "PYTHONPATH": os.pathsep.join([str(SITE), str(own)]),
    }
    probe = "import sys; print('jax' in sys.modules)"

    def jax_imported(**extra) -> bool:
        out = subprocess.run(
            [sys.executable, "-c", probe], env={**env, **extra}, capture_output=True, text=True
        )
        return out.stdout.strip() == "True"

    assert not jax_imported(SHARDSCOPE_COMMAND_LAUNCHER="1")
    assert not (tmp_path / "ran").exists()
    assert jax_imported()  # the command's own Python: the capture is on
    assert (tmp_path / "ran").read_text() == "yes"
