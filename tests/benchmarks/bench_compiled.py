"""Benchmark: ``propagate --json`` (Shardy's pipeline and the XLA compile of the annotated
module beside it) against the bare work it stands on, on ``example:transformer?layers=N``.

Run: ``.venv/bin/python tests/benchmarks/bench_compiled.py [--layers 24] [--against DIR]``
(``--against``: another checkout's ``propagate --json`` too, say before a change)

For each mesh (the example's own data=4,model=2, and data=8,model=256: 2,048 devices),
each side a fresh process timed from its start to its end, one after the other:

- shardscope: ``python main.py propagate 'example:transformer?layers=N' --mesh M --json``,
  as a user runs it;
- bare: what a user does directly with jax to get the same two answers: import jax and
  the example, ``jax.jit(PROGRAM, in_shardings=...).lower(*EXAMPLE_ARGS)`` on a mesh of
  as many CPU devices (``SPECS`` as ``NamedSharding``s, arguments without a spec left to
  propagation), Shardy's registered ``sdy-propagation-pipeline`` on a parsed copy of the
  lowered module, and ``.compile()`` of the lowered program with jax's own options.

Prints each side's seconds and their ratio, measured in the same run (target at most
1.0x), and the bare process's parts. A second ratio compiles the bare side with the
XLA debug options shardscope's compile worker sets (``run.compile.CODEGEN_OPTIONS``, as
``compile(compiler_options=...)``), so that it shows shardscope's own overhead, with the
codegen saving taken out.
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
TARGET = 1.0


def shardscope(source: str, mesh: str, checkout: Path = ROOT) -> float:
    """Seconds of ``propagate --json`` in a fresh process, start to end: this checkout's
    with this Python, another's with its own ``.venv``."""
    python = sys.executable if checkout == ROOT else str(checkout / ".venv" / "bin" / "python")
    started = time.perf_counter()
    subprocess.run(
        [python, str(checkout / "main.py"), "propagate", source, "--mesh", mesh, "--json"],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=checkout,
    )
    return time.perf_counter() - started


def bare(layers: int, mesh: str, codegen: bool) -> tuple[float, dict[str, float]]:
    """Seconds of the bare work in a fresh process, start to end, and its parts;
    ``codegen``: compile with shardscope's ``CODEGEN_OPTIONS``."""
    shape = dict(_axis(a) for a in mesh.split(","))
    devices = 1
    for n in shape.values():
        devices *= n
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "JAX_ENABLE_COMPILATION_CACHE": "false",
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
    }
    with tempfile.TemporaryDirectory(prefix="bench-bare-") as tmp:
        out = Path(tmp) / "parts.json"
        args = ["--bare", str(layers), mesh, str(out), "codegen" if codegen else "defaults"]
        started = time.perf_counter()
        subprocess.run([sys.executable, __file__, *args], check=True, env=env, cwd=ROOT)
        seconds = time.perf_counter() - started
        return seconds, json.loads(out.read_text())


def _axis(text: str) -> tuple[str, int]:
    name, _, size = text.partition("=")
    return name.strip(), int(size)


