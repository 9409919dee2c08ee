"""``LocalModule``: per-device shapes and producer chains of a real partitioned module."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardscope.backend.hlo.local_shapes import LocalModule


def _compiled_norm() -> str:
    mesh = jax.make_mesh((2, 4), ("data", "tensor"))

    def f(x):
        return jnp.sum(jnp.square(x), axis=-1)

    x = jax.ShapeDtypeStruct(
        (8, 64), jnp.float32, sharding=NamedSharding(mesh, P("data", "tensor"))
    )
    return jax.jit(f).lower(x).compile().as_text()


def test_instructions_have_their_per_device_shapes_ops_and_lines():
    module = LocalModule(_compiled_norm())
    by_op = module.by_op_name()
    squares = [i for (name, _), found in by_op.items() if name.endswith("/square") for i in found]
    # The square runs where x lies: a quarter of the hidden dimension, half the rows.
    assert squares and {i.shape for i in squares} == {(4, 16)}
    assert all(i.line is not None and i.line > 0 for i in squares)
    # Inside a fusion: its parameter is the fusion's operand.
    assert any(i.computation != "" for i in squares)


def test_producers_walk_from_a_collective_back_through_the_fusion_to_the_square():
    module = LocalModule(_compiled_norm())
    (reduce,) = [i for i in module.instructions.values() if i.opcode == "all-reduce"]
    ops = [p.op_name.rsplit("/", 1)[-1] for p in module.producers(reduce.name) if p.op_name]
    assert "reduce_sum" in ops and "square" in ops
    assert ops.index("reduce_sum") < ops.index("square")


def test_a_module_without_instructions_reads_as_empty():
    module = LocalModule("HloModule empty\n")
    assert module.instructions == {} and list(module.producers("nothing")) == []
