"""The lowering worker: a user's program imported, traced and lowered, or one line saying why.

The tests through ``load_program`` run the worker as loading does; the others call it in
this process.
"""

import json

import pytest

from shardscope.backend.errors import ProgramError
from shardscope.backend.program.load import load_program
from shardscope.backend.program.lower import lower_program, main
from tests.support.inputs import write_input


def _run_worker(tmp_path, path, params=None):
    """What the worker writes for ``path``, run in this process."""
    out = tmp_path / "out.json"
    assert main([path, json.dumps(params or {}), str(out)]) == 0
    return json.loads(out.read_text())


PROGRAM = """
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

ROWS = int(SHARDSCOPE_PARAMS.get("rows", "4"))

def f(x, w):
    return jnp.tanh(x @ w)

PROGRAM = f
EXAMPLE_ARGS = (jnp.ones((ROWS, 8)), jnp.ones((8, 2)))
MESH = {"data": 2, "model": 2}
SPECS = {"x": P("data", None), "w": P(None, ("data", "model"))}
"""


def test_a_program_is_lowered_with_its_mesh_and_specs(tmp_path):
    path = write_input(tmp_path, "prog.py", PROGRAM)
    result = lower_program(path, {"rows": "6"})
    assert result["ok"] is True
    assert "func.func public @main" in result["mlir_text"]
    assert "tensor<6x8xf32>" in result["mlir_text"]  # SHARDSCOPE_PARAMS reached the program
    assert result["mesh"] == {"data": 2, "model": 2}
    assert result["specs"] == {"x": ["data", None], "w": [None, ["data", "model"]]}
    assert result["seconds"] >= 0


def test_the_worker_writes_its_result_as_json(tmp_path):
    path = write_input(tmp_path, "prog.py", PROGRAM)
    result = _run_worker(tmp_path, path)
    assert result["ok"] is True and "tensor<4x8xf32>" in result["mlir_text"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("PROGRAM = 3\n", "PROGRAM is a int, not a function; set it to the function to shard"),
        ("import sys\nsys.exit(4)\n", "the program called exit(4) while being imported"),
        (
            "import jax.numpy as jnp\nPROGRAM = lambda x: x\nEXAMPLE_ARGS = (jnp.ones(2),)\n"
            "SPECS = {'x': 'data'}\n",
            "SPECS must be a dict of argument name -> PartitionSpec, or one entry per argument as jax.jit's in_shardings: a spec must be a jax.sharding.PartitionSpec (P('data', None)) or a NamedSharding, not str",
        ),
        (
            "import jax.numpy as jnp\nPROGRAM = lambda x: x\nEXAMPLE_ARGS = (jnp.ones(2),)\n"
            "EXAMPLE_KWARGS = [1]\n",
            "EXAMPLE_KWARGS must be a dict of keyword -> array",
        ),
    ],
)
def test_a_bad_program_is_reported_in_one_line_naming_the_file(tmp_path, text, message):
    path = write_input(tmp_path, "bad.py", text)
    result = _run_worker(tmp_path, path)
    assert result["ok"] is False
    assert result["error"].startswith(f"{path}: ") and message in result["error"]
    assert "\n" not in result["error"]


def test_tracing_errors_name_the_users_line(tmp_path):
    path = write_input(
        tmp_path,
        "shapes.py",
        "import jax.numpy as jnp\n\ndef f(x, w):\n    return x @ w\n\n"
        "PROGRAM = f\nEXAMPLE_ARGS = (jnp.ones((2, 3)), jnp.ones((4, 5)))\n",
    )
    error = _run_worker(tmp_path, path)["error"]
    assert error.startswith(f"{path}:4: TypeError: ")
    assert error.endswith(
        "(raised while tracing and lowering PROGRAM with EXAMPLE_ARGS); "
        "fix the program and load it again"
    )


def test_syntax_error_names_file_and_line(tmp_path):
    path = write_input(tmp_path, "bad.py", "import jax\n\ndef f(x:\n    return x\n")
    with pytest.raises(ProgramError) as info:
        load_program(path)
    assert str(info.value).startswith(f"{path}:3: SyntaxError")
    assert "\n" not in str(info.value)


def test_missing_program_names_the_fix(tmp_path):
    path = write_input(tmp_path, "empty.py", "X = 1\n")
    with pytest.raises(ProgramError, match=r"defines no PROGRAM; add `PROGRAM = <your function>`"):
        load_program(path)


def test_missing_example_args(tmp_path):
    path = write_input(tmp_path, "noargs.py", "PROGRAM = lambda x: x\n")
    with pytest.raises(ProgramError, match="defines no EXAMPLE_ARGS"):
        load_program(path)


def test_program_that_raises_names_the_line(tmp_path):
    path = write_input(
        tmp_path,
        "raises.py",
        "import jax.numpy as jnp\n\ndef f(x):\n    y = x + 1\n    raise ValueError('bad shape')\n\n"
        "PROGRAM = f\nEXAMPLE_ARGS = (jnp.ones(3),)\n",
    )
    with pytest.raises(ProgramError) as info:
        load_program(path)
    assert str(info.value).startswith(f"{path}:5: ValueError: bad shape")


def test_program_that_raises_at_import(tmp_path):
    path = write_input(tmp_path, "boom.py", "x = 1\nraise RuntimeError('no config')\n")
    with pytest.raises(ProgramError, match=r"boom\.py:2: RuntimeError: no config"):
        load_program(path)


def test_bad_mesh_default(tmp_path):
    path = write_input(
        tmp_path,
        "mesh.py",
        "import jax.numpy as jnp\nPROGRAM = lambda x: x\nEXAMPLE_ARGS = (jnp.ones(2),)\nMESH = {'data': 0}\n",
    )
    with pytest.raises(ProgramError, match="MESH must be a dict of axis name -> size >= 1"):
        load_program(path)


