"""Run a Python program straight from its file: the CLI's ``run``, in one worker.

``run_file`` hands the worker (``run.worker``, a ``source`` job) the program's path,
parameters and the mesh and specs the user gave; the worker imports JAX once, loads the
program as the load worker does, checks the run, predicts its collectives, compiles and
runs it. The report is the one ``runner.run_python`` gives for a loaded program, with
the predicted collectives matched in, and the same one-line errors: loading has its own
time limit and messages (``load``'s), the run its own from when loading ended.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import MeshError, ProgramError, ShardscopeError, shortened
from shardscope.backend.isolation.fork import can_fork
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.isolation.limits import memory_limit, memory_message
from shardscope.backend.isolation.relay import KilledItsParent
from shardscope.backend.isolation.worker_job import FirstStage, WorkerTimeout
from shardscope.backend.program.load import program_timeout_message
from shardscope.backend.run.request import ProgramFile, RunDone, RunRequest
from shardscope.backend.run.worker_setup import (
    WHAT,
    WORKER,
    accelerator_installed,
    check_device_count,
    cpu_device_limit,
    run_environment,
)
from shardscope.backend.sharding.hosts import Hosts, apply_hosts
from shardscope.backend.sharding.mesh import Mesh

if TYPE_CHECKING:
    from shardscope.backend.propagation.annotate import SpecLike
    from shardscope.backend.run.result import RunResult

# What reads the worker's report (numpy, MLIR's bindings, the matcher) is imported while
# the worker starts, not before: ``_import_readers``.
_READERS = (
    "shardscope.backend.run.runner",
    "shardscope.backend.run.match",
    "shardscope.backend.run.result",
    "shardscope.backend.run.host_reports",
)


def run_file(file: ProgramFile, request: RunRequest) -> RunDone:
    """Load the Python program ``file`` names and run it as ``request`` asks.

    The request's ``mesh`` and ``specs`` (name -> spec) replace the program's ``MESH`` and
    ``SPECS`` where given; without a mesh, ``file.device_order`` lays the program's own
    ``MESH`` out over the devices. ``timeout`` limits loading, and then the run. Raises
    ``ShardscopeError`` (one line) as ``load_program`` and ``dispatch.run`` do. The
    result's ``stages`` say where the time went, from this process's start
    (``before_worker``) to reading the report.

    ``hosts`` and ``dcn`` (``sharding.hosts.apply_hosts``) run it as that many processes
    on JAX's distributed runtime, fake CPU devices each (``hosts_run``); each host loads
    the program, so the program's own mesh is laid out over the hosts where it is known,
    in the workers. A mesh the hosts do not split evenly is refused before anything
    starts where it is given here.
    """
    job, count, accelerator = _source_job(file, request)
    age = process_age()
    born = time.time() - age if age is not None else None
    timeout = request.timeout
    report, spawned, log_text = _work_for_devices(file.path, job, timeout, accelerator, count)
    read = time.perf_counter()
    result = _read_result(file.name, report, log_text, count)
    stages = dict(report.get("stages") or {})
    worker_started = stages.pop("started", spawned)
    before = {"before_worker": spawned - born} if born is not None else {}
    stages = {
        **before,
        "worker_start_and_imports": max(0.0, worker_started - spawned),
        **stages,
        "worker_exit_and_report": report["_received"] - worker_started - sum(stages.values()),
        "read_report": time.perf_counter() - read,
    }
    result = replace(result, stages=stages)
    if count > 1:
        from shardscope.backend.run.host_reports import hosted_result

        result = hosted_result(result, Hosts(count, Mesh.from_json(report["mesh"]).size))
    return RunDone(result, (report.get("program") or {}).get("mesh"))


def _source_job(file: ProgramFile, request: RunRequest) -> tuple[dict, int, bool]:
    """The worker's job for ``file`` run as ``request`` asks, how many hosts run it, and
    whether it runs on an accelerator. Refuses a given mesh too large for the devices or
    that the hosts do not split evenly."""
    dcn = request.dcn
    count = host_count(request.hosts, dcn)
    accelerator = accelerator_installed() and count == 1
    mesh = request.mesh
    if mesh is not None and not isinstance(mesh, Mesh):
        mesh = Mesh.from_dict(dict(mesh))
    if mesh is not None and not accelerator:
        check_device_count(mesh)
    if mesh is not None and (request.hosts is not None or dcn):
        mesh, on_hosts = apply_hosts(mesh, request.hosts, dcn)
        count, dcn = on_hosts.count, None  # the mesh is in the hosts' order already
    specs = request.specs
    device_order = file.device_order
    job = {
        "kind": "source",
        "path": str(file.path),
        "cwd": str(file.path.parent),
        "params": dict(file.params),
        "name": file.name,
        "source": file.source,
        "program_kind": file.kind,
        "mesh": mesh.to_json() if mesh is not None else None,
        "device_order": list(device_order) if device_order and mesh is None else None,
        "specs": _spec_texts(specs) if specs is not None else None,
        "cpu_devices": mesh.size if mesh is not None and not accelerator else None,
        "seed": request.seed,
        "runs": request.runs,
        "reference": request.reference,
        "values": request.values,
        "timeout": request.timeout,
    }
    if count > 1:
        job["dcn"] = dcn
    return job, count, accelerator


def _spec_texts(specs: Mapping[str | int, SpecLike]) -> dict[str, str]:
    """Each spec's text by the name it is on, as the worker reads them."""
    if all(isinstance(v, str) for v in specs.values()):
        return {str(k): v for k, v in specs.items()}  # as given: nothing to import
    from shardscope.backend.propagation.annotate import as_spec

    return {str(k): as_spec(v).format() for k, v in specs.items()}


