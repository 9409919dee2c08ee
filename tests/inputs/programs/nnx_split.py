"""A plain jax.jit over the state nnx.split gives, its SPECS keyed by JAX's own names of
the Variables (what jax.tree_util.keystr says: ``state['w1']['kernel'].value``)."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


class MLP(nnx.Module):
    def __init__(self, *, rngs):
        self.w1 = nnx.Linear(16, 32, rngs=rngs)
        self.w2 = nnx.Linear(32, 8, rngs=rngs)

    def __call__(self, x):
        return self.w2(jax.nn.relu(self.w1(x)))


graphdef, state = nnx.split(MLP(rngs=nnx.Rngs(0)))


def forward(state, x):
    return nnx.merge(graphdef, state)(x)


PROGRAM = forward
EXAMPLE_ARGS = (state, jax.ShapeDtypeStruct((8, 16), jnp.float32))
MESH = {"data": 2, "model": 2}
SPECS = {
    "state['w1']['kernel'].value": P(None, "model"),
    "state['w2']['kernel'].value": P("model", None),
    "x": P("data", None),
}


def placed(mesh):
    """The arguments as the script runs them: each leaf SPECS names placed with its spec,
    the others left to the compiler (uncommitted)."""

    def place(path, leaf):
        spec = SPECS.get(f"state{jax.tree_util.keystr(path)}")
        return leaf if spec is None else jax.device_put(leaf, NamedSharding(mesh, spec))

    x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, SPECS["x"]))
    return jax.tree_util.tree_map_with_path(place, state), x


if __name__ == "__main__":
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    with jax.set_mesh(mesh):
        print(jax.jit(forward)(*placed(mesh)).shape)
