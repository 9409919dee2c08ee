"""How a user's function is traced: non-array leaves closed over, jit objects as they are."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from shardscope.backend.program.trace import lower_function
from shardscope.backend.program.traced_call import function_name, program_call, split_static

X = jax.ShapeDtypeStruct((16, 8), jnp.float32)
W = jax.ShapeDtypeStruct((8, 4), jnp.float32)


def test_non_array_leaves_are_closed_over_and_names_kept():
    def apply(model, x):
        return model["act"](x @ model["w"])

    model = {"w": W, "act": jnp.tanh}
    assert split_static((model, X), {})[0] == ({"w": W, "act": None}, X)
    assert split_static((X,), {}) is None
    traced = lower_function(apply, (model, X), mesh={"data": 4}, specs=(None, P("data")))
    assert traced.name == "apply"
    assert "loc(\"model['w']\")" in traced.mlir_text and "tanh" in traced.mlir_text
    assert traced.specs == {"x": ["data"]}
    assert traced.mesh == {"data": 4}


def test_a_jit_object_keeps_its_arguments_and_a_plain_function_loses_its_static_ones():
    def apply(model, x):
        return model["act"](x @ model["w"])

    model = {"w": W, "act": jnp.tanh}
    call, name = program_call(apply, (model, X), {})
    assert name == "apply"
    leaves, _ = call.flat()
    assert leaves == [W, X]  # the activation is closed over, not an argument
    jitted = jax.jit(lambda x: x * 2)
    call, name = program_call(jitted, (X,), {})
    assert name == "program" and call.flat()[0] == [X]
    assert call.trace().lower().as_text().count("stablehlo.multiply") == 1


def test_a_function_goes_by_its_own_name_or_its_wrapped_ones():
    def step(x):
        return x

    assert function_name(step) == "step"
    assert function_name(jax.jit(step)) == "step"
    assert function_name(lambda x: x) == "program"


def test_the_arguments_are_named_as_jax_names_them_without_running_the_function():
    ran = []

    def apply(model, x, *, scale):
        ran.append(1)
        return model["act"](x @ model["w"]) * scale

    args, kwargs = ({"w": W, "act": jnp.tanh, "b": None}, X), {"scale": 2.0}
    call, _ = program_call(apply, args, kwargs)
    names = call.arg_names()
    assert not ran
    assert names == tuple(call.trace().jaxpr.debug_info.arg_names)
    assert names == ("model['w']", "x", "scale")
    static = jax.jit(lambda x, n: x * n, static_argnums=1)
    assert program_call(static, (X, "two"), {})[0].arg_names() is None


def _context_shard_map():
    # A shard_map without mesh=, as a module-level decorator makes one: it takes the
    # mesh in context at its first call.
    @jax.shard_map(in_specs=P("data"), out_specs=P())
    def total(x):
        return jax.lax.psum(jnp.sum(jnp.sin(x)), "data")

    return total


def test_a_shard_map_the_load_called_first_traces_on_the_runs_concrete_mesh():
    import numpy as np
    import pytest
    from jax.sharding import AxisType, NamedSharding

    from shardscope.backend.program.traced_call import trace_on_mesh

    total = _context_shard_map()
    program = lambda x: total(x) * 2  # noqa: E731
    x = jax.ShapeDtypeStruct((16,), jnp.float32)
    lower_function(program, (x,), mesh={"data": 4}, specs=(P("data"),))  # the load
    jmesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Auto,))
    call, _ = program_call(program, (x,), {})
    sharded = jax.ShapeDtypeStruct((16,), jnp.float32, sharding=NamedSharding(jmesh, P("data")))
    with pytest.raises(ValueError, match="should match the mesh passed to shard_map"):
        with jax.set_mesh(jmesh):
            call.trace(leaves=[sharded])
    data = np.arange(16, dtype=np.float32)
    # The same program, its shard_map first called on the run's mesh.
    fresh = _context_shard_map()
    with jax.set_mesh(jmesh):
        want = np.asarray(jax.jit(lambda x: fresh(x) * 2)(jax.device_put(data, sharded.sharding)))
    for leaf in (sharded, x):  # with and without a sharding on the argument
        traced = trace_on_mesh(call, jmesh, [leaf])
        with jax.set_mesh(jmesh):
            compiled = traced.lower().compile()
        (taken,), _ = compiled.input_shardings
        assert taken.mesh == jmesh and len(compiled.runtime_executable().local_devices()) == 4
        got = compiled(jax.device_put(data, taken))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_any_other_trace_failure_on_the_mesh_is_raised_as_it_is():
    import pytest
    from jax.sharding import AxisType

    from shardscope.backend.program.traced_call import trace_on_mesh

    def program(x):
        raise ValueError("the program's own failure")

    jmesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Auto,))
    call, _ = program_call(program, (X,), {})
    with pytest.raises(ValueError, match="the program's own failure"):
        trace_on_mesh(call, jmesh, [X])
