"""Run a program's module on fake CPU devices: ``run`` for a ``.mlir`` file or a capture.

A ``.mlir`` module, a captured function (a JAX or torch_xla capture) or a program read
from a session has no Python to call again, but its module runs as it is: ``run_seeded``
writes the session's mesh and specs on it (``propagation.propagate.prepare``, the text
``propagate --json``'s compile takes), and a worker (``run.module_worker``) compiles it
with XLA on ``mesh.size`` fake CPU devices in the mesh's device order, runs it on seeded
inputs of each argument's shape and dtype (``inputs.random_array``), and reads back each
device's shards and the compiled collectives. The result is the ``RunResult`` a Python
program's run gives; its ``inputs`` is ``"seeded"`` and its notes say plainly that the
inputs are not the script's. Shardy's prediction (the request's ``propagation``, or one
made beside the run with ``predict``) is matched with the compiled collectives as for a
Python run.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.program.consent import python_file
from shardscope.backend.run.cancel import CANCELLED, Cancel, RunCancelled
from shardscope.backend.run.compiled import as_captured
from shardscope.backend.run.inputs import INT_HIGH, SEED
from shardscope.backend.run.worker_setup import check_device_count, run_environment

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.annotate import SpecLike
    from shardscope.backend.propagation.propagate import PendingPropagation
    from shardscope.backend.run.request import RunRequest
    from shardscope.backend.run.result import RunResult
    from shardscope.backend.sharding.mesh import Mesh

WORKER = "shardscope.backend.run.module_worker"
WHAT = "the module run"
# Program kinds whose module runs without any Python of theirs.
MODULE_KINDS = ("mlir", "capture", "api")
# What XLA logs (checked on this machine with jaxlib 0.10.2) when it compiles a module
# that carries GSPMD shardings with Shardy switched on.
_GSPMD_FALLBACK = "falling back to using GSPMD propagation"


def runs_module(program: Program) -> bool:
    """Whether ``run`` runs ``program``'s module rather than its Python: a program with
    no Python file to call (a ``.mlir`` module, a capture, one from ``shardscope.inspect``,
    and any of these read from a session)."""
    return python_file(program) is None and program.kind in MODULE_KINDS


def as_captured_gspmd(
    program: Program, mesh: Mesh, specs: Mapping[str | int, SpecLike] | None
) -> bool:
    """Whether a run of ``program`` is of a GSPMD program (torch_xla's) as it was
    captured (``compiled.as_captured``)."""
    gspmd = getattr(program, "partitioner", "shardy") == "gspmd"
    return gspmd and as_captured(program, mesh, specs)


def seeded_note(seed: int, framework: str = "jax") -> str:
    """The note a module run's result carries: its inputs are not the script's."""
    whose = "the torch_xla script's" if framework == "torch_xla" else "the program's own"
    return (
        f"the inputs are seeded, not {whose}: each argument is random data of its shape "
        f"and dtype (seed {seed}: normal floats, integers in [0, {INT_HIGH}), fair booleans)"
    )


@dataclass
class _Loaded:
    """What a module run's job function found once the program loaded: the program, the
    mesh it runs on, whether it runs as captured with GSPMD, and Shardy's prediction
    started beside the run (``predict``)."""

    program: Program | None = None
    mesh: Mesh | None = None
    gspmd: bool = False
    pending: PendingPropagation | None = None


def run_seeded(
    request: RunRequest, load: Callable[[], tuple[Program, Mesh | Mapping[str, int] | None]]
) -> tuple[RunResult, Program]:
    """Compile the module of the program ``load()`` gives with the request's mesh and
    specs written on it, and run it on seeded inputs on fake CPU devices; what it found,
    and the program.

    The worker starts first and imports JAX while ``load`` loads the program and its
    module is annotated (the time limit starts once the job is written); what ``load``
    raises is raised here. ``request.propagation`` gives the predicted collectives to
    match the compiled ones with; without it, ``request.predict`` has Shardy predict them
    beside the run (in a forked child). Raises ``SpecError`` / ``MeshError`` for bad input
    (a spec on an axis the mesh lacks, a mesh larger than the CPU devices a run may
    have), ``ShardscopeError`` (one line) for whatever goes wrong in the worker,
    ``RunCancelled`` once ``request.cancel`` is.
    """
    loaded = _Loaded()
    predicted, why = request.propagation, ""
    try:
        report, log_text = _run_worker(request, _job_function(request, load, loaded), loaded)
        if loaded.pending is not None:
            pending, loaded.pending = loaded.pending, None
            try:
                predicted = pending.result()
            except ShardscopeError as exc:
                why = str(exc)
    except BaseException:
        if loaded.pending is not None:
            loaded.pending.cancel()
        raise
    from shardscope.backend.run.report import report_result

    program = loaded.program
    notes = _notes(program, _seed(request), loaded.gspmd, log_text)
    result = report_result(program.name, loaded.mesh, report, log_text, notes, predicted)
    if why:
        notes = [*result.notes, f"no predicted collectives to compare: {why}"]
        result = replace(result, notes=notes)
    return replace(result, inputs="seeded"), program


def _job_function(
    request: RunRequest,
    load: Callable[[], tuple[Program, Mesh | Mapping[str, int] | None]],
    loaded: _Loaded,
) -> Callable[[], dict]:
    """The function that loads the program, writes the request's mesh and specs on its
    module and returns the worker's job, filling ``loaded`` on the way."""
    from shardscope.backend.propagation.propagate import PendingPropagation, prepare

    def job() -> dict:
        program, mesh = load()
        prep = prepare(program, mesh, request.specs, keep_annotated=True)
        check_device_count(prep.mesh)
        loaded.program, loaded.mesh = program, prep.mesh
        gspmd = loaded.gspmd = as_captured_gspmd(program, prep.mesh, request.specs)
        if request.propagation is None and request.predict:
            loaded.pending = PendingPropagation(prep, True, True)
        return {
            # A GSPMD program run as captured is compiled as its framework compiles it:
            # its own shardings, partitioned by GSPMD.
            "module": program.mlir_text if gspmd else prep.annotated_text,
            "partitioner": "gspmd" if gspmd else "shardy",
            "mesh": prep.mesh.to_json(),
            "arg_names": _arg_names(program),
            "seed": _seed(request),
            "runs": request.runs,
            "reference": request.reference,
            "values": request.values,
        }

    return job


def _run_worker(request: RunRequest, job: Callable[[], dict], loaded: _Loaded) -> tuple[dict, str]:
    """Run the module worker on ``job``; its report and its stderr, a crash worded for
    the program ``loaded`` names."""
    cancel = request.cancel or Cancel()
    with tempfile.TemporaryDirectory(prefix="shardscope-module-run-") as tmp:
        log = Path(tmp) / "stderr.txt"
        try:
            report = run_json_worker(
                WORKER,
                job,
                what=WHAT,
                cwd=Path.cwd(),
                timeout=request.timeout,
                env={**run_environment(False), **cancel.worker_env(Path(tmp))},
                log=log,
            )
        except ShardscopeError as exc:
            if cancel.cancelled:
                raise RunCancelled(CANCELLED) from None
            if str(exc).startswith(f"{WHAT} crashed") and loaded.program is not None:
                raise ShardscopeError(
                    f"{loaded.program.name}: {exc}; XLA crashed compiling or running the "
                    f"module: check its shardings against the mesh (propagate shows them)"
                ) from None
            raise
        return report, log.read_text(errors="replace") if log.exists() else ""


def _notes(program: Program, seed: int, gspmd: bool, log_text: str) -> list[str]:
    """The notes a module run's result carries: seeded inputs, and which partitioner
    compiled the module."""
    notes = [seeded_note(seed, getattr(program, "framework", "jax"))]
    if gspmd:
        notes.append(
            f"XLA compiled the module with GSPMD, as {program.framework} does, on the "
            f"shardings the script gave it (jaxlib's XLA: it may combine collectives "
            f"differently from {program.framework}'s own)"
        )
    elif _GSPMD_FALLBACK in log_text:
        notes.append(
            "XLA compiled the module with GSPMD, not Shardy: the module carries GSPMD "
            "shardings (mhlo.sharding)"
        )
    elif getattr(program, "partitioner", "shardy") == "gspmd":
        notes.append(
            f"XLA compiled the module with Shardy on the shardings written on it; "
            f"{getattr(program, 'framework', 'its framework')} compiles it with GSPMD, so "
            f"these collectives may differ from the ones the script ran"
        )
    return notes


def _seed(request: RunRequest) -> int:
    """The seed of the request's inputs."""
    return SEED if request.seed is None else request.seed


def _arg_names(program: Program) -> list[str]:
    """Each argument's name as the program graph gives it (its display name where it has
    no name)."""
    graph = program.graph
    return [v.name or v.display_name for v in graph.arguments]