def _work_for_devices(
    path: Path, job: dict, timeout: float, accelerator: bool, count: int
) -> tuple[dict, float, str]:
    """``_work`` (or ``_work_on_hosts``) of ``job``, once more with as many fake CPU
    devices as the program asked for where it needed more (or, on several hosts, other)
    than the worker started with."""
    work = _work if count == 1 else _work_on_hosts
    report, spawned, log_text = work(path, job, timeout, accelerator, count)
    if report.get("needs_devices") and not accelerator:
        needed = int(report["needs_devices"])
        if needed > cpu_device_limit() or job["cpu_devices"] == needed:
            raise ShardscopeError(report["error"])
        job = {**job, "cpu_devices": needed}
        report, spawned, log_text = work(path, job, timeout, accelerator, count)
        if report.get("needs_devices"):
            raise ShardscopeError(report["error"])
    return report, spawned, log_text


def _read_result(name: str, report: dict, log_text: str, count: int) -> RunResult:
    """The run's result from the worker's ``report``, its predicted collectives matched in
    (or a note saying why there are none)."""
    from shardscope.backend.run.match import match
    from shardscope.backend.run.report import report_result
    from shardscope.backend.run.result import PredictedRef

    run_mesh = Mesh.from_json(report["mesh"])
    result = report_result(name, run_mesh, report, log_text, report["plan_notes"], None)
    if report.get("explained") is not None:
        return result  # explained and matched in the worker
    if report["predicted"] is not None:
        refs = [PredictedRef(**_ref_fields(r)) for r in report["predicted"]]
        collectives, predicted_only = match(result.collectives, refs)
        return replace(result, collectives=collectives, predicted_only=predicted_only)
    why = f"no predicted collectives to compare: {report['predicted_error']}"
    return replace(result, notes=[*result.notes, why])


def host_count(hosts: int | None, dcn: str | None) -> int:
    """How many hosts ``--hosts`` and ``--dcn`` ask for before the mesh is known: the
    host count, else the product of the DCN factors. ``MeshError`` for a bare axis name
    in ``dcn`` without ``hosts`` (its factor is the axis' size, which the mesh says)."""
    if hosts is not None:
        return int(hosts)
    if not dcn:
        return 1
    count = 1
    for item in (p.strip() for p in dcn.split(",")):
        name, sep, value = item.partition("=")
        if not sep:
            raise MeshError(
                f"--dcn {name.strip()} lays the whole axis over hosts, whose size the mesh "
                f"says: give --hosts too, or --mesh, or write {name.strip()}=N"
            )
        if not value.strip().isdigit() or int(value) < 1:
            raise MeshError(f"--dcn {shortened(item)}: give a whole number of hosts, e.g. data=2")
        count *= int(value)
    return count


