"""The run worker: compile a program with ``jax.jit`` on a real mesh, run it, read it back.

Run as ``python -m shardscope.backend.run.worker JOB OUT`` (a JSON worker, see
``isolation.json_worker``). The job names the program file, its parameters, the mesh, the spec
text of each named argument and result, the flat argument names, the seed and how many
timed runs. The worker:

- builds a ``jax.sharding.Mesh`` over the attached devices (an accelerator's when JAX
  finds one, else the fake CPU devices the runner asked for) and refuses a mesh larger
  than them;
- traces and compiles ``PROGRAM`` as the load lowered it (``trace.program_call``: an
  ``nnx.jit`` program on its split state, an ``eqx.filter_jit`` one as Equinox splits
  it) with each named argument's ``NamedSharding`` (unnamed arguments unspecified, so
  the compiler chooses, as ``jax.jit`` does) and each named result constrained to its
  spec;
- runs it on seeded random inputs (or the arrays the program file gives) placed as the
  executable wants them: once to warm up, then ``runs`` timed runs;
- runs the same function unsharded, on one device, for the error of each output;
- reports each device's shard of every argument and output, the compiled collectives
  (``hlo.hlo_collectives``), the executable's per-device memory, the HLO text and the
  seconds each stage took (``stages``).

A ``source`` job (``run.source``, the CLI's ``run``) names only the program file, the
mesh and specs the user gave: the worker loads the program itself first (as the load
worker does) and predicts its collectives (``propagation``), so one process imports JAX.

A job with a ``distributed`` entry is one host of a run on several (``run --hosts``,
``hosts_run`` starts them): it joins JAX's distributed runtime before the program's
import, lays the mesh out over every host's devices by device number, places inputs
from its own copy of them, waits for the other hosts before its runs, and reports the
shards it holds (``run.distributed``); host 0 alone reads the collectives and predicts
them. Each stage's name goes to the job's ``stage_file`` as it ends, for the parent to
watch.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import jax
import numpy as np
from jax.sharding import NamedSharding

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.json_worker import json_worker_main
from shardscope.backend.isolation.limits import is_out_of_memory
from shardscope.backend.isolation.thread_stacks import size_thread_stacks
from shardscope.backend.program.load import lowered_program
from shardscope.backend.program.lower import (
    DEFAULT_DEVICES,
    UserError,
    import_program,
    lower_namespace,
)
from shardscope.backend.run import distributed
from shardscope.backend.run.distributed import HostJob
from shardscope.backend.run.inputs import SEED
from shardscope.backend.run.program_run import (
    Laps,
    RunRefused,
    jax_mesh,
    run_loaded,
    too_many_devices,
)
from shardscope.backend.run.reference import (
    REFERENCE_SHARE,
    ProgramInputs,
    ReferenceProcess,
    own_mesh,
    program_inputs,
)
from shardscope.backend.run.worker_failures import failure_line, report_to
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import parse_spec

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.propagate import PendingPropagation
    from shardscope.backend.run.runner import RunPlan


def main(argv: list[str]) -> int:
    """Worker entry point: ``JOB OUT``; on fake CPU devices, the CPU client's thread
    stacks sized for their count first (``isolation.thread_stacks``)."""
    size_thread_stacks()
    report_to(Path(argv[1]) if len(argv) > 1 else None)
    return json_worker_main(argv, run_job, failure="the run failed")


def run_job(job: dict, scratch: Path) -> dict:
    """Compile and run the job's program; the report for the parent."""
    laps = Laps(job.get("stage_file"))
    if job.get("pid_file"):
        # For ``runner.Cancel``: it kills this worker's process group (led by its relay,
        # ``relay.split_off_worker``), or, if it asked before this line, leaves
        # ``cancel_file`` for the check below.
        Path(job["pid_file"]).write_text(str(os.getpgrp()))
        if Path(job["cancel_file"]).exists():
            return {"ok": False, "error": "the run was cancelled"}
    jax.config.update("jax_enable_compilation_cache", False)
    # JAX's own frames stay in the tracebacks of what the program raises, so a failure
    # tells JAX's errors from the program's own (``worker_failures.reference_words``).
    jax.config.update("jax_traceback_filtering", "off")
    # The worker may have started before its program was loaded (``runner.execute``):
    # the CPU device count and the program's folder come with the job. JAX reads the
    # count when it first asks for devices, which nothing has done yet.
    source = job.get("kind") == "source"
    devices = job.get("cpu_devices") or (DEFAULT_DEVICES if source else None)
    host = HostJob.from_job(job)
    # One host of several: its share of the devices (a guess until a source job's
    # program names its mesh, ``_from_source``), set as it joins the runtime below.
    per_host = max(1, int(devices) // host.count) if host is not None else None
    if host is None:
        jax.config.update("jax_num_cpu_devices", int(devices))
    os.chdir(job["cwd"])
    sys.path[0] = job["cwd"]
    if job.get("kind") == "reshard":
        return _reshard(job)
    reference = None
    on_cpu = os.environ.get("JAX_PLATFORMS") == "cpu"
    if job.get("reference", True) and on_cpu and hasattr(os, "fork"):
        # Forked now, before anything here starts JAX's backend (``reference``); elsewhere
        # the reference is a thread (``ReferenceThread``).
        given = Mesh.from_json(job["mesh"]).axis_names if job.get("mesh") else None
        reference = ReferenceProcess.fork(job["path"], job["params"], given, scratch)
    try:
        if host is not None:
            # After the fork (the runtime starts threads) and before the program's import,
            # which may ask for devices.
            distributed.join(host, per_host)
            laps.lap("initialize")
        if source:
            report = _from_source(job, laps, reference)
        else:
            report = run_loaded(job, laps=laps, reference=reference, deadline=_deadline(job))
    except (RunRefused, ShardscopeError) as exc:
        # Bad input (a mesh, a spec): every host of a run on several refuses it alike,
        # which the stage ``refused`` tells the parent (``hosts_run``).
        laps.lap("refused")
        return {"ok": False, "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - user code and the compiler both run here
        if is_out_of_memory(exc):
            raise  # json_worker_main names the memory limit
        return {"ok": False, "error": failure_line(job["path"], exc)}
    finally:
        if reference is not None:
            reference.stop()
    report["stages"] = {"started": laps.started, **laps.seconds}
    return report


class _Answer(Exception):  # noqa: N818 - carries a report back, not an error
    """A stage of a source job that ends it early with ``report`` (a load that failed, a
    request for more devices)."""

    def __init__(self, report: dict) -> None:
        super().__init__(report.get("error"))
        self.report = report


@dataclass
class _SourceLoaded:
    """A source job's program once loaded: its namespace, the program, the mesh the job
    gives (None: the program's own) and the host this worker is, if one of several."""

    ns: dict
    program: Program
    given: Mesh | None
    host: HostJob | None


def _from_source(job: dict, laps: Laps, reference: ReferenceProcess | None = None) -> dict:
    """The CLI's ``run`` in one worker: load the program file as the load worker does
    (import, trace, lower), check the run, predict its collectives, then compile and run.

    The parent's time limit for loading ends when the file ``job["loaded"]`` appears. A
    program that needs more fake CPU devices than this worker has gets
    ``{"ok": true, "needs_devices": N, "error": ...}``: the parent starts another worker
    with N.
    """
    try:
        loaded = _load_source(job, laps)
        deadline = _deadline(job)  # the run's time limit starts now
        laps.lap("lower")
        plan, inputs = _plan_source(job, loaded, reference)
    except _Answer as answer:
        return answer.report
    laps.lap("plan")
    pending, why = _predict_beside(loaded, plan, job.get("specs"))
    laps.lap("propagate")
    try:
        # A host of several runs the plan as one host of the same runtime.
        hosted = {k: job[k] for k in ("distributed", "timeout") if k in job}
        plan_job = {**plan.job, **hosted}
        report = run_loaded(
            plan_job, ns=loaded.ns, laps=laps, inputs=inputs, reference=reference, deadline=deadline
        )
    except BaseException:
        if pending is not None:
            pending.cancel()
        raise
    predicted_json, explained, why = _predicted_json(pending, report, why)
    laps.lap("predicted_collectives")
    program = loaded.program
    report.update(
        predicted=predicted_json,
        explained=explained,
        predicted_error=why,
        # The load's warnings on the program's own SPECS, where the run uses them.
        plan_notes=[*(program.warnings if job.get("specs") is None else ()), *plan.notes],
        program={"name": program.name, "mesh": program.mesh},
        mesh=plan.mesh.to_json(),
    )
    return report


def _load_source(job: dict, laps: Laps) -> _SourceLoaded:
    """Import and lower the job's program file, with as many CPU devices as its mesh has
    where the job gave none, and say it is loaded (``job["loaded"]``); ``_Answer`` with
    the report of a load that failed."""
    from shardscope.backend.propagation.propagate import own_mesh as own_mesh_in_order
    from shardscope.backend.run.worker_setup import cpu_device_limit

    path = job["path"]
    started = time.perf_counter()
    try:
        ns = import_program(path, job["params"])
    except UserError as exc:
        raise _Answer(_load_failed(job, str(exc), exc.devices)) from None
    laps.lap("import_program")
    given = Mesh.from_json(job["mesh"]) if job.get("mesh") else None
    axes = given if given is not None else own_mesh(ns)
    host = HostJob.from_job(job)
    if not job.get("cpu_devices") and axes is not None and axes.size <= cpu_device_limit():
        # Before anything starts JAX's backend: as many CPU devices as the run's mesh has
        # (a host of several: its share of them).
        if host is None:
            with contextlib.suppress(RuntimeError):  # the program's import already started it
                jax.config.update("jax_num_cpu_devices", axes.size)
        elif axes.size % host.count == 0:
            distributed.set_devices_per_host(axes.size // host.count)
    try:
        result = lower_namespace(path, ns, started)
    except UserError as exc:
        raise _Answer(_load_failed(job, str(exc), exc.devices)) from None
    program = lowered_program(Path(path), job["params"], result)
    program.name, program.source, program.kind = job["name"], job["source"], job["program_kind"]
    if given is None and job.get("device_order"):
        given = own_mesh_in_order(program, job["device_order"])
    Path(job["loaded"]).write_text("")
    return _SourceLoaded(ns, program, given, host)


def _plan_source(
    job: dict, loaded: _SourceLoaded, reference: ReferenceProcess | None
) -> tuple[RunPlan, ProgramInputs]:
    """Check the run of the loaded program and write its plan; its inputs, the reference
    started on them. ``_Answer`` asking for a worker with the mesh's devices where this
    one has too few CPU devices."""
    # Only this job plans: the worker's other jobs do not import it.
    from shardscope.backend.run.request import RunRequest
    from shardscope.backend.run.runner import plan_run

    host = loaded.host
    request = RunRequest(
        loaded.program,
        loaded.given,
        job.get("specs"),
        runs=job["runs"],
        seed=SEED if job["seed"] is None else job["seed"],
        reference=job["reference"],
        values=job["values"],
        hosts=host.count if host is not None else None,
        dcn=job.get("dcn"),
    )
    plan = plan_run(request)
    attached = len(jax.devices())
    # A host of several needs exactly the mesh's devices in all: device number d is the
    # d-th of them, and host k owns numbers k*N/H to (k+1)*N/H - 1.
    short = attached < plan.mesh.size or (host is not None and attached != plan.mesh.size)
    if short and jax.devices()[0].platform == "cpu":
        error = too_many_devices(plan.mesh, attached, "cpu")
        raise _Answer({"ok": True, "needs_devices": plan.mesh.size, "error": error})
    inputs = program_inputs(loaded.ns, plan.job["seed"])
    if reference is not None and plan.job.get("reference", True):
        reference.start(plan.mesh.axis_names, plan.job["seed"], inputs.concrete())
    return plan, inputs


def _predict_beside(
    loaded: _SourceLoaded, plan: RunPlan, specs: dict | None
) -> tuple[PendingPropagation | None, str | None]:
    """Start Shardy's prediction in a forked child (``propagation.guard``) beside the
    compile and the run (no thread of this process is at work when it forks), once for
    all hosts; or say why not."""
    from shardscope.backend.propagation.propagate import start_propagation

    host = loaded.host
    try:
        if host is None or host.index == 0:
            return start_propagation(loaded.program, plan.mesh, specs), None
    except ShardscopeError as exc:
        return None, str(exc)
    return None, None


def _predicted_json(
    pending: PendingPropagation | None, report: dict, why: str | None
) -> tuple[list[dict] | None, dict | None, str | None]:
    """The predicted collectives once Shardy is done, as the report carries them, the
    run's collectives in ``propagate``'s form (``report.explained_json``), and why there
    are none."""
    from shardscope.backend.run.match import predicted_refs
    from shardscope.backend.run.report import explained_json

    if pending is None:
        return None, None, why
    try:
        predicted = pending.result()
    except ShardscopeError as exc:
        return None, None, str(exc)
    refs = predicted_refs(predicted.collectives, predicted.graph)
    return [r.to_json() for r in refs], explained_json(predicted, report), why


def _deadline(job: dict) -> float | None:
    """When (``time.monotonic``) the run's reference is given up: its share of the time
    limit (``reference.REFERENCE_SHARE``) from now, the run's start."""
    timeout = job.get("timeout")
    return None if timeout is None else time.monotonic() + REFERENCE_SHARE * float(timeout)


def _load_failed(job: dict, error: str, devices: int | None) -> dict:
    """The load's error, or a request for a worker with the ``devices`` the program's
    import asked for where this one had fewer."""
    if devices is not None and devices > int(job.get("cpu_devices") or DEFAULT_DEVICES):
        return {"ok": True, "needs_devices": devices, "error": error}
    return {"ok": False, "error": error, "stage": "load"}


def _reshard(job: dict) -> dict:
    """``jax.device_put`` a tensor of known values from one sharding to another; each
    device's new index and whether its data are that slice of the tensor."""
    mesh = Mesh.from_json(job["mesh"])
    jmesh = jax_mesh(mesh, jax.devices())
    shape = tuple(job["shape"])
    data = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape).astype(job["dtype"])
    rank = len(shape)
    source = NamedSharding(jmesh, parse_spec(job["source"]).padded(rank).to_jax())
    target = NamedSharding(jmesh, parse_spec(job["target"]).padded(rank).to_jax())
    moved = jax.block_until_ready(jax.device_put(jax.device_put(data, source), target))
    devices = {}
    for shard in moved.addressable_shards:
        index = tuple(s.indices(n)[:2] for s, n in zip(shard.index, shape, strict=True))
        piece = data[tuple(slice(a, b) for a, b in index)]
        devices[str(shard.device.id)] = {
            "index": [list(r) for r in index],
            "data_ok": bool(np.array_equal(np.asarray(shard.data), piece)),
        }
    return {"ok": True, "devices": devices}


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is written: tearing down JAX's runtime and the interpreter (a fifth of a
    # second after a small run) would only keep the parent waiting.
    os._exit(code)
