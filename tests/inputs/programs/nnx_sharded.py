"""A Flax NNX model's forward pass under nnx.jit, its parameters annotated with
nnx.with_partitioning and created sharded on the program's own mesh (Flax's eager
sharding), SPECS from nnx.get_partition_spec. Run as a script, it calls the step."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

init = nnx.initializers.lecun_normal()


class MLP(nnx.Module):
    def __init__(self, *, rngs):
        self.w1 = nnx.Param(nnx.with_partitioning(init, (None, "model"))(rngs.params(), (16, 32)))
        self.w2 = nnx.Param(nnx.with_partitioning(init, ("model", None))(rngs.params(), (32, 8)))

    def __call__(self, x):
        return jax.nn.relu(x @ self.w1[...]) @ self.w2[...]


@nnx.jit
def forward(model, x):
    return model(x)


mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh):
    model = MLP(rngs=nnx.Rngs(0))

PROGRAM = forward
EXAMPLE_ARGS = (model, jax.ShapeDtypeStruct((8, 16), jnp.float32))
MESH = mesh
SPECS = (nnx.get_partition_spec(nnx.state(model)), P("data", None))


def placed(mesh):
    """The arguments as the script runs them: the sharded model and the batch on ``mesh``."""
    return model, jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, SPECS[1]))


if __name__ == "__main__":
    with jax.set_mesh(mesh):
        print(forward(*placed(mesh)).shape)
