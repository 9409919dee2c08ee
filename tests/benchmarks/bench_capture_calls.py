"""Benchmark: what the capture hook adds to each call of a jitted function (counting the
call for its compile: its arguments' shapes, dtypes and shardings as a key).

Run: ``.venv/bin/python tests/benchmarks/bench_capture_calls.py [--leaves 1000] [--calls 300]
[--repeats 3]``

One script jits a step over a dict of ``--leaves`` small arrays and times ``--calls``
calls after a warm-up (once with the step compiled once, once with it compiled for two
shapes, where each call's arguments are read to tell which compile it runs), the last
result waited for; each runs twice in fresh processes: plain,
and as ``capture`` runs it (the hook on ``PYTHONPATH``, ``SHARDSCOPE_CAPTURE_DIR`` and
``JAX_DUMP_IR_TO`` set), ``--repeats`` times in turn. Prints the fastest seconds per call
of each and their ratio, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from shardscope.backend.program.capture import SITE

SCRIPT = """
import sys, time
import jax, jax.numpy as jnp
leaves, calls, compiles = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
step = jax.jit(lambda p: jax.tree.map(lambda w: w * 0.5, p))
for n in range(compiles, 0, -1):
    params = {f"w{i}": jnp.ones((n,)) for i in range(leaves)}
    jax.block_until_ready(step(params))
start = time.perf_counter()
for _ in range(calls):
    out = step(params)
jax.block_until_ready(out)
print((time.perf_counter() - start) / calls)
"""


def per_call(leaves: int, calls: int, hooked: bool, compiles: int = 1) -> float:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    for name in ("SHARDSCOPE_CAPTURE_DIR", "JAX_DUMP_IR_TO", "SHARDSCOPE_CAPTURE_STEPS"):
        env.pop(name, None)
    with tempfile.TemporaryDirectory() as tmp:
        if hooked:
            env.update(
                SHARDSCOPE_CAPTURE_DIR=tmp,
                JAX_DUMP_IR_TO=os.path.join(tmp, "dump"),
                JAX_DUMP_IR_MODES="stablehlo",
                PYTHONPATH=str(SITE),
            )
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(leaves), str(calls), str(compiles)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--leaves", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for compiles in (1, 2):
        plain = hooked = float("inf")
        for _ in range(args.repeats):  # alternating, the fastest of each: a shared machine
            plain = min(plain, per_call(args.leaves, args.calls, False, compiles))
            hooked = min(hooked, per_call(args.leaves, args.calls, True, compiles))
        print(f"{args.leaves} leaves, {args.calls} calls, the function compiled {compiles}x")
        print(f"  plain:  {plain * 1e6:9.1f} us per call")
        print(f"  hooked: {hooked * 1e6:9.1f} us per call")
        print(f"  ratio hooked/plain: {hooked / plain:.2f}x")


if __name__ == "__main__":
    main()
