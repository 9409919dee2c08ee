"""The references the run worker makes from its own lowering: the sharded module with its
shardings taken off, on one device, and a shard_map program on its own mesh without the
run's specs, each held against the same program run by jax.jit itself."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardscope.backend.program.traced_call import program_call
from shardscope.backend.run.inputs import input_data
from shardscope.backend.run.reference import ProgramInputs
from shardscope.backend.run.unsharded import ManualModule
from shardscope.backend.run.worker_reference import (
    OwnReference,
    kept_arguments,
    same_mesh_outputs,
    stripped_outputs,
)


def _mesh(shape, names, kind=AxisType.Auto):
    return jax.make_mesh(shape, names, axis_types=(kind,) * len(names))


def _inputs(program, args):
    call = program_call(program, args, {})[0]
    leaves, treedef = call.flat()
    host = [input_data(leaf, i) for i, leaf in enumerate(leaves)]
    return ProgramInputs(program, leaves, treedef, host, call)


def _entering(x, w, unused):
    # The program enters a mesh of 8 devices of its own while it traces.
    with jax.sharding.use_abstract_mesh(_mesh((8,), ("data",), AxisType.Explicit).abstract_mesh):
        x = jax.sharding.reshard(x, P("data", None))
        return jnp.tanh(x @ w), jax.random.split(jax.random.key(1), 2)


ARGS = (
    jax.ShapeDtypeStruct((16, 8), jnp.float32),
    jax.ShapeDtypeStruct((8, 4), jnp.float32),
    jax.ShapeDtypeStruct((3,), jnp.float32),
)


def test_the_stripped_module_computes_what_jax_computes_on_one_device():
    mesh = _mesh((8,), ("data",), AxisType.Explicit)
    with jax.set_mesh(mesh):
        lowered = jax.jit(_entering).trace(*ARGS).lower()
    inputs = _inputs(_entering, ARGS)
    assert kept_arguments(lowered, 3) == [0, 1]  # the unused argument is not in the module
    got = stripped_outputs(lowered, inputs.host, jax.devices()[1])
    with jax.set_mesh(mesh):
        want = jax.jit(_entering)(*inputs.host)
    np.testing.assert_allclose(got[0], np.asarray(want[0]), rtol=1e-6)
    # a key array comes back as its key data, word for word
    np.testing.assert_array_equal(got[1], np.asarray(jax.random.key_data(want[1])))


def test_a_shard_map_module_has_no_stripped_form():
    mesh = _mesh((4,), ("data",))

    def program(x):
        return jax.shard_map(
            lambda a: a - jax.lax.pmax(a, "data"),
            mesh=mesh,
            in_specs=P("data"),
            out_specs=P("data"),
        )(x)

    lowered = jax.jit(program).trace(ARGS[0]).lower()
    with pytest.raises(ManualModule):
        stripped_outputs(lowered, [np.zeros((16, 8), np.float32)], jax.devices()[0])


@pytest.mark.parametrize("kind", [AxisType.Auto, AxisType.Explicit])
def test_a_shard_map_program_on_its_own_mesh_gives_jaxs_values(kind):
    mesh = _mesh((2, 4), ("data", "model"), kind)

    def program(x, w):
        def local(a, b):
            return jax.lax.psum(a @ b, "model")

        return jax.shard_map(
            local, mesh=mesh, in_specs=(P("data", "model"), P("model", None)), out_specs=P("data")
        )(x, w)

    args = (ARGS[0], jax.ShapeDtypeStruct((8, 4), jnp.float32))
    inputs = _inputs(program, args)
    shardings = [NamedSharding(mesh, P("data", "model")), NamedSharding(mesh, P("model", None))]
    got = same_mesh_outputs(inputs.call, inputs.leaves, inputs.host, shardings, mesh)
    with jax.set_mesh(mesh):
        placed = [jax.device_put(h, s) for h, s in zip(inputs.host, shardings, strict=True)]
        want = jax.jit(program)(*placed)
    np.testing.assert_allclose(got[0], np.asarray(want), rtol=1e-5)
    np.testing.assert_allclose(got[0], inputs.host[0] @ inputs.host[1], rtol=1e-4, atol=1e-5)


def test_a_module_that_calls_back_into_python_is_refused_in_words():
    def program(x):
        jax.debug.callback(lambda v: None, x)
        return x * 2

    mesh = _mesh((2,), ("data",))
    with jax.set_mesh(mesh):
        lowered = jax.jit(program).trace(ARGS[0]).lower()
    own = OwnReference(lowered, _inputs(program, ARGS[:1]), [None], mesh, jax.devices()[0])
    with pytest.raises(ValueError, match="calls back into Python"):
        own.unsharded()
