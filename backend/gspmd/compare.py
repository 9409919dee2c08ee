"""GSPMD side by side: the same annotated program through XLA's older propagation.

The module Shardy starts from (the program with the user's and the code's shardings,
calls inlined) is rewritten in GSPMD's vocabulary: ``sdy.sharding`` on arguments and
results becomes ``mhlo.sharding`` HloSharding text, each ``sdy.sharding_constraint``
becomes the ``custom_call @Sharding`` JAX emits for ``with_sharding_constraint`` under
GSPMD, and every op's location is renamed ``shardscope.op.N`` after its graph id. A worker
process (``python -m shardscope.backend.gspmd.compare``) with as many fake CPU devices as the mesh has
compiles that module with ``use_shardy_partitioner`` off and the HLO dumped after the
``sharding-propagation`` pass; each instruction's ``op_name`` names the program op it came
from, so its sharding is joined back exactly. ``.mlir`` programs work the same way.

Programs with ``shard_map`` (``sdy.manual_computation``) have no GSPMD form here; for
those, a Python program is traced again with JAX's GSPMD lowering instead, which carries
argument and result specs (constraints on intermediates cannot be placed in the user's
code) and matches instructions by opcode, shape and name scope.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardscope.backend.errors import ShardscopeError, SpecError
from shardscope.backend.program.lower import worker_env

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
    """Trace and compile a Python ``program`` with GSPMD in a worker; its JSON report.

    ``specs`` maps argument names to spec text, ``result_specs`` flat result indices to
    spec text. Raises ``ShardscopeError`` if the program is not Python, or the worker
    fails, hangs or crashes.
    """
    path = getattr(program, "path", None)
    if not path or not str(path).endswith(".py"):
        raise ShardscopeError(
            "--gspmd needs a Python program (.py or example:NAME) for this module; "
            "a .mlir module with shard_map cannot be recompiled with GSPMD"
        )
    job = {
        "kind": "python",
        "path": str(path),
        "params": getattr(program, "params", {}) or {},
        "mesh": mesh,
        "specs": specs,
        "result_specs": {str(k): v for k, v in (result_specs or {}).items()},
        "arg_names": [v.name for v in _main_args(program)],
    }
    return _run_worker(
        job, math.prod(int(n) for n in mesh.values()), str(Path(path).parent), timeout
    )


def compile_module(module_text: str, devices: int, *, timeout: float = 300.0) -> dict:
    """Compile a GSPMD-annotated module on ``devices`` fake CPU devices in a worker."""
    job = {"kind": "module", "module": module_text}
    return _run_worker(job, devices, str(Path.cwd()), timeout)


def _run_worker(job: dict, devices: int, cwd: str, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="shardscope-gspmd-") as tmp:
        job_path = Path(tmp) / "job.json"
        out = Path(tmp) / "out.json"
        job_path.write_text(json.dumps({**job, "dump": str(Path(tmp) / "dump")}))
        env = worker_env()
        flags = [
            f
            for f in env.get("XLA_FLAGS", "").split()
            if "xla_force_host_platform_device_count" not in f
        ]
        env["XLA_FLAGS"] = " ".join([*flags, f"--xla_force_host_platform_device_count={devices}"])
        env["JAX_PLATFORMS"] = "cpu"
        env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "shardscope.backend.gspmd.compare", str(job_path), str(out)],
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=cwd,
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
    from shardscope.backend.propagation.sdyread import func_args

    graph = program.graph
    return [graph.values[v] for v in func_args(graph, graph.main)]


_OP_LOC = "shardscope.op."


class _NoGspmdForm(ShardscopeError):
    """The annotated module holds something GSPMD has no annotation for."""


def gspmd_module(program: Any, result: Any) -> str:
    """The annotated program of ``result`` with GSPMD's annotations instead of Shardy's.

    Raises ``_NoGspmdForm`` for a module with ``shard_map`` bodies or other Shardy ops
    without a GSPMD counterpart.
    """
    from jaxlib.mlir import ir

    from shardscope.backend.propagation import sdyread
    from shardscope.backend.propagation.propagate import prepare
    from shardscope.backend.sharding.hlo_text import hlo_sharding_text
    from shardscope.backend.sharding.spec import Spec

    specs: dict[Any, Any] = {}
    for a in result.annotations:
        if a.source != "user":
            continue
        if a.origin.startswith("output: "):
            specs[f"result[{a.origin.split(': ', 1)[1]}]"] = a.spec
        elif a.value is not None:
            specs[a.value] = a.spec
    prep = prepare(program, result.mesh, specs, strict=False)
    module, mesh = prep.module, prep.mesh
    texts: dict[tuple, str] = {}

    def hlo_text(sharding: Any, rank: int) -> str:
        key = (sharding.dims, rank)
        if key not in texts:
            if any(":(" in axis for dim in sharding.dims for axis in dim):
                raise _NoGspmdForm("a sharding uses a sub-axis, which GSPMD text cannot name")
            spec = Spec.of(*[tuple(d) for d in sharding.dims])
            texts[key] = hlo_sharding_text(mesh, spec, rank, physical=True)
        return texts[key]

    def free(sharding: Any) -> list[int]:
        """Open dims without axes: GSPMD's ``unspecified_dims``, free for propagation."""
        return [
            d
            for d, (axes, closed) in enumerate(zip(sharding.dims, sharding.closed, strict=False))
            if not closed and not axes
        ]

    def rank_of(value_type: ir.Type) -> int:
        try:
            return ir.RankedTensorType(value_type).rank
        except ValueError:
            return 0

    with module.context, ir.Location.unknown():
        for op in list(module.body.operations):
            if op.operation.name == "sdy.mesh":
                op.operation.erase()
        for func in sdyread.func_ops(module):
            block = sdyread.first_block(func)
            types = {
                "arg_attrs": [a.type for a in block.arguments],
                "res_attrs": [v.type for v in sdyread.terminator(block).operands],
            }
            for key, value_types in types.items():
                if key not in func.attributes:
                    continue
                entries = []
                for j, entry in enumerate(ir.ArrayAttr(func.attributes[key])):
                    d = ir.DictAttr(entry)
                    items = {d[i].name: d[i].attr for i in range(len(d))}
                    attr = items.pop("sdy.sharding", None)
                    rank = rank_of(value_types[j])
                    sharding = sdyread.read_sharding(attr) if attr is not None else None
                    # A wholly open sharding leaves the value to propagation, as an
                    # unannotated one is under GSPMD.
                    if sharding is not None and len(free(sharding)) < rank:
                        items["mhlo.sharding"] = ir.StringAttr.get(hlo_text(sharding, rank))
                    entries.append(ir.DictAttr.get(items))
                func.attributes[key] = ir.ArrayAttr.get(entries)
        for op in sdyread.walk(module.operation):
            name = op.name
            tag = sdyread.tag_of(op)
            if tag is not None:
                del op.attributes[sdyread.TAG]
                if 0 <= tag < len(prep.graph.ops):
                    op.location = ir.Location.name(f"{_OP_LOC}{tag}", childLoc=op.location)
            if name in ("sdy.sharding_constraint", "sdy.reshard"):
                operand = op.operands[0]
                sharding = sdyread.read_sharding(op.attributes["sharding"])
                attributes = {
                    "call_target_name": ir.StringAttr.get("Sharding"),
                    "mhlo.sharding": ir.StringAttr.get(hlo_text(sharding, rank_of(operand.type))),
                }
                if free(sharding):
                    # How JAX writes P.UNCONSTRAINED dims of a constraint for GSPMD.
                    dims = ",".join(str(d) for d in free(sharding))
                    attributes["backend_config"] = ir.StringAttr.get(f"unspecified_dims=[{dims}]")
                with ir.InsertionPoint(op):
                    custom = ir.Operation.create(
                        "stablehlo.custom_call",
                        results=[op.results[0].type],
                        operands=[operand],
                        attributes=attributes,
                        loc=op.location,
                    )
                op.results[0].replace_all_uses_with(custom.results[0])
                op.erase()
            elif name.startswith("sdy."):
                what = "shard_map" if name == "sdy.manual_computation" else name
                raise _NoGspmdForm(f"the program uses {what}, which has no GSPMD form here")
            elif "sdy.sharding" in op.attributes:
                per = sdyread.read_per_value(op.attributes["sdy.sharding"])
                parts = [
                    hlo_text(sh, rank_of(r.type)) for sh, r in zip(per, op.results, strict=False)
                ]
                text = parts[0] if len(parts) == 1 else "{" + ", ".join(parts) + "}"
                del op.attributes["sdy.sharding"]
                op.attributes["mhlo.sharding"] = ir.StringAttr.get(text)
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, mesh.size)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        return module.operation.get_asm(enable_debug_info=True)


