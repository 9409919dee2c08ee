"""Regenerate the .mlir fixtures: python tests/data/make_mlir.py KIND > tests/data/KIND.mlir

KIND: plain, sdy, gspmd (annotated arguments), sdy_constraint, gspmd_constraint (a
``with_sharding_constraint`` in the body too).
"""

import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402


def f(x, w):
    with jax.named_scope("proj"):
        h = jnp.tanh(x @ w)  # the line tests expect the dot_general to point at
    return h.sum(axis=1), h


ARGS = (jax.ShapeDtypeStruct((16, 32), jnp.float32), jax.ShapeDtypeStruct((32, 8), jnp.float32))


def main(mode: str) -> str:
    if mode == "plain":
        return jax.jit(f).trace(*ARGS).lower(lowering_platforms=("cpu",)).as_text(debug_info=True)
    if mode.startswith("gspmd"):
        jax.config.update("jax_use_shardy_partitioner", False)
    devices = np.array(jax.devices()).reshape(4, 2)
    mesh = Mesh(devices, ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    shardings = (NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model")))
    program = f
    if mode.endswith("_constraint"):

        def program(x, w):
            h = jnp.tanh(x @ w)
            h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("model", None)))
            return jnp.exp(h)

    return jax.jit(program, in_shardings=shardings).trace(*ARGS).lower().as_text(debug_info=True)


if __name__ == "__main__":
    print(main(sys.argv[1]))