def test_a_program_error_is_shown_whole(tmp_path):
    # Equinox-style messages name the offending argument on a later line.
    path = write_input(
        tmp_path,
        "multi.py",
        "def f(x):\n    return x\n\n"
        "raise TypeError('bad arguments\\n\\n  while checking\\n  argument `w` has the wrong shape')\n",
    )
    with pytest.raises(ProgramError) as info:
        load_program(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4: TypeError: bad arguments")
    assert "argument `w` has the wrong shape" in message
    assert message.endswith(
        "(raised while importing the program); fix the program and load it again"
    )


def test_a_program_that_runs_out_of_memory_says_so(tmp_path):
    path = write_input(tmp_path, "oom.py", "raise MemoryError()\n")
    with pytest.raises(ProgramError) as info:
        load_program(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:1: the program ran out of memory")


REAL_CODE = """
import dataclasses
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

# A concrete mesh built at import, as the Flax guide does: needs 8 devices in the worker.
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Model:
    w1: jax.Array
    w2: jax.Array
    # A non-array leaf, as an Equinox Module's activation function.
    activation: object


def step(model, x):
    return model.activation(x @ model.w1) @ model.w2


PROGRAM = step
EXAMPLE_ARGS = (
    Model(jnp.ones((8, 16)), jnp.ones((16, 4)), jax.nn.relu),
    jax.ShapeDtypeStruct((32, 8), jnp.float32),
)
MESH = mesh
# A pytree prefix per argument, as jax.jit's in_shardings: None leaves w2 unspecified.
SPECS = (Model(P(None, "model"), None, None), P("data", None))
"""


def test_a_concrete_mesh_a_pytree_of_specs_and_a_non_array_leaf(tmp_path):
    path = write_input(tmp_path, "real.py", REAL_CODE)
    program = load_program(path)
    assert program.mesh == {"data": 2, "model": 4}
    # JAX's own key paths, the static activation left out of the arguments.
    assert program.arg_names == ["model.w1", "model.w2", "x"]
    assert program.specs == {"model.w1": [None, "model"], "x": ["data", None]}


def test_a_mesh_larger_than_the_default_devices_is_loaded_with_as_many(tmp_path):
    path = write_input(
        tmp_path,
        "big.py",
        "import jax, jax.numpy as jnp\n"
        "mesh = jax.make_mesh((4, 4), ('data', 'model'))\n"
        "PROGRAM = lambda x: x * 2\n"
        "EXAMPLE_ARGS = (jax.ShapeDtypeStruct((16, 8), jnp.float32),)\n"
        "MESH = mesh\n",
    )
    program = load_program(path)
    assert program.mesh == {"data": 4, "model": 4}


def test_the_worker_names_the_devices_a_larger_mesh_needs(tmp_path):
    path = write_input(
        tmp_path,
        "big.py",
        "import jax\nmesh = jax.make_mesh((4, 4), ('data', 'model'))\n",
    )
    result = _run_worker(tmp_path, path)
    # This process has 64 devices (tests/conftest.py): the mesh fits, so no request.
    assert "devices" not in result
    assert "defines no PROGRAM" in result["error"]


def test_an_abstract_mesh_keeps_its_axis_types(tmp_path):
    path = write_input(
        tmp_path,
        "explicit.py",
        "import jax, jax.numpy as jnp\n"
        "from jax.sharding import AbstractMesh, AxisType, PartitionSpec as P\n"
        "def f(x):\n    return jnp.sin(x)\n"
        "PROGRAM = f\n"
        "EXAMPLE_ARGS = (jax.ShapeDtypeStruct((16, 8), jnp.float32),)\n"
        "MESH = AbstractMesh((4, 2), ('data', 'model'), axis_types=(AxisType.Explicit,) * 2)\n"
        "SPECS = {'x': P('data', None)}\n",
    )
    result = _run_worker(tmp_path, path)
    assert result["mesh"] == {"data": 4, "model": 2}
    # Explicit axes: the argument's type carries its sharding, and the sine is constrained.
    text = result["mlir_text"]
    assert '{sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")' in text
    assert 'sdy.sharding_constraint %0 <@mesh, [{"data"}, {}]>' in text


def test_a_multi_line_error_is_reported_whole_with_the_users_line(tmp_path):
    path = write_input(
        tmp_path,
        "multi.py",
        "def f(x):\n    return x\n\n"
        "raise ValueError('Error interpreting argument to _JitWrapper(\\n"
        "  fn=f\\n)\\nThe argument model.activation is not an array')\n",
    )
    error = _run_worker(tmp_path, path)["error"]
    assert error.startswith(f"{path}:4: ValueError: Error interpreting argument to _JitWrapper(")
    assert "The argument model.activation is not an array" in error
    assert error.endswith("(raised while importing the program); fix the program and load it again")


def test_a_spec_on_an_argument_used_only_for_its_shape_is_a_warning_not_an_error():
    import runpy

    import jax

    from tests.support.inputs import PROGRAMS

    path = PROGRAMS / "shape_only_arg.py"
    ns = runpy.run_path(str(path))
    lowering = jax.jit(ns["PROGRAM"]).lower(*ns["EXAMPLE_ARGS"])._lowering
    assert sorted(lowering.compile_args["kept_var_idx"]) == [0]  # jax drops n
    program = load_program(str(path))
    assert program.arg_names == ["x"]
    assert program.specs == {"x": ["data"]}
    assert len(program.warnings) == 1 and program.warnings[0].startswith(
        "the spec of n in SPECS shards nothing"
    )
