"""JSON workers: a worker that takes a job file and writes a report file.

The report is ``{"ok": true, ...}`` or ``{"ok": false, "error": ...}``:
``run_json_worker`` is the parent's side, turning every way it can fail into a one-line
``ShardscopeError``, ``json_worker_main`` the child's.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.jobs import run_worker
from shardscope.backend.isolation.limits import is_out_of_memory, memory_limit, memory_message
from shardscope.backend.isolation.registry import CancelGroup
from shardscope.backend.isolation.worker_job import FirstStage, WorkerJob, WorkerTimeout


def run_json_worker(
    module: str,
    job: dict | Callable[[], dict],
    *,
    what: str,
    cwd: Path,
    timeout: float,
    devices: int | None = None,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    first_stage: FirstStage | None = None,
    fork: bool = False,
    timeout_fix: str = "allow more with --timeout",
    group: CancelGroup | None = None,
) -> dict:
    """Run the JSON worker ``module`` on ``job`` in a new process; its report.

    ``what`` names the work in messages (``the GSPMD compile``). The worker's stderr goes
    to the file ``log`` when given (it is kept), else to a temporary one; its stdout is
    dropped. ``job`` may be a function that returns the job: it is called once the worker
    has started (which imports its modules meanwhile, ``json_worker_main``); the time
    limit starts when it returns, and what it raises ends the worker and is raised here.
    Raises ``ShardscopeError`` when the worker runs past ``timeout`` (``timeout_fix`` ends
    that message: how the user allows more), dies without a report (quoting its stderr) or
    reports a failure; ``WorkerTimeout`` past ``first_stage``'s limit, for the caller to
    word; ``GroupCancelled`` when cancel ``group`` (None: the registry's default) is
    cancelled. ``fork`` forks the worker from this process (``WorkerJob.fork``).
    """
    with tempfile.TemporaryDirectory(prefix="shardscope-worker-") as tmp:
        job_path, out = Path(tmp) / "job.json", Path(tmp) / "out.json"

        def write_job() -> None:
            _write_whole(job_path, json.dumps(job() if callable(job) else job))

        if not callable(job):
            write_job()
        worker = WorkerJob(
            module,
            (str(job_path), str(out)),
            cwd=cwd,
            log=log if log is not None else Path(tmp) / "stderr.txt",
            timeout=timeout,
            devices=devices,
            env=dict(env or {}),
            log_stdout=False,
            first_stage=first_stage,
            fork=fork,
            group=group,
        )
        try:
            returncode = run_worker(worker, write_job if callable(job) else None)
        except WorkerTimeout as exc:
            if exc.first_stage:
                raise
            raise ShardscopeError(f"{exc.message(what)}; {timeout_fix}") from None
        report = _read_report(worker, returncode, out, what)
    if not report.get("ok"):
        raise ShardscopeError(report.get("error", f"{what} failed"))
    return report


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole, then rename: a waiting worker never reads half a
    job."""
    part = path.with_suffix(".part")
    part.write_text(text)
    os.replace(part, path)


def _read_report(worker: WorkerJob, returncode: int, out: Path, what: str) -> dict:
    """The report ``worker`` wrote to ``out``; a ``ShardscopeError`` saying how it ended
    (``what`` ran out of memory, or crashed) when it wrote none."""
    if not out.exists():
        crash = worker.crash(returncode)
        if crash.out_of_memory:
            raise ShardscopeError(memory_message(what, memory_limit()))
        detail = f" (last output: {crash.last_line})" if crash.last_line else ""
        raise ShardscopeError(f"{what} crashed: its worker {crash.how}{detail}")
    return json.loads(out.read_text())


def wait_for_file(path: Path, poll: float = 0.01) -> None:
    """Wait until ``path`` exists (a worker whose job is written after it started; its
    parent kills it if the job never comes)."""
    while not path.exists():
        time.sleep(poll)


def json_worker_main(argv: list[str], work: Callable[[dict, Path], dict], *, failure: str) -> int:
    """The child's side of ``run_json_worker``; ``argv`` is ``JOB_PATH OUT_PATH``.

    Calls ``work(job, scratch)``, where ``scratch`` is a folder the worker may fill (it is
    removed with the job), and writes the report it returns. An exception becomes the
    report ``{"ok": false, "error": "<failure>: <Type>: <message>"}`` with the whole
    message (``exception_text``); a failed allocation, ``<failure>: ... ran out of memory``.
    """
    job_path, out_path = argv
    wait_for_file(Path(job_path))
    job = json.loads(Path(job_path).read_text())
    try:
        report = work(job, Path(job_path).parent)
    except Exception as exc:  # noqa: BLE001 - user code and the compiler both run here
        if is_out_of_memory(exc):
            error = f"{failure}: {memory_message('the worker', memory_limit())}"
        else:
            error = f"{failure}: {exception_text(exc)}"
        report = {"ok": False, "error": error}
    Path(out_path).write_text(json.dumps(report))
    return 0


def exception_text(exc: BaseException, max_lines: int = 40, max_chars: int = 4000) -> str:
    """``Type: message`` with the whole message: libraries such as Equinox name the
    offending argument lines below the first. Blank runs are squeezed and a very long
    message is cut, saying so."""
    lines: list[str] = []
    for line in str(exc).strip().splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    text = "\n".join(lines[:max_lines])
    if len(lines) > max_lines or len(text) > max_chars:
        text = text[:max_chars].rstrip() + "\n... (message cut)"
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
