"""Benchmark: ``run`` against a plain script that jits, compiles and runs the same program.

Run: ``.venv/bin/python tests/benchmarks/bench_run.py [--program example:transformer] [--repeat 1]``

Both sides are fresh processes started from the program file, as a user would run them,
measured one after the other in the same run:

- shardscope: ``python main.py run PROGRAM --json``: one worker (``run.source``) imports
  JAX and forks the unsharded reference (``run.reference``: it imports, lowers and
  compiles the program on its own), loads the program (import, trace, lower), starts
  Shardy for the predicted collectives in a forked child, then builds the mesh and
  shardings, compiles, makes a warm-up and 5 timed runs, takes the reference's outputs,
  and reads each device's shards and the compiled collectives;
- plain: a script that imports jax on as many CPU devices as the mesh has, builds the same
  mesh and ``NamedSharding`` per argument from the program's ``SPECS``, then
  ``jax.jit(f).lower(...).compile()`` and one run on the same seeded inputs.

Each ``run`` starts with an empty reference cache (``run.reference_cache``) of its own;
the same command is then measured once more with what the first kept, as a user who
runs a program again (other specs, another mesh) would see it.

It prints both wall times and their ratio (target: at most 1.2x), the run's own compile
and run times, ``run --no-reference`` (no unsharded run: one compile less) against the
same script, and where the run's wall time went (its report's ``stages``: this process
before the worker started, the worker's start and imports, each stage of its job, its
exit), next to the plain script's own start (``python -c 'import jax'``, measured too).
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

PLAIN = """
import inspect, os, runpy, sys
os.environ["JAX_PLATFORMS"] = "cpu"
path, params, devices = sys.argv[1], {}, int(sys.argv[2])
if "?" in path:
    import urllib.parse
    path, query = path.split("?", 1)
    params = dict(urllib.parse.parse_qsl(query))
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding

ns = runpy.run_path(path, init_globals={"SHARDSCOPE_PARAMS": params}, run_name="__plain__")
mesh_axes = ns["MESH"]
mesh = jax.make_mesh(tuple(mesh_axes.values()), tuple(mesh_axes), axis_types=(AxisType.Auto,) * len(mesh_axes))
names = list(inspect.signature(ns["PROGRAM"]).parameters)
specs = ns.get("SPECS") or {}
args = ns["EXAMPLE_ARGS"]
flat = jax.tree_util.tree_flatten_with_path(args)[0]
structs, data = [], []
for i, (key, leaf) in enumerate(flat):
    name = names[key[0].idx] + jax.tree_util.keystr(key[1:])
    spec = specs.get(name)
    sharding = NamedSharding(mesh, spec) if spec is not None else None
    structs.append(jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding))
    rng = np.random.default_rng([0, i])
    dtype = np.dtype(leaf.dtype)
    if np.issubdtype(dtype, np.integer):
        data.append(rng.integers(0, 8, size=leaf.shape).astype(dtype))
    else:
        data.append(rng.standard_normal(leaf.shape).astype(dtype))
tree = jax.tree.structure(args)
with jax.set_mesh(mesh):
    compiled = jax.jit(ns["PROGRAM"]).lower(*jax.tree.unflatten(tree, structs)).compile()
placed = [jax.device_put(d, s) for d, s in zip(data, jax.tree.leaves(compiled.input_shardings[0]))]
out = jax.block_until_ready(compiled(*jax.tree.unflatten(tree, placed)))
print(len(jax.tree.leaves(out)))
"""


def timed(argv: list[str], cache: str = "off") -> tuple[float, str]:
    started = time.perf_counter()
    env = {**os.environ, "SHARDSCOPE_CACHE_DIR": cache}
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed:\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="example:transformer")
    parser.add_argument("--repeat", type=int, default=1, help="measure each side this often (best)")
    args = parser.parse_args()
    source = args.program
    path = source
    if source.startswith("example:"):
        name, _, query = source[len("example:") :].partition("?")
        path = str(ROOT / "assets" / "examples" / f"{name}.py") + (f"?{query}" if query else "")
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain.py"
        plain.write_text(PLAIN)
        ours, warm, bare, theirs, imports, report = [], [], [], [], [], None
        for i in range(args.repeat):
            cache = str(Path(tmp) / f"cache-{i}")
            seconds, out = timed([sys.executable, "main.py", "run", source, "--json"], cache)
            ours.append(seconds)
            if report is None or seconds <= min(ours):
                report = json.loads(out)
                report["_wall"] = seconds
            seconds, _ = timed([sys.executable, "main.py", "run", source, "--json"], cache)
            warm.append(seconds)
            seconds, _ = timed([sys.executable, "-c", "import jax"])
            imports.append(seconds)
            devices = report["device_count"]
            seconds, _ = timed([sys.executable, str(plain), path, str(devices)])
            theirs.append(seconds)
            seconds, _ = timed(
                [sys.executable, "main.py", "run", source, "--json", "--no-reference"]
            )
            bare.append(seconds)
    a, b, c, w = min(ours), min(theirs), min(bare), min(warm)
    print(f"program: {source} on {report['device_count']} {report['platform']} devices")
    print(f"plain script (jit, compile, run once): {b:.2f} s")
    print(f"shardscope run --json:                 {a:.2f} s (no reference kept yet)")
    print(
        f"  of which in the run worker: compile {report['compile_s']:.3f} s, "
        f"run {report['run_s'] * 1e3:.2f} ms (median of {len(report['run_times'])})"
    )
    print(f"shardscope run --json, run again:     {w:.2f} s (its reference kept)")
    print(f"shardscope run --json --no-reference: {c:.2f} s")
    print(f"ratio: {a / b:.2f}x (target: at most 1.2x)")
    print(f"ratio run again, the reference kept: {w / b:.2f}x")
    print(f"ratio without the unsharded reference run: {c / b:.2f}x")
    print()
    print(f"where the fastest run --json went ({report['_wall']:.3f} s):")
    stages = report.get("stages") or {}
    for name, seconds in stages.items():
        print(f"  {name:28} {seconds:7.3f} s")
    rest = report["_wall"] - sum(stages.values())
    print(f"  {'(this process after: print)':28} {rest:7.3f} s")
    print(f"python -c 'import jax' alone: {min(imports):.3f} s (part of both sides)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
