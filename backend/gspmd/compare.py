"""GSPMD side by side: the values XLA's older propagation shards differently from Shardy.

The program Shardy propagated is rewritten in GSPMD's vocabulary (``gspmd.rewrite``) and
compiled in a worker process (``gspmd.compile``) on as many fake CPU devices as the mesh
has; each instruction the compiler reports after its ``sharding-propagation`` pass names
the program op it came from, so its sharding is joined back exactly. ``.mlir`` programs
work the same way.

Programs with ``shard_map`` (``sdy.manual_computation``) have no GSPMD form here; for
those, a Python program is traced again with JAX's GSPMD lowering instead, which carries
argument and result specs (constraints on intermediates cannot be placed in the user's
code) and matches instructions by opcode, shape and name scope.

Either way the compile's partitioned, optimized module gives GSPMD's own collectives
(``compare_gspmd``), listed as the Shardy compile's are (``gspmd.gspmd_collectives``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError, SpecError
from shardscope.backend.gspmd.gspmd_collectives import gspmd_collectives
from shardscope.backend.gspmd.rewrite import NoGspmdForm, gspmd_module, op_id
from shardscope.backend.hlo.instructions import HloInstruction, hlo_opcode
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.json_form import JsonForm, json_field
from shardscope.backend.program.consent import NoPythonFile, runnable_file
from shardscope.backend.sharding.hlo_text import spec_from_hlo_sharding

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph, Value
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.run.result import CompiledCollective
    from shardscope.backend.sharding.mesh import Mesh

_COMPILE_WORKER = "shardscope.backend.gspmd.compile"
_WHAT = "the GSPMD compile"
# The report is read from the dump the compile writes: no compile may be skipped for a
# cached one.
_NO_CACHE = {"JAX_ENABLE_COMPILATION_CACHE": "false"}


@dataclass(frozen=True)
class Difference(JsonForm):
    """A value GSPMD shards differently from Shardy (a ``gspmd_differences[]`` entry of
    ``propagate --json``)."""

    id: int
    name: str | None
    display_name: str
    role: str
    shardy: list[list[str]]
    shardy_hlo: str
    gspmd: list[list[str]] | None
    gspmd_text: str = json_field(key="gspmd_hlo")


@dataclass(frozen=True)
class GspmdComparison:
    """What GSPMD made of a propagated program: the values it shards differently and the
    collectives of its compiled module (``gspmd_collectives`` of ``propagate --json``)."""

    differences: list[Difference]
    collectives: list[CompiledCollective]
    # What the comparison leaves out, where it had to trace the program again.
    warnings: tuple[str, ...] = ()


def gspmd_differences(
    program: Program, result: PropagationResult, *, timeout: float = 300.0
) -> list[Difference]:
    """Values whose GSPMD sharding differs from Shardy's in ``result`` (``compare_gspmd``'s
    differences)."""
    return compare_gspmd(program, result, timeout=timeout).differences


def compare_gspmd(
    program: Program, result: PropagationResult, *, timeout: float = 300.0
) -> GspmdComparison:
    """Compile ``result``'s program with GSPMD: the values it shards differently from
    Shardy and its compiled collectives.

    A program ``gspmd_module`` cannot rewrite is traced again with GSPMD instead (Python
    programs only), and the comparison's ``warnings`` say what that route leaves out.
    """
    graph = result.graph
    gspmd: dict[int, str] = {}
    # Both routes compile on the mesh's devices in its order, so the shardings XLA
    # reports number devices by mesh position, as the program's own text and
    # ``ValueInfo.hlo_sharding`` do.
    warnings: tuple[str, ...] = ()
    try:
        text = gspmd_module(program, result)
    except NoGspmdForm as exc:
        report = _python_route(program, result, timeout)
        warnings = (
            f"GSPMD comparison: {exc}; the program was traced again with GSPMD, which "
            f"received the argument and result specs but not constraints on intermediates",
        )
        _match_instructions(graph, report["instructions"], gspmd)
    else:
        report = compile_module(
            text, result.mesh.size, device_order=result.mesh.device_order, timeout=timeout
        )
        _match_by_op(graph, report["instructions"], gspmd)
    for vid, sharding in zip(graph.functions[graph.main].arguments, report["inputs"], strict=False):
        gspmd[vid] = sharding
    for vid, sharding in zip(graph.functions[graph.main].results, report["outputs"], strict=False):
        gspmd[vid] = sharding
    out = []
    for vid, sharding in sorted(gspmd.items()):
        ours = result.values[vid]
        theirs = _spec_of(sharding, result.mesh, len(ours.spec))
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
                sharding,
            )
        )
    collectives = gspmd_collectives(report.get("collectives", []), graph, result.mesh)
    return GspmdComparison(out, collectives, warnings)


def compile_module(
    module_text: str,
    devices: int,
    *,
    device_order: Sequence[int] | None = None,
    timeout: float = 300.0,
) -> dict:
    """Compile a GSPMD-annotated module on ``devices`` fake CPU devices in a worker, laid
    out in ``device_order`` (device id at each mesh position; None: 0, 1, 2...); its
    report (``inputs``, ``outputs``, ``instructions``, ``collectives``)."""
    order = list(device_order) if device_order else None
    return run_json_worker(
        _COMPILE_WORKER,
        {"kind": "module", "module": module_text, "device_order": order},
        what=_WHAT,
        cwd=Path.cwd(),
        timeout=timeout,
        devices=devices,
        env=_NO_CACHE,
    )


def run_gspmd(
    program: Program,
    mesh: Mapping[str, int],
    specs: Mapping[str, str],
    *,
    result_specs: Mapping[int, str] | None = None,
    device_order: Sequence[int] | None = None,
    timeout: float = 300.0,
) -> dict:
    """Trace and compile a Python ``program`` with GSPMD in a worker; its JSON report.

    ``specs`` maps argument names to spec text, ``result_specs`` flat result indices to
    spec text; ``device_order`` lays the mesh over the devices (None: 0, 1, 2...). Raises ``ShardscopeError`` if the program is not Python, or the worker
    fails, hangs or crashes.
    """
    try:
        path = runnable_file(program, "the GSPMD comparison")
    except NoPythonFile:
        raise ShardscopeError(
            "--gspmd needs a Python program (.py or example:NAME) for this module; "
            "a .mlir module with shard_map cannot be recompiled with GSPMD"
        ) from None
    job = {
        "kind": "python",
        "path": str(path),
        "params": getattr(program, "params", {}) or {},
        "mesh": dict(mesh),
        "device_order": list(device_order) if device_order else None,
        "specs": dict(specs),
        "result_specs": {str(k): v for k, v in (result_specs or {}).items()},
        "arg_names": [v.name for v in _main_args(program)],
    }
    return run_json_worker(
        _COMPILE_WORKER,
        job,
        what=_WHAT,
        cwd=Path(path).parent,
        timeout=timeout,
        devices=math.prod(int(n) for n in mesh.values()),
        env=_NO_CACHE,
    )


def _main_args(program: Program) -> list[Value]:
    graph = program.graph
    return [graph.values[v] for v in graph.functions[graph.main].arguments]


def _python_route(program: Program, result: PropagationResult, timeout: float) -> dict:
    specs: dict[str, str] = {}
    result_specs: dict[int, str] = {}
    for a in result.annotations:
        if a.source != "user":
            continue
        if a.origin.startswith("input: "):
            specs[a.target] = a.spec.format()
        elif a.origin.startswith("output: "):
            result_specs[int(a.origin.split(": ", 1)[1])] = a.spec.format()
    return run_gspmd(
        program,
        result.mesh.shape,
        specs,
        result_specs=result_specs,
        device_order=result.mesh.device_order,
        timeout=timeout,
    )


def _match_by_op(
    graph: ProgramGraph, instructions: list[HloInstruction], out: dict[int, str]
) -> None:
    """Each single-result program op's sharding, from the instruction its location names
    (the first of its shape: an op may lower to several instructions)."""
    for ins in instructions:
        index = op_id(ins["op_name"])
        if index is None:
            continue
        try:
            op = graph.ops[index]
        except IndexError:
            continue
        if len(op.results) != 1:
            continue
        value = graph.values[op.results[0]]
        if value.id not in out and list(value.shape or ()) == ins["shape"]:
            out[value.id] = ins["sharding"]


def _match_instructions(
    graph: ProgramGraph, instructions: list[HloInstruction], out: dict[int, str]
) -> None:
    """Pair each single-result program op with the first unused HLO instruction like it."""
    pool: dict[tuple[str, tuple[int, ...]], list[HloInstruction]] = {}
    for ins in instructions:
        pool.setdefault((ins["opcode"], tuple(ins["shape"])), []).append(ins)
    for op in graph.ops:
        if len(op.results) != 1:
            continue
        value = graph.values[op.results[0]]
        if value.shape is None or value.id in out:
            continue
        cands = pool.get((hlo_opcode(op.name), tuple(value.shape)), [])
        scope = (op.location_name or "").split("/")[-1]
        for i, ins in enumerate(cands):
            if not scope or ins["op_name"].split("/")[-1] == scope:
                out[value.id] = cands.pop(i)["sharding"]
                break


def _spec_of(text: str, mesh: Mesh, rank: int) -> list[list[str]] | None:
    try:
        spec = spec_from_hlo_sharding(text, mesh, rank)
    except (SpecError, ValueError):
        return None
    return [list(d.axes) for d in spec.padded(rank).dims]