def gspmd_differences(program: Any, result: Any, *, timeout: float = 300.0) -> list[Difference]:
    """Values whose GSPMD sharding differs from Shardy's in ``result`` (a PropagationResult).

    A program ``gspmd_module`` cannot rewrite is traced again with GSPMD instead (Python
    programs only), and ``result.warnings`` says what that route leaves out.
    """
    from shardscope.backend.propagation.sdyread import func_args

    graph = result.graph
    gspmd: dict[int, str] = {}
    # The module is compiled with device ids as the mesh orders them; the traced route
    # builds an iota mesh, so its device numbers are mesh positions.
    physical = True
    try:
        text = gspmd_module(program, result)
    except _NoGspmdForm as exc:
        report = _python_route(program, result, timeout)
        physical = False
        result.warnings.append(
            f"GSPMD comparison: {exc}; the program was traced again with GSPMD, which "
            f"received the argument and result specs but not constraints on intermediates"
        )
        _match_instructions(graph, report["instructions"], gspmd)
    else:
        report = compile_module(text, result.mesh.size, timeout=timeout)
        _match_by_op(graph, report["instructions"], gspmd)
    for vid, sharding in zip(func_args(graph, graph.main), report["inputs"], strict=False):
        gspmd[vid] = sharding
    for vid, sharding in zip(graph.functions[graph.main].results, report["outputs"], strict=False):
        gspmd[vid] = sharding
    out = []
    for vid, sharding in sorted(gspmd.items()):
        ours = result.values[vid]
        theirs = _spec_of(sharding, result.mesh, len(ours.spec), physical=physical)
        if theirs == ours.spec:
            continue
        shardy_text = ours.hlo_sharding
        if physical and ours.hlo_sharding:
            # Both sides in device ids, as the compiled module numbers them.
            from shardscope.backend.sharding.hlo_text import hlo_sharding_text
            from shardscope.backend.sharding.spec import Spec

            spec = Spec.of(*[tuple(d) for d in ours.spec])
            shardy_text = hlo_sharding_text(result.mesh, spec, len(ours.spec), physical=True)
        out.append(
            Difference(
                vid,
                ours.name,
                ours.display_name,
                ours.role,
                ours.spec,
                shardy_text,
                theirs,
                sharding,
            )
        )
    return out


