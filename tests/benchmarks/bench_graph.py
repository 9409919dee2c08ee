"""Graph building against the bare compiler lowering, measured in the same run.

    .venv/bin/python tests/benchmarks/bench_graph.py [--layers 24] [--repeat 5]

Loads the transformer example (as a user program would be imported), times JAX's own
``trace().lower()`` plus ``as_text(debug_info=True)`` (the floor: the compiler work every
load must pay), then times parsing that text and building the program graph. Target:
graph building adds at most 25% to the lowering time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from shardscope.backend.program.graph import build_graph  # noqa: E402
from shardscope.backend.program.lower import load_python_namespace  # noqa: E402
from shardscope.backend.program.mlir import new_context  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import jax
    from jax.sharding import AbstractMesh, AxisType

    ns = load_python_namespace(
        str(ROOT / "assets/examples/transformer.py"), {"layers": str(args.layers)}
    )
    mesh = ns["MESH"]
    abstract = AbstractMesh(
        tuple(mesh.values()), tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh)
    )

    def lower() -> str:
        # JAX caches traces and lowerings per function: start cold, as a fresh load does
        jax.clear_caches()
        with jax.sharding.use_abstract_mesh(abstract):
            lowered = (
                jax.jit(ns["PROGRAM"]).trace(*ns["EXAMPLE_ARGS"]).lower(lowering_platforms=("cpu",))
            )
        return lowered.as_text(debug_info=True)

    text = lower()  # warm-up: imports and first-use costs out of the measurement
    context = new_context()
    lower_times, graph_times = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        text = lower()
        t1 = time.perf_counter()
        with context:
            from jaxlib.mlir import ir

            module = ir.Module.parse(text)
            graph = build_graph(module)
        t2 = time.perf_counter()
        lower_times.append(t1 - t0)
        graph_times.append(t2 - t1)
    lower_s = statistics.median(lower_times)
    graph_s = statistics.median(graph_times)
    print(f"transformer, {args.layers} layers: {len(graph.ops)} ops, {len(graph.values)} values")
    print(f"baseline  trace+lower+as_text   {lower_s * 1000:8.1f} ms (median of {args.repeat})")
    print(f"ours      parse+build_graph     {graph_s * 1000:8.1f} ms (median of {args.repeat})")
    print(f"ratio     graph / lower         {graph_s / lower_s:8.2f}  (target <= 0.25)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
