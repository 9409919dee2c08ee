"""Run a program's module on fake CPU devices: ``run`` for a ``.mlir`` file or a capture.

A ``.mlir`` module, a captured function (a JAX or torch_xla capture) or a program read
from a session has no Python to call again, but its module runs as it is: ``run_module``
writes the session's mesh and specs on it (``propagation.propagate.prepare``, the text
``propagate --json``'s compile takes), and a worker (``run.module_worker``) compiles it
with XLA on ``mesh.size`` fake CPU devices in the mesh's device order, runs it on seeded
inputs of each argument's shape and dtype (``inputs.random_array``), and reads back each
device's shards and the compiled collectives. The result is the ``RunResult`` a Python
program's run gives; its ``inputs`` is ``"seeded"`` and its notes say plainly that the
inputs are not the script's. Shardy's prediction (``propagation``, or one made beside
the run with ``predict``) is matched with the compiled collectives as for a Python run.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.program.consent import python_file
from shardscope.backend.run.cancel import CANCELLED, Cancel, RunCancelled
from shardscope.backend.run.compiled import as_captured
from shardscope.backend.run.inputs import INT_HIGH, SEED
from shardscope.backend.run.worker_setup import DEFAULT_RUNS, check_device_count, run_environment

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.annotate import SpecLike
    from shardscope.backend.propagation.result import PropagationResult
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


def run_module(
    program: Program,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, SpecLike] | None = None,
    *,
    timeout: float = 300.0,
    runs: int = DEFAULT_RUNS,
    seed: int = SEED,
    propagation: PropagationResult | None = None,
    predict: bool = False,
    reference: bool = True,
    values: bool = True,
    cancel: Cancel | None = None,
) -> RunResult:
    """Compile ``program``'s module with ``mesh`` and ``specs`` written on it and run it on
    seeded inputs on fake CPU devices; what it found.

    Arguments as for ``runner.run_program``. Without ``mesh`` / ``specs`` the program's
    own apply. ``propagation`` gives the predicted collectives to match the compiled ones
    with; without it, ``predict`` has Shardy predict them beside the run (in a forked
    child). Raises ``SpecError`` / ``MeshError`` for bad input (a spec on an axis the
    mesh lacks, a mesh larger than the CPU devices a run may have), ``ShardscopeError``
    (one line) for whatever goes wrong in the worker, ``RunCancelled`` once ``cancel`` is.
    """
    return run_loaded_module(
        lambda: (program, mesh),
        specs,
        timeout=timeout,
        runs=runs,
        seed=seed,
        propagation=propagation,
        predict=predict,
        reference=reference,
        values=values,
        cancel=cancel,
    )


def run_loaded_module(
    load: Callable[[], tuple[Program, Mesh | Mapping[str, int] | None]],
    specs: Mapping[str | int, SpecLike] | None = None,
    *,
    timeout: float = 300.0,
    runs: int = DEFAULT_RUNS,
    seed: int = SEED,
    propagation: PropagationResult | None = None,
    predict: bool = False,
    reference: bool = True,
    values: bool = True,
    cancel: Cancel | None = None,
) -> RunResult:
    """``run_module`` of the program and mesh ``load()`` gives: the worker starts first
    and imports JAX while ``load`` loads the program and its module is annotated (the
    time limit starts once the job is written); what ``load`` raises is raised here."""
    from shardscope.backend.propagation.propagate import PendingPropagation, prepare

    got: dict = {}

    def job() -> dict:
        program, mesh = load()
        prep = prepare(program, mesh, specs, keep_annotated=True)
        check_device_count(prep.mesh)
        got.update(program=program, mesh=prep.mesh)
        gspmd = as_captured_gspmd(program, prep.mesh, specs)
        got["gspmd"] = gspmd
        if propagation is None and predict:
            got["pending"] = PendingPropagation(prep, True, True)
        return {
            # A GSPMD program run as captured is compiled as its framework compiles it:
            # its own shardings, partitioned by GSPMD.
            "module": program.mlir_text if gspmd else prep.annotated_text,
            "partitioner": "gspmd" if gspmd else "shardy",
            "mesh": prep.mesh.to_json(),
            "arg_names": _arg_names(program),
            "seed": seed,
            "runs": runs,
            "reference": reference,
            "values": values,
        }

    cancel = cancel or Cancel()
    predicted, why = propagation, ""
    try:
        with tempfile.TemporaryDirectory(prefix="shardscope-module-run-") as tmp:
            log = Path(tmp) / "stderr.txt"
            try:
                report = run_json_worker(
                    WORKER,
                    job,
                    what=WHAT,
                    cwd=Path.cwd(),
                    timeout=timeout,
                    env={**run_environment(False), **cancel.worker_env(Path(tmp))},
                    log=log,
                )
            except ShardscopeError as exc:
                if cancel.cancelled:
                    raise RunCancelled(CANCELLED) from None
                if str(exc).startswith(f"{WHAT} crashed") and "program" in got:
                    raise ShardscopeError(
                        f"{got['program'].name}: {exc}; XLA crashed compiling or running the "
                        f"module: check its shardings against the mesh (propagate shows them)"
                    ) from None
                raise
            log_text = log.read_text(errors="replace") if log.exists() else ""
        if "pending" in got:
            try:
                predicted = got.pop("pending").result()
            except ShardscopeError as exc:
                why = str(exc)
    except BaseException:
        if "pending" in got:
            got["pending"].cancel()
        raise
    from shardscope.backend.run.report import report_result

    program, target = got["program"], got["mesh"]
    notes = [seeded_note(seed, getattr(program, "framework", "jax"))]
    if got.get("gspmd"):
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
    result = report_result(program.name, target, report, log_text, notes, predicted)
    if why:
        result.notes.append(f"no predicted collectives to compare: {why}")
    result.inputs = "seeded"
    return result


def _arg_names(program: Program) -> list[str]:
    """Each argument's name as the program graph gives it (its display name where it has
    no name)."""
    graph = program.graph
    return [v.name or v.display_name for v in graph.arguments]
