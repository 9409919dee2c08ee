"""``shardscope.inspect``: the API on the built-in examples and on JAX's own idioms, checked
against ``propagate --json`` and against the compiler."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.inputs import REPO

EXAMPLES = REPO / "assets" / "examples"

# Run in a fresh interpreter with 8 fake CPU devices: each idiom is inspected with
# shardscope and compiled with jax.jit(...).lower(...).compile(); the HloSharding texts of
# every argument and result are printed for both.
IDIOMS = textwrap.dedent(
    """
    import json
    from functools import partial

    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    import shardscope

    def hlo(shardings, shapes):
        return [str(s._to_xla_hlo_sharding(len(sh))) for s, sh in zip(shardings, shapes)]

    def compiled(jitted, *args):
        c = jitted.lower(*args).compile()
        ins = jax.tree.leaves(c.input_shardings[0])
        outs = jax.tree.leaves(c.output_shardings)
        in_shapes = [a.shape for a in jax.tree.leaves(args)]
        out_shapes = [o.shape for o in jax.tree.leaves(c.out_info)]
        return hlo(ins, in_shapes), hlo(outs, out_shapes)

    def ours(result):
        args = [v["hlo_sharding"] for v in result.to_json()["values"] if v["role"] == "arg"]
        outs = sorted(
            (v for v in result.to_json()["values"] if v["role"] == "result"),
            key=lambda v: int(v["name"][len("result["):-1]),
        )
        return args, [v["hlo_sharding"] for v in outs]

    x = jax.ShapeDtypeStruct((16, 32), jnp.float32)
    w = jax.ShapeDtypeStruct((32, 64), jnp.float32)
    out = {}

    # A concrete mesh from jax.make_mesh (Explicit axes, its default) and jit's in_shardings.
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    assert mesh.axis_types == (AxisType.Explicit, AxisType.Explicit)
    def matmul(x, w):
        return jnp.tanh(x @ w)
    shardings = (NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model")))
    out["make_mesh"] = (
        ours(shardscope.inspect(matmul, x, w, in_shardings=shardings)),
        compiled(jax.jit(matmul, in_shardings=shardings), x, w),
    )

    # with_sharding_constraint on a concrete NamedSharding (Auto axes).
    auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    def constrained(x, w):
        y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(auto, P("data", "model")))
        return jnp.sin(y), y.sum(axis=0)
    shardings = (NamedSharding(auto, P("data", None)), None)
    out["with_sharding_constraint"] = (
        ours(shardscope.inspect(constrained, x, w, in_shardings=shardings)),
        compiled(jax.jit(constrained, in_shardings=shardings), x, w),
    )

    # shard_map over a concrete mesh.
    def mapped(x, w):
        @partial(jax.shard_map, mesh=auto, in_specs=(P("data", None), P()), out_specs=P("data", None))
        def local(a, b):
            return jnp.tanh(a @ b)
        return local(x, w) * 2.0
    out["shard_map"] = (
        ours(shardscope.inspect(mapped, x, w, mesh=auto)),
        compiled(jax.jit(mapped), x, w),
    )

    # Explicit axes: arguments typed with their shardings, reshard inside, jax.set_mesh.
    def resharded(x, w):
        y = jax.sharding.reshard(x, P(None, "model"))
        return y * 2.0, x @ w
    xs = jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P("data", None)))
    with jax.set_mesh(mesh):
        out["reshard"] = (
            ours(shardscope.inspect(resharded, xs, w)),
            compiled(jax.jit(resharded), xs, w),
        )
    print(json.dumps(out))
    """
)


def _fresh_python(code: str, devices: int) -> str:
    env = {
        **os.environ,
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
        "JAX_PLATFORMS": "cpu",
    }
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.slow
def test_jax_idioms_agree_with_the_compiler_on_every_argument_and_result():
    results = json.loads(_fresh_python(IDIOMS, 8).strip().splitlines()[-1])
    assert set(results) == {"make_mesh", "with_sharding_constraint", "shard_map", "reshard"}
    for name, (ours, theirs) in results.items():
        assert ours == theirs, name
    # The idioms shard something: the comparison is not between replicated programs.
    assert any("devices=" in s for s in results["make_mesh"][0][0])
    assert any("devices=" in s for s in results["reshard"][0][1])


def _cli_json(source: str) -> dict:
    proc = subprocess.run(
        [sys.executable, str(REPO / "main.py"), "propagate", source, "--json"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def _inspect_example(name: str, params: dict | None = None):
    import shardscope

    ns = runpy.run_path(
        str(EXAMPLES / f"{name}.py"),
        init_globals={"SHARDSCOPE_PARAMS": dict(params or {})},
        run_name="__shardscope__",
    )
    return shardscope.inspect(
        ns["PROGRAM"],
        *ns["EXAMPLE_ARGS"],
        mesh=ns["MESH"],
        in_shardings=ns["SPECS"],
        **(ns.get("EXAMPLE_KWARGS") or {}),
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("mlp", "example:mlp"),
        ("conflict", "example:conflict"),
        ("attention", "example:attention"),
        ("scan", "example:scan"),
        ("matmul6", "example:matmul6"),
        ("transformer", "example:transformer?layers=1"),
    ],
)
def test_to_json_equals_propagate_json(name, source):
    params = {"layers": "1"} if "?" in source else None
    ours = _inspect_example(name, params).to_json()
    theirs = _cli_json(source)
    # "program" names the source: the file's stem for the CLI, the function's name here
    # (scan.py's function is rnn, transformer.py's train_step).
    assert ours.pop("program") in (name, "rnn", "train_step")
    theirs.pop("program")
    assert ours == theirs
    assert ours["steps"]


def test_import_shardscope_loads_neither_jax_nor_qt():
    code = (
        "import sys, shardscope; "
        "print(callable(shardscope.inspect), 'jax' in sys.modules, 'PySide6' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "False", "False"], out.stderr


NO_DEVICES = textwrap.dedent(
    """
    import jax, jax.numpy as jnp
    from jax.sharding import AbstractMesh, AxisType, PartitionSpec as P
    import shardscope
    assert len(jax.devices()) == 1
    mesh = AbstractMesh((4, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    def f(x, w):
        return x @ w
    x = jax.ShapeDtypeStruct((16, 32), jnp.float32)
    w = jax.ShapeDtypeStruct((32, 64), jnp.float32)
    r = shardscope.inspect(f, x, w, mesh=mesh, in_shardings=(P("data", None), P(None, "model")))
    print(r.to_json()["mesh"], r.value("result[0]").spec)
    """
)


@pytest.mark.slow
def test_a_mesh_larger_than_the_callers_devices_needs_no_devices():
    out = _fresh_python(NO_DEVICES, 1).strip().splitlines()[-1]
    # Explicit axes: the result's type carries the sharding both arguments imply.
    assert out == "{'data': 4, 'model': 4} [['data'], ['model']]"


def _sin_matmul(x, w):
    import jax.numpy as jnp

    return jnp.sin(x @ w)


def _args():
    import jax
    import jax.numpy as jnp

    return jax.ShapeDtypeStruct((16, 32), jnp.float32), jax.ShapeDtypeStruct((32, 8), jnp.float32)


@pytest.mark.slow
def test_a_lowered_program_is_inspected_with_its_own_shardings():
    import jax
    from jax.sharding import AbstractMesh, AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    import shardscope

    mesh = AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    jitted = jax.jit(_sin_matmul, in_shardings=(NamedSharding(mesh, P("data", None)), None))
    with jax.sharding.use_abstract_mesh(mesh):
        lowered = jitted.trace(*_args()).lower(lowering_platforms=("cpu",))
    result = shardscope.inspect(lowered)
    assert result.program == "_sin_matmul"
    assert result.mesh.shape == {"data": 4, "model": 2}
    assert result.value("result[0]").spec == [["data"], []]
    with pytest.raises(TypeError, match="takes no arguments"):
        shardscope.inspect(lowered, *_args())


@pytest.mark.slow
def test_out_shardings_are_the_programs_own():
    from jax.sharding import PartitionSpec as P

    import shardscope

    result = shardscope.inspect(
        _sin_matmul, *_args(), mesh={"data": 4, "model": 2}, out_shardings=P(None, "model")
    )
    assert result.value("result[0]").spec == [[], ["model"]]
    plain = shardscope.inspect(_sin_matmul, *_args(), mesh={"data": 4, "model": 2})
    assert plain.value("result[0]").spec == [[], []]


@pytest.mark.parametrize(
    "given, said",
    [
        ({"out_shardings": ("P", "data", "data")}, "out_shardings: axis 'data' is used twice"),
        ({"out_shardings": ("P", "nope")}, "out_shardings: spec dim 0 uses unknown axis 'nope'"),
        ({"out_shardings": ("P", None, None, None)}, "out_shardings do not fit the results"),
        ({"out_shardings": 3}, "out_shardings holds '3': give PartitionSpecs"),
        ({"dcn": 2, "hosts": 2}, "dcn '2' is neither text nor a mapping of axes"),
        ({"dcn": {"data": "2"}, "hosts": 2}, "'2' is not a whole number of hosts"),
        ({"hosts": "2"}, "hosts='2' is not a whole number of hosts"),
    ],
    ids=["duplicate-axis", "unknown-axis", "rank", "not-a-spec", "dcn-int", "dcn-text", "hosts"],
)
def test_bad_out_shardings_hosts_and_dcn_are_one_line_errors(given, said):
    from jax.sharding import PartitionSpec as P

    import shardscope
    from shardscope.backend.errors import ShardscopeError

    out = given.get("out_shardings")
    if isinstance(out, tuple):
        given = {**given, "out_shardings": P(*out[1:])}
    with pytest.raises(ShardscopeError) as info:
        shardscope.inspect(_sin_matmul, *_args(), mesh={"data": 4, "model": 2}, **given)
    assert said in str(info.value) and "\n" not in str(info.value)


def test_without_a_mesh_inspect_says_how_to_give_one():
    import shardscope
    from shardscope.backend.errors import ShardscopeError

    with pytest.raises(ShardscopeError, match="no mesh: pass mesh="):
        shardscope.inspect(_sin_matmul, *_args())


@pytest.mark.slow
def test_the_notebook_forms_show_the_graph_and_qt_stays_out_of_the_caller():
    code = textwrap.dedent(
        """
        import sys, jax, jax.numpy as jnp
        from jax.sharding import PartitionSpec as P
        import shardscope
        def f(x):
            return jnp.tanh(x) * 2
        r = shardscope.inspect(f, jax.ShapeDtypeStruct((16, 8), jnp.float32),
                               mesh={"data": 4}, in_shardings=P("data", None))
        svg = r._repr_svg_()
        page = r._repr_html_()
        print(svg.startswith("<?xml"), "<svg" in page, "<b>f</b>" in page, "PySide6" in sys.modules)
        """
    )
    assert _fresh_python(code, 1).split() == ["True", "True", "True", "False"]


@pytest.mark.slow
def test_show_opens_the_window_on_the_program_in_another_process(tmp_path, monkeypatch):
    import shardscope
    from tests.support.processes import alive, gone_within

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path / "state"))
    result = shardscope.inspect(_sin_matmul, *_args(), mesh={"data": 4})
    proc = result.show()
    try:
        # The call returned at once; the window's process runs on.
        assert proc.poll() is None
        state = json.loads(Path(proc.args[-1]).read_text())
        assert state["program"]["name"] == "_sin_matmul"
        assert state["program"]["mlir"] == result.loaded.mlir_text
        assert alive(proc.pid)
    finally:
        os.killpg(proc.pid, 15)
        assert gone_within(proc.pid, 10)
        proc.wait(10)


# Flax and Equinox are not dependencies of shardscope: these tests run where the optional
# extra is installed (pip install -e ".[test,models]") and are skipped elsewhere.


def test_nnx_jit_arguments_read_as_the_users_paths():
    pytest.importorskip("flax")
    import jax
    import jax.numpy as jnp
    from flax import nnx
    from jax.sharding import PartitionSpec as P

    import shardscope

    class MLP(nnx.Module):
        def __init__(self):
            self.w1 = nnx.Param(jnp.ones((8, 16)))
            self.w2 = nnx.Param(jnp.ones((16, 4)))

        def __call__(self, x):
            return jax.nn.relu(x @ self.w1[...]) @ self.w2[...]

    @nnx.jit
    def step(model, x):
        return model(x)

    x = jax.ShapeDtypeStruct((32, 8), jnp.float32)
    result = shardscope.inspect(
        step, MLP(), x, mesh={"data": 4, "model": 2}, in_shardings=(None, P("data", None))
    )
    assert [v.name for v in result.values if v.role == "arg"] == ["model.w1", "model.w2", "x"]
    # nnx.jit returns the model's state first (here unchanged: the arguments themselves).
    assert result.value("result[0]").id == result.value("model.w1").id
    assert result.value("result[2]").spec == [["data"], []]
    # JAX's name of the Variable's leaf names the same argument.
    assert result.value("model.w1.value").id == result.value("model.w1").id


def test_an_equinox_module_with_a_function_leaf_through_filter_jit():
    eqx = pytest.importorskip("equinox")
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    import shardscope

    class MLP(eqx.Module):
        w1: jax.Array
        w2: jax.Array
        activation: object

        def __call__(self, x):
            return self.activation(x @ self.w1) @ self.w2

    @eqx.filter_jit
    def step(model, x):
        return model(x)

    model = MLP(jnp.ones((8, 16)), jnp.ones((16, 4)), jax.nn.relu)
    x = jax.ShapeDtypeStruct((32, 8), jnp.float32)
    result = shardscope.inspect(
        step,
        model,
        x,
        mesh={"data": 4, "model": 2},
        in_shardings=(MLP(P(None, "model"), None, None), P("data", None)),
    )
    assert [v.name for v in result.values if v.role == "arg"] == ["model.w1", "model.w2", "x"]
    assert result.value("model.w1").spec == [[], ["model"]]
    # eqx.filter_jit returns its marker (a scalar) before the outputs.
    assert result.value("result[0]").shape == ()
    assert result.value("result[1]").spec[0] == ["data"]


def test_a_name_that_matches_no_value_is_one_line_naming_close_ones():
    import jax
    import jax.numpy as jnp

    import shardscope
    from shardscope.backend.errors import ShardscopeError

    params = {"w1": jax.ShapeDtypeStruct((8, 16), jnp.float32)}
    x = jax.ShapeDtypeStruct((4, 8), jnp.float32)
    result = shardscope.inspect(lambda params, x: x @ params["w1"], params, x, mesh={"data": 2})
    with pytest.raises(ShardscopeError) as raised:
        result.value("params['w2']")
    message = str(raised.value)
    assert "\n" not in message
    assert "params['w1']" in message and "no value \"params['w2']\"" in message
    with pytest.raises(ShardscopeError, match="nosuch"):
        result.value("nosuch")


def test_a_mesh_larger_than_shardscope_shows_is_one_line_naming_the_fix():
    import jax
    import jax.numpy as jnp

    import shardscope
    from shardscope.backend.errors import ShardscopeError

    x = jax.ShapeDtypeStruct((8, 8), jnp.float32)
    with pytest.raises(ShardscopeError) as raised:
        shardscope.inspect(lambda x: x * 2, x, mesh={"a": 10**6, "b": 10**6})
    message = str(raised.value)
    assert "\n" not in message
    assert "1,000,000,000,000 devices" in message and "use smaller axis sizes" in message


def test_nnx_variables_take_specs_by_the_users_path_or_by_jaxs():
    pytest.importorskip("flax", reason="flax is not installed: pip install -e '.[models]'")
    import jax
    import jax.numpy as jnp
    from flax import nnx
    from jax.sharding import PartitionSpec as P

    import shardscope

    class MLP(nnx.Module):
        def __init__(self):
            self.w1 = nnx.Param(jnp.ones((8, 16)))

        def __call__(self, x):
            return x @ self.w1[...]

    forward = nnx.jit(lambda model, x: model(x))
    x = jax.ShapeDtypeStruct((32, 8), jnp.float32)
    mesh = {"data": 4, "model": 2}
    for name in ("model.w1", "model.w1.value"):
        result = shardscope.inspect(
            forward, MLP(), x, mesh=mesh, in_shardings={name: P(None, "model"), "x": P("data")}
        )
        assert result.loaded.specs == {"model.w1": [None, "model"], "x": ["data"]}, name
        assert result.value("result[1]").spec == [["data"], ["model"]], name
    # Through a plain jax.jit of nnx.split's state, JAX's names are the arguments' own.
    graphdef, state = nnx.split(MLP())
    result = shardscope.inspect(
        lambda state, x: nnx.merge(graphdef, state)(x),
        state,
        x,
        mesh=mesh,
        in_shardings={"state['w1'].value": P(None, "model")},
    )
    assert result.value("state['w1']").spec == [[], ["model"]]
    assert result.value("state['w1'].value").spec == [[], ["model"]]


def test_inspect_prices_as_propagate_does_for_the_same_hardware():
    import shardscope

    proc = subprocess.run(
        [sys.executable, str(REPO / "main.py"), "propagate", "example:mlp", "--json"]
        + ["--hardware", "h100"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = json.loads(proc.stdout)["cost"]
    ns = runpy.run_path(str(EXAMPLES / "mlp.py"), run_name="__shardscope__")
    args = (ns["PROGRAM"], *ns["EXAMPLE_ARGS"])
    ours = shardscope.inspect(*args, mesh=ns["MESH"], in_shardings=ns["SPECS"], hardware="h100")
    assert ours.to_json()["cost"] == theirs and theirs["hardware"] == "h100"
    default = shardscope.inspect(*args, mesh=ns["MESH"], in_shardings=ns["SPECS"])
    assert default.to_json()["cost"]["hardware"] == "tpu-v5e"
    from shardscope.backend.errors import ShardscopeError

    with pytest.raises(ShardscopeError, match="choose one of"):
        shardscope.inspect(*args, mesh=ns["MESH"], hardware="nope")


def _jit_groups(order) -> list:
    """jax.jit's own device groups for _sin_matmul, x on (_, model) and w on (model, _),
    on a mesh over the devices in ``order``."""
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardscope.backend.hlo.hlo_collectives import read_collectives
    from tests.support.device_order import jax_mesh

    mesh = jax_mesh(order)
    x, w = _args()
    jitted = jax.jit(
        _sin_matmul,
        in_shardings=(NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model"))),
    )
    compiled = jitted.lower(x, w).compile()
    assignment = [d.id for d in compiled._executable.xla_executable.local_devices()]
    return [
        tuple(tuple(g) for g in c["groups"])
        for c in read_collectives(compiled.as_text(), assignment, len(order))
    ]


@pytest.mark.slow
def test_a_device_order_or_a_concrete_meshs_own_reaches_the_compiled_groups():
    from jax.sharding import PartitionSpec as P

    import shardscope
    from tests.support.device_order import AXES, ORDER, jax_mesh

    specs = (P(None, "model"), P("model", None))
    expected = _jit_groups(ORDER)
    assert expected != _jit_groups(range(8))
    given = shardscope.inspect(
        _sin_matmul, *_args(), mesh=dict(AXES), in_shardings=specs, device_order=list(ORDER)
    )
    own = shardscope.inspect(_sin_matmul, *_args(), mesh=jax_mesh(ORDER), in_shardings=specs)
    for result in (given, own):
        assert result.mesh.device_order == ORDER
        assert [c.device_groups for c in result.compiled_collectives] == expected
        # The window the result opens in lays the mesh out the same way.
        assert result.session_state()["mesh"]["device_order"] == list(ORDER)


@pytest.mark.parametrize(
    ("order", "message"),
    [
        ([0, 1], "has 2 ids but the mesh has 8"),
        ([0] * 8, "repeats [0]"),
        ([0.0] * 8, "is not a sequence of device ids"),
        ("0,2,x", "is not a list of integers"),
        (7, "is not a sequence of device ids"),
    ],
)
def test_a_bad_device_order_is_one_line(order, message):
    import shardscope
    from shardscope.backend.errors import MeshError

    with pytest.raises(MeshError) as info:
        shardscope.inspect(_sin_matmul, *_args(), mesh={"data": 4, "model": 2}, device_order=order)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.slow
def test_hosts_and_dcn_give_propagates_host_layout():
    import contextlib
    import io

    import shardscope
    from shardscope.app.cli.main import main
    from shardscope.backend.errors import MeshError

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["propagate", "example:mlp", "--dcn", "model=2", "--json"]) == 0
    theirs = json.loads(out.getvalue())
    ns = runpy.run_path(str(EXAMPLES / "mlp.py"), run_name="__shardscope__")
    args = (ns["PROGRAM"], *ns["EXAMPLE_ARGS"])
    ours = shardscope.inspect(
        *args, mesh=ns["MESH"], in_shardings=ns["SPECS"], dcn={"model": 2}
    ).to_json()
    assert ours["hosts"] == theirs["hosts"] == 2
    for key in ("device_order", "collectives", "predicted_collectives", "cost", "warnings"):
        assert ours[key] == theirs[key], key
    assert [c["crosses_hosts"] for c in ours["collectives"]] == [True]
    with pytest.raises(MeshError, match="not both"):
        shardscope.inspect(*args, mesh=ns["MESH"], dcn="model=2", device_order=list(range(8)))
