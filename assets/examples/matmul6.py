"""One matmul, C = A @ B, under six different shardings of A and B.

Each case costs a different collective (or none): compare them side by side.
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

M, K, N = 64, 128, 32
CASES = {
    # A rows on data, B columns on model: every device computes its own block, no collective.
    "rows_cols": (P("data", None), P(None, "model")),
    # contracting dimension on data in both: partial sums, an all-reduce over data.
    "contract": (P(None, "data"), P("data", None)),
    # contracting dimension sharded on A only: B's rows must be sliced to match (no data moves).
    "contract_lhs": (P(None, "data"), P(None, None)),
    # A and B both split on their rows with the same axis: B's rows must be gathered.
    "rows_rows": (P("data", None), P("data", None)),
    # the two contracting dims on different axes: one side is resharded.
    "mismatch": (P(None, "data"), P("model", None)),
    # fully replicated: no communication, every device does all the work.
    "replicated": (P(None, None), P(None, None)),
}


def matmul6(lhs, rhs):
    out = {}
    for name in CASES:
        with jax.named_scope(name):
            out[name] = lhs[name] @ rhs[name]
    return out


PROGRAM = matmul6
EXAMPLE_ARGS = (
    {name: jax.ShapeDtypeStruct((M, K), jnp.float32) for name in CASES},
    {name: jax.ShapeDtypeStruct((K, N), jnp.float32) for name in CASES},
)
MESH = {"data": 4, "model": 2}
SPECS = {}
for _name, (_a, _b) in CASES.items():
    SPECS[f"lhs['{_name}']"] = _a
    SPECS[f"rhs['{_name}']"] = _b
