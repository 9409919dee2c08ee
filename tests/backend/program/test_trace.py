"""Turning what a user holds (mesh, specs, arguments with static parts) into a lowered module."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardscope.backend.program.trace import (
    TraceError,
    abstract_mesh,
    flat_specs,
    lower_function,
    lower_staged,
    mesh_dict,
    shard_map_axis_types,
)

X = jax.ShapeDtypeStruct((16, 8), jnp.float32)
W = jax.ShapeDtypeStruct((8, 4), jnp.float32)


def test_a_dict_mesh_has_auto_axes_and_a_mesh_keeps_its_own():
    assert abstract_mesh({"data": 4, "model": 2}).axis_types == (AxisType.Auto,) * 2
    concrete = jax.make_mesh((2, 4), ("data", "model"))  # Explicit axes by default
    assert abstract_mesh(concrete).axis_types == (AxisType.Explicit,) * 2
    manual = AbstractMesh((2,), ("x",), axis_types=(AxisType.Manual,))
    assert abstract_mesh(manual) is manual
    assert mesh_dict(abstract_mesh(concrete)) == {"data": 2, "model": 4}
    assert abstract_mesh(None) is None


@pytest.mark.parametrize("bad", [{"data": 0}, {}, {"data": True}, [4, 2], "data=4"])
def test_a_bad_mesh_is_refused(bad):
    with pytest.raises(TraceError):
        abstract_mesh(bad)


def test_a_pytree_prefix_spreads_over_the_leaves_as_jit_takes_it():
    args = ({"w": W, "b": jax.ShapeDtypeStruct((4,), jnp.float32)}, X)
    names = ("params['b']", "params['w']", "x")
    assert flat_specs((P("model"), P("data", None)), args, {}, names) == {
        "params['b']": ["model"],
        "params['w']": ["model"],
        "x": ["data", None],
    }
    # None leaves an argument unspecified; a NamedSharding gives its spec.
    mesh = AbstractMesh((4,), ("data",), axis_types=(AxisType.Auto,))
    sharded = NamedSharding(mesh, P("data"))
    assert flat_specs((None, sharded), args, {}, names) == {"x": ["data"]}
    # One spec for every argument, as in_shardings=P(...) means.
    assert flat_specs(P(), args, {}, names) == {n: [] for n in names}


def test_a_prefix_that_does_not_fit_the_arguments_is_refused():
    with pytest.raises(TraceError, match="2 entries for 1 positional"):
        flat_specs((P(), P()), (X,), {}, ("x",))
    with pytest.raises(TraceError, match="not a tree prefix"):
        flat_specs(({"a": P()},), ((X, X),), {}, ("x[0]", "x[1]"))


def test_the_mesh_comes_from_the_shardings_or_from_set_mesh():
    mesh = AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    traced = lower_function(lambda x: x * 2, (X,), specs=(NamedSharding(mesh, P("data", "model")),))
    assert traced.mesh == {"data": 4, "model": 2}
    with jax.sharding.use_abstract_mesh(mesh):
        assert lower_function(jnp.sin, (X,)).mesh == {"data": 4, "model": 2}
    assert lower_function(jnp.sin, (X,)).mesh is None


def test_a_lowered_or_traced_program_is_taken_as_it_is():
    def double(x):
        return x * 2

    traced = jax.jit(double).trace(X)
    assert lower_staged(traced).name == "double"
    lowered = traced.lower()
    assert lower_staged(lowered).mlir_text == lowered.as_text(debug_info=True)


def test_results_with_a_spec_get_a_sharding_constraint():
    import jax
    import jax.numpy as jnp

    from shardscope.backend.program.trace import constrain_results

    mesh = jax.sharding.AbstractMesh((1,), ("data",))
    f = constrain_results(lambda x: (x + 1, x * 2), {1: "data"}, mesh)
    with jax.sharding.use_abstract_mesh(mesh):
        text = jax.jit(f).lower(jax.ShapeDtypeStruct((4,), jnp.float32)).as_text()
    assert text.count("sdy.sharding_constraint") == 1 and '{"data"}' in text


def _typed_shard_map(own):
    def program(x, w):
        return jax.shard_map(
            lambda a, b: jax.lax.psum(a @ b, "model"),
            mesh=own,
            in_specs=(P("data", "model"), P("model", None)),
            out_specs=P("data", None),
        )(x, w)

    return program


def _main_signature(text):
    return next(line for line in text.splitlines() if "func.func public @main" in line)


@pytest.mark.parametrize("as_dict", [False, True])
def test_a_shard_map_on_explicit_axes_is_traced_with_the_specs_in_the_argument_types(as_dict):
    own = jax.make_mesh((2, 4), ("data", "model"))  # Explicit axes by default
    program = _typed_shard_map(own)
    specs = {"x": P("data", "model"), "w": P("model", None)}
    with pytest.raises(ValueError, match="does not match the specs of the input"):
        jax.jit(program).trace(X, W)  # as the load first traces it: without the specs
    typed = [
        jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(own, specs[n]))
        for n, a in (("x", X), ("w", W))
    ]
    want = jax.jit(program).lower(*typed).as_text(debug_info=True)
    mesh = {"data": 2, "model": 4} if as_dict else own
    if as_dict:
        # A dict's axes are Auto: the shard_map refuses that context, naming its own types.
        with pytest.raises(ValueError) as refused:
            lower_function(program, (X, W), mesh=mesh, specs=specs)
        assert shard_map_axis_types(refused.value) == {"data": "Explicit", "model": "Explicit"}
        return
    traced = lower_function(program, (X, W), mesh=mesh, specs=specs)
    assert _main_signature(traced.mlir_text) == _main_signature(want)
    assert traced.specs == {"x": ["data", "model"], "w": ["model", None]}


def test_a_program_that_fails_with_its_specs_too_reports_its_first_error():
    def program(x, w):
        return x @ x  # (16, 8) @ (16, 8): wrong whatever the specs

    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions"):
        lower_function(program, (X, W), mesh=mesh, specs={"x": P("data")})


def test_a_shard_map_refusing_the_context_mesh_gives_its_own_meshs_axis_types():
    own = jax.make_mesh((2, 2), ("data", "model"))  # Explicit axes
    auto = (AxisType.Auto,) * 2
    context = AbstractMesh((2, 2), ("data", "model"), axis_types=auto)
    concrete = jax.make_mesh((2, 2), ("data", "model"), axis_types=auto)

    def program(x):
        return jax.shard_map(lambda a: a * 2, mesh=own, in_specs=P("data"), out_specs=P("data"))(x)

    arg = jax.ShapeDtypeStruct((4, 4), jnp.float32)
    # An abstract mesh in context, and a concrete one's (its device kind named too).
    for entered in (jax.sharding.use_abstract_mesh(context), jax.set_mesh(concrete)):
        with entered, pytest.raises(ValueError) as refused:
            jax.jit(program).trace(arg)
        assert shard_map_axis_types(refused.value) == {"data": "Explicit", "model": "Explicit"}
    assert shard_map_axis_types(ValueError("something else")) is None