def bare_process(layers: int, mesh: str, out: Path, options: str) -> None:
    """The bare side's process: lower, Shardy's pipeline, compile; its parts' seconds."""
    started = time.perf_counter()
    import inspect
    import runpy

    import jax
    import numpy as np
    from jax._src.interpreters import mlir as jax_mlir
    from jax.sharding import Mesh, NamedSharding
    from jaxlib.mlir import ir, passmanager

    parts = {"imports": time.perf_counter() - started}
    jax.config.update("jax_enable_compilation_cache", False)
    t = time.perf_counter()
    path = ROOT / "assets" / "examples" / "transformer.py"
    ns = runpy.run_path(str(path), init_globals={"SHARDSCOPE_PARAMS": {"layers": str(layers)}})
    shape = dict(_axis(a) for a in mesh.split(","))
    size = int(np.prod(list(shape.values())))
    jmesh = Mesh(np.array(jax.devices()[:size]).reshape(tuple(shape.values())), tuple(shape))
    program, args, specs = ns["PROGRAM"], ns["EXAMPLE_ARGS"], ns["SPECS"]
    names = list(inspect.signature(program).parameters)

    def sharding(name: str, arg):
        def leaf(path, _):
            spec = specs.get(name + jax.tree_util.keystr(path))
            return None if spec is None else NamedSharding(jmesh, spec)

        return jax.tree_util.tree_map_with_path(leaf, arg)

    in_shardings = tuple(sharding(n, a) for n, a in zip(names, args, strict=True))
    lowered = jax.jit(program, in_shardings=in_shardings).lower(*args)
    parts["load_and_lower"] = time.perf_counter() - t
    t = time.perf_counter()
    with jax_mlir.make_ir_context() as ctx:
        module = ir.Module.parse(lowered.as_text(), context=ctx)
        passmanager.PassManager.parse("builtin.module(sdy-propagation-pipeline)").run(
            module.operation
        )
    parts["shardy"] = time.perf_counter() - t
    compiler_options = None
    if options == "codegen":
        from shardscope.backend.run.compile import CODEGEN_OPTIONS

        compiler_options = dict(CODEGEN_OPTIONS)
    t = time.perf_counter()
    lowered.compile(compiler_options=compiler_options)
    parts["compile"] = time.perf_counter() - t
    out.write_text(json.dumps(parts))
    sys.stdout.flush()
    # Done: tearing the CPU client down is no part of the work (the compile worker skips it too).
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        default=[],
        metavar="CHECKOUT",
        help="also measure another checkout's propagate --json (with its .venv), in the same run",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds, each side once a round in turn; the least seconds of each side count "
        "(other users' load only ever adds)",
    )
    parser.add_argument("--mesh", action="append", help="only this mesh (default: both)")
    parser.add_argument("--bare", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        layers, mesh, out, options = args.bare
        bare_process(int(layers), mesh, Path(out), options)
        return
    source = f"example:transformer?layers={args.layers}"
    for mesh in args.mesh or MESHES:
        runs: dict[str, list] = {}
        for _ in range(max(args.repeat, 1)):
            for c in args.against:
                runs.setdefault(str(c), []).append((shardscope(source, mesh, c.resolve()), {}))
            runs.setdefault("ours", []).append((shardscope(source, mesh), {}))
            runs.setdefault("bare", []).append(bare(args.layers, mesh, codegen=False))
            runs.setdefault("same", []).append(bare(args.layers, mesh, codegen=True))
        best = {k: min(v, key=lambda run: run[0]) for k, v in runs.items()}
        ours, (base, parts), (same, same_parts) = best["ours"][0], best["bare"], best["same"]
        rounds = f" (least of {args.repeat} rounds)" if args.repeat > 1 else ""
        print(
            f"{source} --mesh {mesh}{rounds}: propagate --json {ours:.1f} s, bare {base:.1f} s "
            f"({_parts(parts)}), ratio {ours / base:.2f}x (target <= {TARGET}x); "
            f"bare with shardscope's codegen options {same:.1f} s ({_parts(same_parts)}), "
            f"ratio {ours / same:.2f}x",
            flush=True,
        )
        for checkout in map(str, args.against):
            theirs = best[checkout][0]
            print(
                f"  {checkout}: propagate --json {theirs:.1f} s, ratio {theirs / base:.2f}x; "
                f"with shardscope's codegen options {theirs / same:.2f}x",
                flush=True,
            )
        if args.repeat > 1:
            for name, got in runs.items():
                print(f"  every round, {name}: {' '.join(f'{t:.1f}' for t, _ in got)} s")


def _parts(parts: dict[str, float]) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v:.1f} s" for k, v in parts.items())


if __name__ == "__main__":
    main()