def _python_route(program: Any, result: Any, timeout: float) -> dict:
    specs: dict[str, str] = {}
    result_specs: dict[int, str] = {}
    for a in result.annotations:
        if a.source != "user":
            continue
        if a.origin.startswith("input: "):
            specs[a.target] = a.spec.format()
        elif a.origin.startswith("output: "):
            result_specs[int(a.origin.split(": ", 1)[1])] = a.spec.format()
    return run_gspmd(program, result.mesh.shape, specs, result_specs=result_specs, timeout=timeout)


def _match_by_op(graph: Any, instructions: list[dict], out: dict[int, str]) -> None:
    """Each single-result program op's sharding, from the instruction its location names
    (the first of its shape: an op may lower to several instructions)."""
    for ins in instructions:
        name = ins["op_name"]
        if not name.startswith(_OP_LOC):
            continue
        try:
            op = graph.ops[int(name[len(_OP_LOC) :])]
        except (ValueError, IndexError):
            continue
        if len(op.results) != 1:
            continue
        value = graph.values[op.results[0]]
        if value.id not in out and list(value.shape or ()) == ins["shape"]:
            out[value.id] = ins["sharding"]


def _spec_of(text: str, mesh: Any, rank: int, *, physical: bool) -> list[list[str]] | None:
    from shardscope.backend.sharding.hlo_text import spec_from_hlo_sharding

    try:
        spec = spec_from_hlo_sharding(text, mesh, rank, physical=physical)
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
    if job.get("kind") == "module":
        return _compile_module(job)
    return _compile_python(job)


def _compile_module(job: dict) -> dict:
    import jax
    import numpy as np
    from jax._src import compiler, xla_bridge
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import xla_client as xc
    from jaxlib.mlir import ir

    jax.config.update("jax_enable_compilation_cache", False)
    jax.config.update("jax_use_shardy_partitioner", False)
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(job["module"])
        n = ir.IntegerAttr(module.operation.attributes["mhlo.num_partitions"]).value
        backend = xla_bridge.get_backend("cpu")
        devices = backend.devices()[:n]
        options = compiler.get_compile_options(
            num_replicas=1,
            num_partitions=n,
            device_assignment=np.array(devices).reshape(1, n),
            env_options_overrides={
                "xla_dump_to": job["dump"],
                "xla_dump_hlo_pass_re": "sharding-propagation",
                "xla_dump_hlo_as_text": True,
            },
            backend=backend,
        )
        # As jax.jit does: values without a sharding take what propagation gives them
        # (otherwise XLA would replicate every unannotated argument and result).
        main = next(
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main"
        )
        build = options.executable_build_options
        build.allow_spmd_sharding_propagation_to_parameters = _unannotated(main, "arg_attrs")
        build.allow_spmd_sharding_propagation_to_output = _unannotated(main, "res_attrs")
        executable = compiler.backend_compile_and_load(
            backend, module, xc.DeviceList(tuple(devices)), options, []
        )
    return {
        "ok": True,
        "inputs": [str(xc.HloSharding.from_proto(s)) for s in executable.get_parameter_shardings()],
        "outputs": [str(xc.HloSharding.from_proto(s)) for s in executable.get_output_shardings()],
        "instructions": _dumped_instructions(job["dump"]),
    }


def _unannotated(func: Any, key: str) -> list[bool]:
    from jaxlib.mlir import ir

    from shardscope.backend.propagation import sdyread

    func_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    count = len(func_type.inputs if key == "arg_attrs" else func_type.results)
    shardings = sdyread.arg_attr(func, key, "mhlo.sharding")
    return [i >= len(shardings) or shardings[i] is None for i in range(count)]


def _dumped_instructions(dump: str) -> list[dict]:
    files = sorted(glob.glob(os.path.join(dump, "*after_sharding-propagation*.txt")))
    if not files:
        raise RuntimeError("XLA wrote no module after sharding-propagation")
    return read_hlo_instructions(Path(files[-1]).read_text())


def _compile_python(job: dict) -> dict:
    import jax
    from jax.sharding import AxisType, NamedSharding

    from shardscope.backend.program.load import load_python_namespace
    from shardscope.backend.sharding.spec import parse_spec

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
    instructions = _dumped_instructions(job["dump"])
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

    from shardscope.backend.sharding.spec import parse_spec

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
