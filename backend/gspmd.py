"""GSPMD side by side: the same annotated program through XLA's older propagation.

A worker process (``python -m backend.gspmd``) imports the program, gives it as many fake
CPU devices as the mesh has, switches JAX to GSPMD (``jax_use_shardy_partitioner=False``),
compiles with the persistent cache off and the HLO dumped after the
``sharding-propagation`` pass, and reports the sharding of every instruction there plus
the compiled input and output shardings. Back here, instructions are matched to program
values (parameters by number, results by position, other instructions by opcode, shape and
name scope) and every value whose GSPMD sharding differs from Shardy's is listed.

Argument specs reach GSPMD as the arguments' shardings and result specs as sharding
constraints on the returned values; constraints the user put on intermediates have no
place in the Python program and stay Shardy-only.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.errors import ShardscopeError, SpecError
from backend.program_worker import worker_env

_INSTR = re.compile(
    r"^\s*(?:ROOT\s+)?%(?P<name>[\w.\-]+)\s*=\s*(?P<type>[a-z0-9]+\[[0-9,]*\])\S*\s+"
    r"(?P<opcode>[a-z][\w\-]*)\((?P<args>[^)]*)\)(?P<rest>.*)$"
)
_SHARDING = re.compile(r"sharding=(\{(?:[^{}]|\{[^{}]*\})*\})")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_OPCODES = {
    "dot_general": "dot",
    "broadcast_in_dim": "broadcast",
    "case": "conditional",
    "convolution": "convolution",
}


@dataclass(frozen=True)
class Difference:
    """A value GSPMD shards differently from Shardy."""

    id: int
    name: str | None
    display_name: str
    role: str
    shardy: list[list[str]]
    shardy_hlo: str
    gspmd: list[list[str]] | None
    gspmd_text: str

    def to_json(self) -> dict:
        """The ``gspmd_differences[]`` entry of ``propagate --json``."""
        return {
            "id": self.id,
            "name": self.name,
            "display_name": self.display_name,
            "role": self.role,
            "shardy": self.shardy,
            "shardy_hlo": self.shardy_hlo,
            "gspmd": self.gspmd,
            "gspmd_hlo": self.gspmd_text,
        }


def run_gspmd(
    program: Any,
    mesh: dict[str, int],
    specs: dict[str, list],
    *,
    result_specs: dict[int, str] | None = None,
    timeout: float = 300.0,
) -> dict:
    """Compile ``program`` with GSPMD in a worker; the worker's JSON report.

    ``specs`` maps argument names to spec text, ``result_specs`` flat result indices to
    spec text. Raises ``ShardscopeError`` if the program is not Python, or the worker
    fails, hangs or crashes.
    """
    path = getattr(program, "path", None)
    if not path or not str(path).endswith(".py"):
        raise ShardscopeError(
            "--gspmd needs a Python program (.py or example:NAME); a .mlir module cannot be recompiled with GSPMD"
        )
    with tempfile.TemporaryDirectory(prefix="shardscope-gspmd-") as tmp:
        job = Path(tmp) / "job.json"
        out = Path(tmp) / "out.json"
        job.write_text(
            json.dumps(
                {
                    "path": str(path),
                    "params": getattr(program, "params", {}) or {},
                    "mesh": mesh,
                    "specs": specs,
                    "result_specs": {str(k): v for k, v in (result_specs or {}).items()},
                    "arg_names": [v.name for v in _main_args(program)],
                    "dump": str(Path(tmp) / "dump"),
                }
            )
        )
        env = worker_env()
        flags = [
            f
            for f in env.get("XLA_FLAGS", "").split()
            if "xla_force_host_platform_device_count" not in f
        ]
        n = 1
        for size in mesh.values():
            n *= int(size)
        env["XLA_FLAGS"] = " ".join([*flags, f"--xla_force_host_platform_device_count={n}"])
        env["JAX_PLATFORMS"] = "cpu"
        env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "backend.gspmd", str(job), str(out)],
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=str(Path(path).parent),
            )
        except subprocess.TimeoutExpired:
            raise ShardscopeError(
                f"the GSPMD compile did not finish within {timeout:g} s; allow more with --timeout"
            ) from None
        if not out.exists():
            tail = [line for line in (proc.stderr or "").splitlines() if line.strip()]
            detail = tail[-1][:200] if tail else f"exit status {proc.returncode}"
            raise ShardscopeError(f"the GSPMD compile crashed ({detail})")
        report = json.loads(out.read_text())
    if not report.get("ok"):
        raise ShardscopeError(report.get("error", "the GSPMD compile failed"))
    return report


def _main_args(program: Any) -> list:
    from backend.readback import func_args

    graph = program.graph
    return [graph.values[v] for v in func_args(graph, graph.main)]


def gspmd_differences(program: Any, result: Any, *, timeout: float = 300.0) -> list[Difference]:
    """Values whose GSPMD sharding differs from Shardy's in ``result`` (a PropagationResult)."""
    from backend.readback import func_args

    specs: dict[str, str] = {}
    result_specs: dict[int, str] = {}
    for a in result.annotations:
        if a.source != "user":
            continue
        if a.origin.startswith("input: "):
            specs[a.target] = a.spec.format()
        elif a.origin.startswith("output: "):
            result_specs[int(a.origin.split(": ", 1)[1])] = a.spec.format()
    report = run_gspmd(
        program, result.mesh.shape, specs, result_specs=result_specs, timeout=timeout
    )
    graph = result.graph
    gspmd: dict[int, str] = {}
    for vid, text in zip(func_args(graph, graph.main), report["inputs"], strict=False):
        gspmd[vid] = text
    for vid, text in zip(graph.functions[graph.main].results, report["outputs"], strict=False):
        gspmd.setdefault(vid, text)
    _match_instructions(graph, report["instructions"], gspmd)
    out = []
    for vid, text in sorted(gspmd.items()):
        ours = result.values[vid]
        theirs = _spec_of(text, result.mesh, len(ours.spec))
        if theirs == ours.spec:
            continue
        out.append(
            Difference(
                vid,
                ours.name,
                ours.display_name,
                ours.role,
                ours.spec,
                ours.hlo_sharding,
                theirs,
                text,
            )
        )
    return out


