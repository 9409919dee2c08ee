"""A run on several hosts (``run --hosts H``): the parent's side, which starts and watches them.

``run_hosts(job, count, ...)`` runs the run worker's ``job`` as ``count`` local processes
joined by JAX's distributed runtime (``run.distributed`` is the worker's side): host
``k``'s job is the same with ``"distributed": {"coordinator": "127.0.0.1:PORT",
"num_processes": count, "process_id": k}``. The port is one the system hands out, so
runs at the same time never meet, and each has temporary folders of its own. Every host
is a worker of ``isolation.jobs``: a process group of its own, dying with this process,
under the memory limit (by default each host gets its share of it).

A run fails as a whole, at the first host that fails, in one line that names it:

- a host that raises: ``host 1 of 2: prog.py:7: the run failed: ValueError: ...``;
- one that crashes or is killed: ``host 1 of 2 was killed (SIGKILL)``;
- one that stops responding: each worker adds the name of each stage it ends to a file
  this side watches; a host that has not reached a stage another reached ``LAG_S``
  seconds before (or ``LAG_SHARE`` of the time that one took to get there, if longer)
  is hung: ``host 1 of 2 stopped responding: host 0 reached "compile" 20 s ago and host
  1 has not``. A frozen host (SIGSTOP) sends no heartbeats: the runtime then ends the
  others (``distributed.HEARTBEAT_S``), which fail for want of it, and the host named is
  the one that did not fail itself.

The others are killed as soon as one fails, and the run's cancel (``run.cancel.Cancel``,
the window's Stop) kills them all.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.isolation.limits import MAX_TIMEOUT, MEMORY_ENV, check_timeout, memory_limit
from shardscope.backend.isolation.registry import interrupted
from shardscope.backend.isolation.relay import KilledItsParent
from shardscope.backend.isolation.worker_job import WorkerTimeout
from shardscope.backend.run.cancel import CANCELLED, Cancel, RunCancelled
from shardscope.backend.run.worker_setup import WHAT, WORKER

# A host this many seconds behind another's stage is hung (or this share of the time the
# other took to reach it, where that is longer: a long compile may end later on one host).
LAG_S = 20.0
LAG_SHARE = 0.5
# Stages each host reaches in step with the others: up to the end of the timed runs
# (after them a host only reads its own shards, and host 0 alone reads the collectives
# and waits for Shardy's prediction). ``refused`` is added by a worker that refused its
# job as bad input, which every host refuses alike.
SYNC_STAGES = (
    "initialize",
    "import_program",
    "lower",
    "plan",
    "propagate",
    "trace_and_lower",
    "compile",
    "run",
)
REFUSED = "refused"
# Seconds to wait, after a host failed for want of another, for the host to blame to fail
# itself (a killed host's peers may notice before this side does).
PEER_GRACE_S = 3.0
# How often the hosts' stages are read.
POLL_S = 0.05
# What a host's error or log says when it failed for want of another host: gloo's lost
# connection or context, the runtime's barrier or key-value timeouts, and the runtime
# ending a process because a task stopped sending heartbeats.
_PEER_MARKERS = (
    "Connection closed by peer",
    "Gloo context initialization failed",
    "GetKeyValue() timed out",
    "DEADLINE_EXCEEDED",
    "the JAX distributed service detected fatal errors",
    "stopped sending heartbeats",
    "heartbeat timeout",
    "Barrier failed",
    "Socket closed",
)
# What the runtime logs as it ends a process (SIGABRT) for another's failure.
_RUNTIME_ENDED = "the JAX distributed service detected fatal errors"
# Where the runtime names the hosts (its tasks) it lost.
_UNHEALTHY = (
    re.compile(r"stopped sending heartbeats\):\s*((?:\d+\s*)+)"),
    re.compile(r"Task (\d+) heartbeat timeout"),
)
_SIGNAL = re.compile(r"its worker was killed by (SIG\w+|signal \d+)(?: \(last output: (.*)\))?$")
_STATUS = re.compile(r"its worker exited with status (\d+)(?: \(last output: (.*)\))?$")


class HostFailed(ShardscopeError):
    """A host of a run on several failed; the message names it and why."""


@dataclass
class HostsRun:
    """What the hosts reported, in host order, and their stderr logs; ``needs_devices``
    where a source job's program needs a run with that many devices in all (the hosts
    were stopped: run again)."""

    reports: list[dict]
    logs: list[str]
    spawned: float  # ``time.time()`` when the hosts were started
    needs_devices: int | None = None
    # Seconds from the start to each stage, per host, as this side saw them.
    stages: list[dict[str, float]] = field(default_factory=list)


def free_port() -> int:
    """A TCP port on the loopback address that the system says is free."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Host:
    """One host's worker, run by ``run_json_worker`` in a thread of its own."""

    def __init__(self, index: int, count: int, folder: Path, job: dict) -> None:
        self.index, self.count, self.folder = index, count, folder
        self.job = job
        self.cancel = Cancel()
        self.log = folder / "stderr.txt"
        self.stage_file = Path(job["stage_file"])
        self.loaded = Path(job["loaded"]) if job.get("loaded") else None
        self.report: dict | None = None
        self.error: BaseException | None = None
        self.ended: float | None = None
        self.seen: dict[str, float] = {}
        self.thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        return f"host {self.index} of {self.count}"

    def start(self, cwd: Path, env: Mapping[str, str], backstop: float, wake: threading.Event):
        announce = self.folder / "announce"
        announce.mkdir()
        env = {**env, **self.cancel.worker_env(announce)}

        def work() -> None:
            try:
                self.report = run_json_worker(
                    WORKER, self.job, what=WHAT, cwd=cwd, timeout=backstop, env=env, log=self.log
                )
            except BaseException as exc:  # noqa: BLE001 - read by the watching thread
                self.error = exc
            finally:
                self.ended = time.monotonic()
                wake.set()

        self.thread = threading.Thread(target=work, name=f"shardscope-{self.name}", daemon=True)
        self.thread.start()

    def read_stages(self, now: float) -> None:
        """Note when each stage this host ended was first seen."""
        try:
            text = self.stage_file.read_text()
        except OSError:
            return
        for name in text.split("\n")[:-1]:  # the last piece: a line not yet whole
            self.seen.setdefault(name, now)

    @property
    def running(self) -> bool:
        return self.ended is None

    @property
    def failed(self) -> bool:
        return self.ended is not None and self.error is not None

    def kill(self) -> None:
        self.cancel.cancel()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stopped(self) -> bool:
        """Whether a process of this host's group is stopped (SIGSTOP)."""
        try:
            group = int((self.folder / "announce" / "pid").read_text())
        except (OSError, ValueError):
            return False
        return any(state == "T" for state in _group_states(group))


