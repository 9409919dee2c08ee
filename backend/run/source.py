"""Run a Python program straight from its file: the CLI's ``run``, in one worker.

``run_source`` hands the worker (``run.worker``, a ``source`` job) the program's path,
parameters and the mesh and specs the user gave; the worker imports JAX once, loads the
program as the load worker does, checks the run, predicts its collectives, compiles and
runs it. The report is the one ``runner.run_program`` gives for a loaded program, with
the predicted collectives matched in, and the same one-line errors: loading has its own
time limit and messages (``load``'s), the run its own from when loading ended.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import MeshError, ProgramError, ShardscopeError
from shardscope.backend.isolation.fork import can_fork
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.isolation.limits import memory_limit, memory_message
from shardscope.backend.isolation.relay import KilledItsParent
from shardscope.backend.isolation.worker_job import FirstStage, WorkerTimeout
from shardscope.backend.program.load import program_timeout_message
from shardscope.backend.run.worker_setup import (
    DEFAULT_RUNS,
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
    from shardscope.backend.run.result import RunResult

# What reads the worker's report (numpy, MLIR's bindings, the matcher) is imported while
# the worker starts, not before: ``_import_readers``.
_READERS = (
    "shardscope.backend.run.runner",
    "shardscope.backend.run.match",
    "shardscope.backend.run.result",
    "shardscope.backend.run.host_reports",
)


@dataclass
class SourceRun:
    """What ``run_source`` found: the run, and the program's own mesh (for the note that
    ``--mesh`` replaced it)."""

    result: RunResult
    program_mesh: dict[str, int] | None


def run_source(
    path: Path,
    params: dict[str, str],
    *,
    name: str,
    source: str,
    kind: str,
    mesh: Mesh | None = None,
    device_order: tuple[int, ...] | None = None,
    specs: dict[str, str] | None = None,
    timeout: float = 300.0,
    runs: int = DEFAULT_RUNS,
    seed: int | None = None,
    reference: bool = True,
    values: bool = True,
    hosts: int | None = None,
    dcn: str | None = None,
) -> SourceRun:
    """Load the Python program at ``path`` (resolved; ``load.python_source``) and run it.

    ``name``, ``source`` and ``kind`` are what ``load_program`` would call it. ``mesh``
    and ``specs`` (name -> spec text) replace the program's ``MESH`` and ``SPECS`` where
    given; without ``mesh``, ``device_order`` (the device id at each row-major position)
    lays the program's own ``MESH`` out over the devices; ``seed`` (default: ``inputs.SEED``) seeds the random inputs. ``timeout``
    limits loading, and then the run. Raises ``ShardscopeError`` (one line) as
    ``load_program`` and ``run_program`` do. The result's ``stages`` say where the time
    went, from this process's start (``before_worker``) to reading the report.

    ``hosts`` and ``dcn`` (``sharding.hosts.apply_hosts``) run it as that many processes
    on JAX's distributed runtime, fake CPU devices each (``hosts_run``); each host loads
    the program, so the program's own mesh is laid out over the hosts where it is known,
    in the workers. A mesh the hosts do not split evenly is refused before anything
    starts where it is given here.
    """
    count = host_count(hosts, dcn)
    accelerator = accelerator_installed() and count == 1
    if mesh is not None and not accelerator:
        check_device_count(mesh)
    if mesh is not None and (hosts is not None or dcn):
        mesh, on_hosts = apply_hosts(mesh, hosts, dcn)
        count, dcn = on_hosts.count, None  # the mesh is in the hosts' order already
    job = {
        "kind": "source",
        "path": str(path),
        "cwd": str(path.parent),
        "params": dict(params),
        "name": name,
        "source": source,
        "program_kind": kind,
        "mesh": mesh.to_json() if mesh is not None else None,
        "device_order": list(device_order) if device_order and mesh is None else None,
        "specs": dict(specs) if specs is not None else None,
        "cpu_devices": mesh.size if mesh is not None and not accelerator else None,
        "seed": seed,
        "runs": runs,
        "reference": reference,
        "values": values,
        "timeout": timeout,
    }
    if count > 1:
        job["dcn"] = dcn
    age = process_age()
    born = time.time() - age if age is not None else None
    work = _work if count == 1 else _work_on_hosts
    report, spawned, log_text = work(path, job, timeout, accelerator, count)
    if report.get("needs_devices") and not accelerator:
        # The program's import or its mesh needs more fake CPU devices than the worker
        # started with (or, on several hosts, other than it started with): once more,
        # with as many from the start.
        needed = int(report["needs_devices"])
        if needed > cpu_device_limit() or job["cpu_devices"] == needed:
            raise ShardscopeError(report["error"])
        job["cpu_devices"] = needed
        report, spawned, log_text = work(path, job, timeout, accelerator, count)
        if report.get("needs_devices"):
            raise ShardscopeError(report["error"])
    from shardscope.backend.run.host_reports import hosted_result
    from shardscope.backend.run.match import match
    from shardscope.backend.run.report import report_result
    from shardscope.backend.run.result import PredictedRef

    read = time.perf_counter()
    run_mesh = Mesh.from_json(report["mesh"])
    result = report_result(name, run_mesh, report, log_text, report["plan_notes"], None)
    if report["predicted"] is not None:
        refs = [PredictedRef(**_ref_fields(r)) for r in report["predicted"]]
        result.collectives, result.predicted_only = match(result.collectives, refs)
    else:
        result.notes.append(f"no predicted collectives to compare: {report['predicted_error']}")
    stages = dict(report.get("stages") or {})
    worker_started = stages.pop("started", spawned)
    before = {"before_worker": spawned - born} if born is not None else {}
    result.stages = {
        **before,
        "worker_start_and_imports": max(0.0, worker_started - spawned),
        **stages,
        "worker_exit_and_report": report["_received"] - worker_started - sum(stages.values()),
        "read_report": time.perf_counter() - read,
    }
    if count > 1:
        result = hosted_result(result, Hosts(count, run_mesh.size))
    return SourceRun(result, (report.get("program") or {}).get("mesh"))


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
            raise MeshError(f"--dcn {item}: give a whole number of hosts, e.g. {name.strip()}=2")
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