def _spec_of(text: str, mesh: Any, rank: int) -> list[list[str]] | None:
    from backend.shardtext import spec_from_hlo_sharding

    try:
        spec = spec_from_hlo_sharding(text, mesh, rank)
    except (SpecError, ValueError):
        return None
    return [list(d.axes) for d in spec.padded(rank).dims]


def _opcode(op_name: str) -> str:
    short = op_name.split(".", 1)[-1]
    return _OPCODES.get(short, short.replace("_", "-"))


def _match_instructions(graph: Any, instructions: list[dict], out: dict[int, str]) -> None:
    """Pair each single-result program op with the first unused HLO instruction like it."""
    pool: dict[tuple[str, tuple[int, ...]], list[dict]] = {}
    for ins in instructions:
        pool.setdefault((ins["opcode"], tuple(ins["shape"])), []).append(ins)
    for op in graph.ops:
        if len(op.results) != 1:
            continue
        value = graph.values[op.results[0]]
        if value.shape is None or value.id in out:
            continue
        cands = pool.get((_opcode(op.name), tuple(value.shape)), [])
        scope = (op.location_name or "").split("/")[-1]
        for i, ins in enumerate(cands):
            if not scope or ins["op_name"].split("/")[-1] == scope:
                out[value.id] = cands.pop(i)["sharding"]
                break