def _group_states(group: int) -> list[str]:
    """The state letters (``/proc/PID/stat``) of the processes of process group ``group``."""
    states = []
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 2 and fields[2] == str(group):
                states.append(fields[0])
    return states


def run_hosts(
    job: dict,
    count: int,
    *,
    timeout: float,
    cwd: Path,
    env: Mapping[str, str],
    cancel: Cancel | None = None,
    while_waiting: Callable[[], object] | None = None,
) -> HostsRun:
    """Run the worker's ``job`` on ``count`` hosts; their reports.

    ``timeout`` limits the run from the start; where the job has a ``loaded`` file (a
    source job: the worker loads the program first), it limits loading, and the run
    from when the last host has loaded. Raises ``HostFailed`` (one line naming the host)
    when a host fails, ``WorkerTimeout`` with ``first_stage`` when loading runs past its
    limit, ``ShardscopeError`` when the run does, ``RunCancelled`` once ``cancel`` is
    cancelled. No host outlives the call. ``while_waiting`` runs in this thread once
    every host has joined the runtime (what reads their reports may import then, when
    the hosts' own imports are done and it slows none of them).
    """
    check_timeout(timeout)
    env = _host_env(env, count)
    backstop = min(MAX_TIMEOUT, 2 * timeout + 120.0)
    with tempfile.TemporaryDirectory(prefix="shardscope-hosts-") as tmp:
        if cancel is not None:
            # Registers the run with ``cancel`` (``RunCancelled`` if it was already);
            # ``_watch`` sees it cancelled and ends every host.
            cancel._attach(Path(tmp))
        hosts = _hosts(job, count, Path(tmp), timeout)
        wake = threading.Event()
        spawned = time.time()
        started = time.monotonic()
        try:
            for h in hosts:
                h.start(cwd, env, backstop, wake)
            reports = _watch(hosts, started, timeout, wake, cancel, while_waiting)
            needs = [r for r in reports if r.get("needs_devices")]
            return HostsRun(
                reports,
                [h.log_text() for h in hosts],
                spawned,
                int(needs[0]["needs_devices"]) if needs else None,
                [{k: t - started for k, t in h.seen.items()} for h in hosts],
            )
        finally:
            _end_all(hosts)


