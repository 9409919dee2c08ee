"""Benchmark: ``run`` against plain scripts that do the same work: jit, compile and run the
same program (sharded), and for ``run`` also its unsharded reference.

Run: ``.venv/bin/python tests/benchmarks/bench_run.py [--program example:transformer] [--repeat 3]``

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
  ``jax.jit(f).lower(...).compile()`` and one run on the same seeded inputs;
- plain with reference: the same script, then the unsharded reference a user would check
  the sharded run against: a second ``jax.jit`` of the program on one device (every mesh
  axis of size 1), compiled and run on the same inputs, and the outputs compared.

Each ``run`` starts with an empty reference cache (``run.reference_cache``) of its own;
the same command is then measured once more with what the first kept, as a user who
runs a program again (other specs, another mesh) would see it.

Each side is measured ``--repeat`` times, interleaved, and the medians are compared. It
prints the wall times and two ratios, each against its target of at most 1.15x: ``run``
against the plain script with the reference (the same work), and ``run --no-reference``
against the plain script without it; then ``run`` again with its reference kept, the
run's own compile and run times, and where the median run's wall time went (its report's
``stages``: this process before the worker started, the worker's start and imports, each
stage of its job, its exit), next to the plain script's own start (``python -c 'import
jax'``, measured too). Each side's processor time (user and system, all its processes)
is printed beside its wall times: on a machine shared with other work the wall times
vary from one repeat to the next more than the processor times do.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
if sys.argv[3:] == ["reference"]:
    one = jax.make_mesh((1,) * len(mesh_axes), tuple(mesh_axes), devices=jax.devices()[:1], axis_types=(AxisType.Auto,) * len(mesh_axes))
    with jax.set_mesh(one):
        ref = jax.jit(ns["PROGRAM"]).lower(*jax.tree.unflatten(tree, [jax.ShapeDtypeStruct(s.shape, s.dtype) for s in structs])).compile()
    device = jax.devices()[0]
    expected = jax.block_until_ready(ref(*jax.tree.unflatten(tree, [jax.device_put(d, device) for d in data])))
    for got, want in zip(jax.tree.leaves(out), jax.tree.leaves(expected)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-3, atol=1e-3)
print(len(jax.tree.leaves(out)))
"""

TARGET = 1.15
# Where every timed command keeps its bytecode (``PYTHONPYCACHEPREFIX``), set by ``main``.
PYCACHE: list[str] = []


def timed(argv: list[str], cache: str = "off") -> tuple[float, str]:
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Python's own bytecode caching, as a user's install has it: where the environment
    # forbids writing bytecode, shardscope's modules are compiled from source at every
    # start while JAX's were compiled when pip installed it.
    env = {**os.environ, "SHARDSCOPE_CACHE_DIR": cache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if PYCACHE:
        env["PYTHONPYCACHEPREFIX"] = PYCACHE[0]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed:\n{done.stderr[-2000:]}")
    return seconds, done.stdout


# The processor seconds (user and system, of every process it waited for) of each
# ``timed`` command, in order.
CPU: list[float] = []


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="example:transformer")
    parser.add_argument(
        "--repeat", type=int, default=3, help="measure each side this often (median)"
    )
    args = parser.parse_args()
    source = args.program
    path = source
    if source.startswith("example:"):
        name, _, query = source[len("example:") :].partition("?")
        path = str(ROOT / "assets" / "examples" / f"{name}.py") + (f"?{query}" if query else "")
    run = [sys.executable, "main.py", "run", source, "--json"]
    times: dict[str, list[float]] = {
        k: [] for k in ("run", "again", "bare", "plain", "plain_ref", "imports")
    }
    cpu: dict[str, list[float]] = {k: [] for k in times}
    reports: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain.py"
        plain.write_text(PLAIN)
        PYCACHE.append(str(Path(tmp) / "pycache"))
        # The first launch of each side fills the bytecode and page caches.
        warm = json.loads(timed([*run, "--no-reference"], str(Path(tmp) / "cache-warm"))[1])
        timed([sys.executable, str(plain), path, str(warm["device_count"]), "reference"])
        for i in range(args.repeat):
            cache = str(Path(tmp) / f"cache-{i}")
            seconds, out = timed(run, cache)
            times["run"].append(seconds)
            cpu["run"].append(CPU[-1])
            reports.append({**json.loads(out), "_wall": seconds})
            times["again"].append(timed(run, cache)[0])
            cpu["again"].append(CPU[-1])
            times["imports"].append(timed([sys.executable, "-c", "import jax"])[0])
            cpu["imports"].append(CPU[-1])
            devices = str(reports[0]["device_count"])
            times["plain"].append(timed([sys.executable, str(plain), path, devices])[0])
            cpu["plain"].append(CPU[-1])
            times["plain_ref"].append(
                timed([sys.executable, str(plain), path, devices, "reference"])[0]
            )
            cpu["plain_ref"].append(CPU[-1])
            times["bare"].append(timed([*run, "--no-reference"])[0])
            cpu["bare"].append(CPU[-1])
    m = {k: median(v) for k, v in times.items()}
    report = sorted(reports, key=lambda r: r["_wall"])[len(reports) // 2]
    n = args.repeat
    print(f"program: {source} on {report['device_count']} {report['platform']} devices")
    print(f"medians of {n} interleaved repeat{'s' if n != 1 else ''}:")
    print(f"plain script (jit, compile, run once):          {m['plain']:.2f} s")
    print(f"plain script and its unsharded reference run:   {m['plain_ref']:.2f} s")
    print(f"shardscope run --json:                          {m['run']:.2f} s (no reference kept)")
    print(f"shardscope run --json --no-reference:           {m['bare']:.2f} s")
    print(f"shardscope run --json, run again:               {m['again']:.2f} s (reference kept)")
    print(
        f"ratio run / plain with reference:      {m['run'] / m['plain_ref']:.2f}x "
        f"(target: at most {TARGET}x)"
    )
    print(
        f"ratio run --no-reference / plain:      {m['bare'] / m['plain']:.2f}x "
        f"(target: at most {TARGET}x)"
    )
    print(f"ratio run again / plain with reference: {m['again'] / m['plain_ref']:.2f}x")
    for name in ("run", "plain_ref", "bare", "plain"):
        print(
            f"  {name:10} each: {', '.join(f'{t:.2f}' for t in times[name])} s; "
            f"processor time (median): {median(cpu[name]):.2f} s"
        )
    print(
        f"in the median run's worker: compile {report['compile_s']:.3f} s, "
        f"run {report['run_s'] * 1e3:.2f} ms (median of {len(report['run_times'])})"
    )
    print()
    print(f"where the median run --json went ({report['_wall']:.3f} s):")
    stages = report.get("stages") or {}
    for name, seconds in stages.items():
        print(f"  {name:28} {seconds:7.3f} s")
    rest = report["_wall"] - sum(stages.values())
    print(f"  {'(this process after: print)':28} {rest:7.3f} s")
    print(f"python -c 'import jax' alone: {m['imports']:.3f} s (part of every side)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