def read_hlo_instructions(text: str) -> list[dict]:
    """Opcode, shape, op_name and sharding of each instruction of an HLO dump."""
    out = []
    for line in text.splitlines():
        m = _INSTR.match(line)
        if not m:
            continue
        sh = _SHARDING.search(m["rest"])
        if sh is None or m["opcode"] in ("parameter", "tuple", "get-tuple-element"):
            continue
        dims = m["type"].split("[", 1)[1].rstrip("]")
        name = _OP_NAME.search(m["rest"])
        out.append(
            {
                "opcode": m["opcode"],
                "shape": [int(d) for d in dims.split(",") if d],
                "op_name": name.group(1) if name else "",
                "sharding": sh.group(1),
            }
        )
    return out


def _worker(job_path: str, out_path: str) -> None:
    job = json.loads(Path(job_path).read_text())
    try:
        report = _compile(job)
    except Exception as exc:  # noqa: BLE001 - user code and the compiler both run here
        report = {
            "ok": False,
            "error": f"GSPMD compile failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
        }
    Path(out_path).write_text(json.dumps(report))


def _compile(job: dict) -> dict:
    import jax
    from jax.sharding import AxisType, NamedSharding

    from backend.program import load_python_namespace
    from backend.spec import parse_spec

    jax.config.update("jax_enable_compilation_cache", False)
    jax.config.update("jax_use_shardy_partitioner", False)
    ns = load_python_namespace(job["path"], job["params"])
    mesh = job["mesh"]
    jmesh = jax.make_mesh(
        tuple(mesh.values()), tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh)
    )
    leaves, treedef = jax.tree.flatten(ns["EXAMPLE_ARGS"])
    new = []
    for leaf, name in zip(leaves, job["arg_names"], strict=True):
        sharding = None
        if name in job["specs"]:
            spec = parse_spec(job["specs"][name]).padded(len(leaf.shape))
            sharding = NamedSharding(jmesh, spec.to_jax())
        new.append(jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding))
    args = jax.tree.unflatten(treedef, new)
    kwargs = ns.get("EXAMPLE_KWARGS") or {}
    program = ns["PROGRAM"]
    result_specs = {int(k): v for k, v in job.get("result_specs", {}).items()}
    if result_specs:
        program = _constrain_results(program, result_specs, jmesh)
    with jax.set_mesh(jmesh):
        compiled = (
            jax.jit(program)
            .lower(*args, **kwargs)
            .compile(
                compiler_options={
                    "xla_dump_to": job["dump"],
                    "xla_dump_hlo_pass_re": "sharding-propagation",
                    "xla_dump_hlo_as_text": True,
                }
            )
        )
    files = sorted(glob.glob(os.path.join(job["dump"], "*after_sharding-propagation*.txt")))
    if not files:
        raise RuntimeError("XLA wrote no module after sharding-propagation")
    instructions = read_hlo_instructions(Path(files[-1]).read_text())
    in_leaves = jax.tree.leaves(compiled.input_shardings[0])
    out_leaves = jax.tree.leaves(compiled.output_shardings)
    out_shapes = [o.shape for o in jax.tree.leaves(compiled.out_info)]
    return {
        "ok": True,
        "inputs": [
            str(s._to_xla_hlo_sharding(len(leaf.shape)))
            for s, leaf in zip(in_leaves, leaves, strict=True)
        ],
        "outputs": [
            str(s._to_xla_hlo_sharding(len(shape)))
            for s, shape in zip(out_leaves, out_shapes, strict=True)
        ],
        "instructions": instructions,
    }


def _constrain_results(program: Any, result_specs: dict[int, str], jmesh: Any) -> Any:
    """``program`` with a sharding constraint on each flat result that has a spec."""
    import jax
    from jax.sharding import NamedSharding

    from backend.spec import parse_spec

    def constrained(*args, **kwargs):
        leaves, tree = jax.tree.flatten(program(*args, **kwargs))
        for i, text in result_specs.items():
            if i < len(leaves):
                spec = parse_spec(text).padded(leaves[i].ndim)
                leaves[i] = jax.lax.with_sharding_constraint(
                    leaves[i], NamedSharding(jmesh, spec.to_jax())
                )
        return jax.tree.unflatten(tree, leaves)

    return constrained


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2])