def _host_env(env: Mapping[str, str], count: int) -> dict[str, str]:
    """``env`` with each host's memory limit: by default a share of the limit each."""
    env = dict(env)
    limit = memory_limit()
    if limit is not None and not os.environ.get(MEMORY_ENV, "").strip():
        env[MEMORY_ENV] = f"{limit / count / 2**30:.3f}"
    return env


def _hosts(job: dict, count: int, tmp: Path, timeout: float) -> list[_Host]:
    """The ``count`` hosts of ``job``, each with a folder of its own in ``tmp`` and the
    job as that host of the runtime."""
    coordinator = f"127.0.0.1:{free_port()}"
    hosts = []
    for k in range(count):
        folder = tmp / f"host-{k}"
        folder.mkdir()
        host_job = {
            **job,
            "distributed": {"coordinator": coordinator, "num_processes": count, "process_id": k},
            "stage_file": str(folder / "stages"),
            "timeout": timeout,
        }
        if "loaded" in job:
            host_job["loaded"] = str(folder / "loaded")
        hosts.append(_Host(k, count, folder, host_job))
    return hosts


def _end_all(hosts: list[_Host]) -> None:
    """Kill every host still running and wait for its thread (its worker's group and
    what it left are gone once ``run_json_worker`` returns)."""
    for h in hosts:
        if h.running:
            h.kill()
    for h in hosts:
        if h.thread is not None:
            h.thread.join()


def _watch(
    hosts: list[_Host],
    started: float,
    timeout: float,
    wake: threading.Event,
    cancel: Cancel | None,
    while_waiting: Callable[[], object] | None = None,
) -> list[dict]:
    """Wait for every host's report; raise as ``run_hosts`` says at the first failure."""
    peer_failure: tuple[_Host, float] | None = None
    run_started: float | None = None
    while True:
        wake.wait(POLL_S)
        wake.clear()
        now = time.monotonic()
        for h in hosts:
            h.read_stages(now)
        if while_waiting is not None and all(
            "initialize" in h.seen or not h.running for h in hosts
        ):
            while_waiting()
            while_waiting = None
            continue
        if cancel is not None and cancel.cancelled:
            raise RunCancelled(CANCELLED)
        if interrupted():
            raise KeyboardInterrupt
        needs = [h for h in hosts if h.report is not None and h.report.get("needs_devices")]
        if needs:
            return [h.report for h in needs]  # type: ignore[misc]
        peer_failure = _check_failures(hosts, now, peer_failure)
        if all(h.report is not None for h in hosts):
            return [h.report for h in hosts]  # type: ignore[misc]
        hung = _hung(hosts, started, now)
        if hung:
            raise HostFailed(hung)
        # Time limits: loading (where the job loads), then the run.
        loading = [h for h in hosts if h.loaded is not None and not h.loaded.exists()]
        if loading:
            if now - started > timeout:
                raise WorkerTimeout(timeout, first_stage=True)
            continue
        if run_started is None:
            run_started = now if hosts[0].loaded is not None else started
        if now - run_started > timeout:
            raise ShardscopeError(_run_timeout(hosts, timeout))


def _check_failures(
    hosts: list[_Host], now: float, peer_failure: tuple[_Host, float] | None
) -> tuple[_Host, float] | None:
    """``HostFailed`` for the first host that failed by its own fault, or for the first
    that failed for want of another once the others had ``PEER_GRACE_S`` to show their
    own (or all ended); else the first such failure and when it was seen, if any."""
    failed = [h for h in hosts if h.failed]
    own = [h for h in failed if not _for_want_of_another(h)]
    if own:
        first = min(own, key=lambda h: h.ended or now)
        raise HostFailed(_own_failure(first)) from None
    if not failed:
        return peer_failure
    if peer_failure is None:
        return (min(failed, key=lambda h: h.ended or now), now)
    if now - peer_failure[1] >= PEER_GRACE_S or all(not h.running for h in hosts):
        raise HostFailed(_blame(peer_failure[0], hosts)) from None
    return peer_failure


