"""An Equinox data-parallel step whose body enters the program's own mesh of 8 devices
(jax.sharding.use_abstract_mesh inside eqx.filter_jit) and moves the batch onto it with
jax.sharding.reshard (Explicit axes)."""

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",))


class Linear(eqx.Module):
    w: jax.Array
    b: jax.Array

    def __init__(self, key):
        self.w = jax.random.normal(key, (16, 4))
        self.b = jnp.zeros((4,))

    def __call__(self, x):
        return jnp.tanh(x @ self.w + self.b)


@eqx.filter_jit
def step(model, x, y):
    with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
        x = jax.sharding.reshard(x, P("data", None))
        y = jax.sharding.reshard(y, P("data", None))

        def loss_fn(model):
            return jnp.mean((model(x) - y) ** 2)

        loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
        model = jax.tree.map(lambda p, g: p - 0.1 * g, model, grads)
        return model, loss


PROGRAM = step
EXAMPLE_ARGS = (
    Linear(jax.random.key(0)),
    jax.ShapeDtypeStruct((32, 16), jnp.float32),
    jax.ShapeDtypeStruct((32, 4), jnp.float32),
)
MESH = mesh
