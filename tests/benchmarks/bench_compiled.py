"""Benchmark: ``propagate --json`` (Shardy's pipeline and the XLA compile of the annotated
module beside it) against the bare work, on ``example:transformer?layers=N``.

Run: ``.venv/bin/python tests/benchmarks/bench_compiled.py [--layers 24]``

For each mesh (the example's own data=4,model=2, and data=8,model=256: 2,048 devices):

- shardscope: ``python main.py propagate 'example:transformer?layers=N' --mesh M --json``
  in a fresh process, as a user runs it, start to end;
- bare: the program's load and Shardy's pipeline, once (``load_program``,
  ``start_propagation`` and its result), then one XLA compile of the same annotated
  module with XLA's default options, the compile ``jax.jit(...).compile()`` does, on as
  many fake CPU devices (from parsing the module to the loaded executable, the CPU
  client's start included: ``compile_s``); each in a fresh process, timed from its
  imports' end, so neither finds the other's work warm.

Prints each ratio (target at most 1.2x), measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MESHES = ("data=4,model=2", "data=8,model=256")


def bare(source: str, mesh: str) -> tuple[float, float]:
    """Seconds of (load and Shardy's pipeline, XLA's compile), each in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="bench-bare-") as tmp:
        job, out = Path(tmp) / "job.json", Path(tmp) / "out.json"
        _bench_process("--shardy", source, mesh, str(job))
        devices = json.loads(job.read_text())["devices"]
        shardy = json.loads(job.read_text())["shardy_s"]
        _bench_process("--compile", str(job), str(out), devices=devices)
        return shardy, float(json.loads(out.read_text())["compile_s"])


def _bench_process(*args: str, devices: int | None = None) -> None:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_ENABLE_COMPILATION_CACHE": "false"}
    if devices is not None:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    subprocess.run([sys.executable, __file__, *args], check=True, env=env, cwd=ROOT)


def load_and_propagate(source: str, mesh: str, job: Path) -> None:
    """The program's load and Shardy's pipeline, timed; the annotated module as a compile
    job for ``compile_with_defaults``."""
    from shardscope.backend.program.load import load_program
    from shardscope.backend.propagation.propagate import start_propagation
    from shardscope.backend.sharding.mesh import parse_mesh

    started = time.perf_counter()
    program = load_program(source)
    parsed = parse_mesh(mesh)
    pending = start_propagation(program, parsed, keep_annotated=True)
    text = pending.annotated_text
    pending.result()
    shardy = time.perf_counter() - started
    job.write_text(json.dumps({"module": text, "devices": parsed.size, "shardy_s": shardy}))


def compile_with_defaults(job: Path, out: Path) -> None:
    """The worker's compile (``run.compile.compile_job``) with XLA's default debug options."""
    from shardscope.backend.run import compile as worker

    worker.CODEGEN_OPTIONS = {}
    report = worker.compile_job(json.loads(job.read_text()), job.parent)
    out.write_text(json.dumps({"compile_s": report["compile_s"]}))


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
    parser.add_argument("--shardy", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--compile", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.shardy:
        source, mesh, job = args.shardy
        load_and_propagate(source, mesh, Path(job))
        return
    if args.compile:
        compile_with_defaults(*args.compile)
        return
    source = f"example:transformer?layers={args.layers}"
    for mesh in MESHES:
        ours = shardscope(source, mesh)
        shardy, xla = bare(source, mesh)
        base = shardy + xla
        print(
            f"{source} --mesh {mesh}: propagate --json {ours:.1f} s, bare {base:.1f} s "
            f"(load and Shardy {shardy:.1f} s + XLA compile {xla:.1f} s), "
            f"ratio {ours / base:.2f}x (target <= 1.2x)",
            flush=True,
        )


if __name__ == "__main__":
    main()