def _run_timeout(hosts: list[_Host], timeout: float) -> str:
    """The line for a run past its time limit, naming the host furthest behind and the
    last stage it ended."""
    behind = min((h for h in hosts if h.running), key=_progress, default=None)
    where = ""
    if behind is not None:
        stage = _last_stage(behind)
        where = f" ({behind.name} had ended {stage!r})" if stage else f" ({behind.name})"
    return f"{WorkerTimeout(timeout).message(WHAT)}{where}; allow more with --timeout"


def _progress(h: _Host) -> int:
    return len([s for s in SYNC_STAGES if s in h.seen])


def _last_stage(h: _Host) -> str | None:
    return max(h.seen, key=h.seen.get) if h.seen else None  # type: ignore[arg-type]


def _hung(hosts: list[_Host], started: float, now: float) -> str | None:
    """The line for a host that fell behind the others (``LAG_S``), or None."""
    for stage in SYNC_STAGES:
        reached = [h for h in hosts if stage in h.seen]
        if not reached or len(reached) == len(hosts):
            continue
        leader = min(reached, key=lambda h: h.seen[stage])
        at = leader.seen[stage]
        allowed = max(LAG_S, LAG_SHARE * (at - started))
        if now - at <= allowed:
            return None  # the later stages were reached later still
        for h in hosts:
            if stage not in h.seen and h.running:
                frozen = " (it is stopped: SIGSTOP)" if h.stopped() else ""
                return (
                    f"{h.name} stopped responding{frozen}: host {leader.index} reached "
                    f'"{stage}" {now - at:.0f} s ago and host {h.index} has not'
                )
    return None


def _for_want_of_another(h: _Host) -> bool:
    """Whether ``h`` failed because another host went away (its error or its log says
    so), not by its own fault."""
    text = str(h.error)
    if any(m in text for m in _PEER_MARKERS):
        return True
    if text.startswith(f"{WHAT} crashed: its worker"):
        log = h.log_text()
        return _RUNTIME_ENDED in log
    return False


def _own_failure(h: _Host) -> str:
    """The line for host ``h``, which failed by its own fault."""
    exc = h.error
    if isinstance(exc, KilledItsParent):
        return f"{h.name}: {exc}"
    if isinstance(exc, WorkerTimeout):
        return f"{h.name}: {exc.message(WHAT)}; allow more with --timeout"
    text = str(exc)
    if REFUSED in h.seen:
        return text  # bad input: every host refuses it alike
    crashed = f"{WHAT} crashed: "
    if text.startswith(crashed):
        m = _SIGNAL.search(text)
        if m and m[1] == "SIGKILL":
            return f"{h.name} was killed (SIGKILL)"
        detail = f" (last output: {m[2]})" if m and m[2] else ""
        if m:
            how = f"crashed ({m[1]}){detail}"
        else:
            s = _STATUS.search(text)
            how = f"exited with status {s[1]}" if s else text[len(crashed) :]
            if s and s[2]:
                how += f" (last output: {s[2]})"
        return (
            f"{h.name} {how}: the program or the compiler crashed; run the file with python "
            f"directly to see the full error"
        )
    return f"{h.name}: {text}"


def _blame(failed: _Host, hosts: list[_Host]) -> str:
    """The line for a run whose host ``failed`` failed for want of another: the host the
    runtime names as silent, else one that has not failed itself."""
    text = failed.log_text() + "\n" + str(failed.error)
    silent = [
        int(n) for pattern in _UNHEALTHY for m in pattern.finditer(text) for n in m[1].split()
    ]
    candidates = [h for h in hosts if h.index in silent and h is not failed]
    if not candidates:
        candidates = [h for h in hosts if not h.failed]
    if not candidates:
        return f"{failed.name}: {_short(str(failed.error))}"
    h = candidates[0]
    frozen = " (it is stopped: SIGSTOP)" if h.stopped() else ""
    return (
        f"{h.name} stopped responding{frozen}: host {failed.index} lost contact with it "
        f"({_reason(failed)})"
    )


def _reason(h: _Host) -> str:
    """What the host that lost contact saw, in a few words."""
    text = f"{h.error}\n{h.log_text()}"
    if "stopped sending heartbeats" in text or "heartbeat timeout" in text:
        return "the distributed runtime saw its heartbeats stop"
    if "Connection closed by peer" in text:
        return "its gloo connection closed"
    if "DEADLINE_EXCEEDED" in text or "timed out" in text:
        return "the distributed runtime timed out waiting for it"
    return _short(str(h.error))


def _short(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[:limit] + "..."
