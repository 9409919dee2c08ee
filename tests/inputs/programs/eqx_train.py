"""An Equinox training step: eqx.filter_jit over the Module itself (its activation is a
non-array leaf), eqx.filter_value_and_grad, and optax adam, whose state holds None fields."""

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


class MLP(eqx.Module):
    w1: eqx.nn.Linear
    w2: eqx.nn.Linear
    activation: object

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.w1 = eqx.nn.Linear(16, 32, key=k1)
        self.w2 = eqx.nn.Linear(32, 8, key=k2)
        self.activation = jax.nn.relu

    def __call__(self, x):
        return jax.vmap(lambda row: self.w2(self.activation(self.w1(row))))(x)


opt = optax.adam(1e-3)


@eqx.filter_jit
def step(model, opt_state, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, opt_state = opt.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


model = MLP(jax.random.key(0))
opt_state = opt.init(eqx.filter(model, eqx.is_array))

PROGRAM = step
EXAMPLE_ARGS = (
    model,
    opt_state,
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
    jax.ShapeDtypeStruct((8, 8), jnp.float32),
)
MESH = {"data": 2, "model": 2}
SPECS = {"x": P("data", None), "y": P("data", None)}


def placed(mesh):
    """The arguments as the script runs them: the batch sharded over ``data``."""
    x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, SPECS["x"]))
    y = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, SPECS["y"]))
    return model, opt_state, x, y


if __name__ == "__main__":
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    with jax.set_mesh(mesh):
        print(step(*placed(mesh))[2])
