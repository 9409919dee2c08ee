"""Benchmark: ``propagate --json`` (Shardy's pipeline and the XLA compile of the annotated
module beside it) against the bare work, on ``example:transformer?layers=N``.

Run: ``.venv/bin/python tests/benchmarks/bench_compiled.py [--layers 24]``

For each mesh (the example's own data=4,model=2, and data=8,model=256: 2,048 devices):

- shardscope: ``python main.py propagate 'example:transformer?layers=N' --mesh M --json``
  in a fresh process, as a user runs it;
- bare: the same load and ``propagate`` (Shardy's pipeline) in this process, then one
  XLA compile of the same annotated module on as many fake CPU devices in a worker
  (``run.compile``), one after the other.

Prints each ratio (target at most 1.2x), measured in the same run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MESHES = ("data=4,model=2", "data=8,model=256")


def bare(source: str, mesh: str) -> float:
    from shardscope.backend.program.load import load_program
    from shardscope.backend.propagation.propagate import propagate, start_propagation
    from shardscope.backend.run.compiled import PendingCompile
    from shardscope.backend.sharding.mesh import parse_mesh

    started = time.perf_counter()
    program = load_program(source)
    parsed = parse_mesh(mesh)
    propagate(program, parsed)
    text = start_propagation(program, parsed, keep_annotated=True).annotated_text
    compile_ = PendingCompile(parsed.size, 600.0)
    compile_.give(text)
    assert compile_.report()["ok"]
    return time.perf_counter() - started


def shardscope(source: str, mesh: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "propagate", source, "--mesh", mesh, "--json"],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=ROOT,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=24)
    args = parser.parse_args()
    source = f"example:transformer?layers={args.layers}"
    for mesh in MESHES:
        ours = shardscope(source, mesh)
        base = bare(source, mesh)
        print(
            f"{source} --mesh {mesh}: propagate --json {ours:.1f} s, bare {base:.1f} s, "
            f"ratio {ours / base:.2f}x (target <= 1.2x)"
        )


if __name__ == "__main__":
    main()
