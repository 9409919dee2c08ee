"""A Flax NNX training step as Flax's guide writes it: nnx.jit over the model and an
nnx.Optimizer (optax adam), which updates both in place."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


class MLP(nnx.Module):
    def __init__(self, din, dhidden, dout, *, rngs):
        self.w1 = nnx.Linear(din, dhidden, rngs=rngs)
        self.w2 = nnx.Linear(dhidden, dout, rngs=rngs)

    def __call__(self, x):
        return self.w2(jax.nn.relu(self.w1(x)))


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


model = MLP(16, 32, 8, rngs=nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

PROGRAM = train_step
EXAMPLE_ARGS = (
    model,
    optimizer,
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
    jax.ShapeDtypeStruct((8, 8), jnp.float32),
)
MESH = {"data": 2, "model": 2}
SPECS = {"x": P("data", None), "y": P("data", None)}


def placed(mesh):
    """The arguments as the script runs them: the batch sharded over ``data``."""
    fresh = MLP(16, 32, 8, rngs=nnx.Rngs(0))
    x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, SPECS["x"]))
    y = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, SPECS["y"]))
    return fresh, nnx.Optimizer(fresh, optax.adam(1e-3), wrt=nnx.Param), x, y


if __name__ == "__main__":
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    with jax.set_mesh(mesh):
        print(train_step(*placed(mesh)))