def process_age() -> float | None:
    """Seconds since this process started (to 10 ms), from Linux's /proc; None elsewhere."""
    try:
        stat = Path("/proc/self/stat").read_text()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        # Field 22, start time in clock ticks after boot; the name (field 2) may hold spaces.
        started = int(stat.rsplit(")", 1)[1].split()[19]) / ticks
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, uptime - started)


def _import_readers(job: dict) -> dict:
    """Import what reads the report, while the worker imports JAX; then its job. (In this
    thread: two threads importing numpy or jaxlib at once can each see the other's
    half-initialised module.)"""
    for name in _READERS:
        importlib.import_module(name)
    return job


def _ref_fields(data: dict) -> dict:
    return {**data, "axes": tuple(data["axes"])}


def _work_on_hosts(
    path: Path, job: dict, timeout: float, accelerator: bool, count: int
) -> tuple[dict, float, str]:
    """``_work`` on ``count`` hosts (``hosts_run``): their reports as one, when they
    started and host 0's stderr. What reads their reports is imported while they run."""
    from shardscope.backend.run.hosts_run import run_hosts

    try:
        done = run_hosts(
            {**job, "loaded": "each host's own"},
            count,
            timeout=timeout,
            cwd=Path.cwd(),
            env=run_environment(False),
            while_waiting=lambda: _import_readers({}),
        )
    except WorkerTimeout as exc:
        raise ProgramError(program_timeout_message(path, exc)) from None
    if done.needs_devices is not None:
        return done.reports[0], done.spawned, ""
    from shardscope.backend.run.host_reports import merge_reports

    report = merge_reports(done.reports)
    report["_received"] = time.time()
    return report, done.spawned, done.logs[0]


def _work(
    path: Path, job: dict, timeout: float, accelerator: bool, count: int = 1
) -> tuple[dict, float, str]:
    """The worker's report, when it started (``time.time``) and its stderr."""
    with tempfile.TemporaryDirectory(prefix="shardscope-run-") as tmp:
        loaded = Path(tmp) / "loaded"
        log = Path(tmp) / "stderr.txt"
        job = {**job, "loaded": str(loaded)}
        spawned = time.time()
        try:
            report = run_json_worker(
                WORKER,
                lambda: _import_readers(job),
                what=WHAT,
                cwd=Path.cwd(),
                timeout=timeout,
                env=run_environment(accelerator),
                log=log,
                first_stage=FirstStage(loaded, timeout),
                # From the CLI, which has one thread and no JAX yet: a fork of it starts
                # sooner than a fresh interpreter and imports JAX fresh all the same.
                fork=can_fork(),
            )
        except WorkerTimeout as exc:
            raise ProgramError(program_timeout_message(path, exc)) from None
        except KilledItsParent as exc:
            raise ProgramError(exc.message(str(path))) from None
        except ShardscopeError as exc:
            raise _worded(exc, path, job["name"], loaded.exists()) from None
        report["_received"] = time.time()
        log_text = log.read_text(errors="replace") if log.exists() else ""
    return report, spawned, log_text


def _worded(exc: ShardscopeError, path: Path, name: str, loaded: bool) -> ShardscopeError:
    """A crash worded as ``load_program`` (before the program loaded) or ``execute``
    (after) word it; other errors as they are."""
    text = str(exc)
    crashed = f"{WHAT} crashed: its worker "
    if text == memory_message(WHAT, memory_limit()) and not loaded:
        return ProgramError(f"{path}: {memory_message('loading this program', memory_limit())}")
    if not text.startswith(crashed):
        return exc
    if not loaded:
        return ProgramError(
            f"{path}: the worker loading this program {text[len(crashed) :]}; the program or "
            f"the compiler crashed: run the file with python directly to see the full error"
        )
    return ShardscopeError(
        f"{name}: {text}; the program or the compiler crashed: run the file with python "
        f"directly to see the full error"
    )
