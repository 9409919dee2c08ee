"""``capture --hosts H``: the user's command run as H local processes that join through
JAX's distributed runtime, and how each one ended.

``capture`` runs this module's ``main`` as its worker (``run_command``, so whatever the
processes start ends with the capture): it takes a free port from the system, starts the
command H times at once, host ``k`` with

- ``JAX_COORDINATOR_ADDRESS=127.0.0.1:PORT`` (``jax.distributed.initialize`` reads it) and
  ``JAX_COORDINATOR_BIND_ADDRESS=127.0.0.1:PORT`` (so the coordinator, host 0's, listens on
  this machine only);
- ``JAX_NUM_PROCESSES=H`` and ``JAX_PROCESS_ID=k`` (jax itself reads neither: they are
  for scripts; the capture hook fills ``jax.distributed.initialize``'s arguments);
- ``SHARDSCOPE_CAPTURE_HOSTS``, ``SHARDSCOPE_CAPTURE_HOST`` and a capture folder and JAX
  dump folder of its own (``host-k/``);

relays each one's output with ``[host k]`` before each line, and once one fails (exits
other than 0, or is killed) gives the others ``GRACE`` seconds to end on their own, then
kills those left; likewise at ``--steps`` (a host stopped there) and at the time limit.
Once one host has finished its script (it exited with 0, or it left the ``exiting``
marker and waits at JAX's shutdown barrier for the others), the others have ``LAG``
seconds to finish theirs: a host that hangs meanwhile (its heartbeats going on) would hold
them there for JAX's shutdown time limit. It writes ``hosts.json``: each host's exit
status, whether it was ended here, when it ended and finished its script, and its last
lines. ``blame`` reads that with each host's ``functions.json``
(``capture_site/_shardscope_hosts``) into how the run ended, or the host at fault.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from shardscope.backend.isolation.limits import become_worker

MODULE = "shardscope.backend.program.capture_hosts"
REPORT = "hosts.json"
# Seconds the other hosts have to end on their own once one has failed: a peer's failure
# reaches them through the distributed runtime, and whose came first is told by the time.
GRACE = 1.0
# Seconds the other hosts have to finish their script once one has finished its own (the
# hosts of an SPMD program run in step, through their collectives, to the end), and to
# end once all have: a host left running past that holds the others (which wait for it at
# JAX's shutdown barrier) and is ended, named as the host that fell behind.
LAG = 20.0
# The marker a joined host leaves in its folder as its script ends
# (``capture_site/_shardscope_hosts.EXITING``; that module imports nothing of ours).
EXITING = "exiting"
# Lines of each host's output kept for its report.
_TAIL = 20
# How far a host got in ``jax.distributed``, in order (``_shardscope_hosts``).
_STAGES = ("not called", "joining", "joined", "exiting")
# What a host's output says when it failed because a peer did (each seen here with jax
# 0.10.2 on the CPU): gloo's collective with a peer gone ("Connection closed by peer"), the
# distributed service's verdict on a peer that stopped sending heartbeats (it then aborts
# the process: "Terminating process because the JAX distributed service detected fatal
# errors"), and its time limits (DEADLINE_EXCEEDED: barriers, key lookups).
_PEER = re.compile(
    r"Connection closed by peer|Connection reset by peer|DEADLINE_EXCEEDED|"
    r"stopped sending heartbeats|distributed service detected fatal errors|"
    r"Barrier timed out|timed out with key"
)
# The reasons ``_shardscope_hosts`` ends a process for, not the script's own errors.
_OWN_KINDS = ("no-initialize", "arguments")
# An absl fatal log line (``F1202 12:25:48.879871 7990 client.h:80] message``).
_FATAL = re.compile(r"^F\d{4} [^\]]*\] (.+)")


def folder_of(folder: Path, host: int) -> Path:
    """Host ``host``'s own capture folder (its ``functions.json``, ``dump/``, ``stopped``)."""
    return folder / f"host-{host}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that the system says is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def host_env(env: dict[str, str], folder: Path, host: int, hosts: int, port: int) -> dict:
    """Host ``host``'s environment: ``env`` (the capture's) with its variables set."""
    own = folder_of(folder, host)
    address = f"127.0.0.1:{port}"
    return {
        **env,
        "JAX_COORDINATOR_ADDRESS": address,
        "JAX_COORDINATOR_BIND_ADDRESS": address,
        "JAX_NUM_PROCESSES": str(hosts),
        "JAX_PROCESS_ID": str(host),
        "SHARDSCOPE_CAPTURE_HOSTS": str(hosts),
        "SHARDSCOPE_CAPTURE_HOST": str(host),
        "SHARDSCOPE_CAPTURE_DIR": str(own),
        "JAX_DUMP_IR_TO": str(own / "dump"),
    }


def command(folder: Path, hosts: int, timeout: float, argv: list[str]) -> list[str]:
    """The worker command that runs ``argv`` as ``hosts`` processes."""
    return [sys.executable, "-m", MODULE, str(folder), str(hosts), repr(timeout), "--", *argv]


def main(args: list[str]) -> int:
    """``FOLDER HOSTS TIMEOUT -- CMD ARG...``: run the hosts, write ``hosts.json``."""
    folder, hosts, timeout = Path(args[0]), int(args[1]), float(args[2])
    argv = args[4:]
    port = free_port()
    env = dict(os.environ)
    out = sys.stdout.buffer
    lock = threading.Lock()
    procs: list[subprocess.Popen] = []
    for host in range(hosts):
        folder_of(folder, host).mkdir(parents=True, exist_ok=True)
        try:
            procs.append(
                subprocess.Popen(
                    argv,
                    env=host_env(env, folder, host, hosts, port),
                    stdin=subprocess.DEVNULL,
                    # Apart, each read line by line: a process's stdout and stderr share no
                    # pipe, so a line one writes never breaks into a line of the other.
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    preexec_fn=functools.partial(become_worker, os.getpid(), None),
                )
            )
        except OSError as exc:
            print(f"cannot run {argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
            for proc in procs:
                proc.kill()
            return 127
    tails = [collections.deque(maxlen=_TAIL) for _ in procs]
    # Its stderr's own last lines: what it said of its end (its stdout is often buffered
    # and flushed at exit, after what it wrote to stderr).
    errs = [collections.deque(maxlen=_TAIL) for _ in procs]
    readers = [
        threading.Thread(target=_relay, args=(stream, k, mine, out, lock), daemon=True)
        for k, p in enumerate(procs)
        for stream, mine in ((p.stdout, (tails[k],)), (p.stderr, (tails[k], errs[k])))
    ]
    for reader in readers:
        reader.start()
    ends = _wait(procs, folder, timeout)
    for reader in readers:
        reader.join(timeout=1.0)
    report = {
        "timed_out": ends.pop("timed_out"),
        "lagged": ends.pop("lagged"),
        "hosts": [
            {**ends[k], "tail": list(tails[k]), "stderr": list(errs[k])} for k in range(hosts)
        ],
    }
    part = folder / (REPORT + ".part")
    part.write_text(json.dumps(report))
    os.replace(part, folder / REPORT)
    return 0


def _relay(stream, host: int, tails: tuple, out, lock: threading.Lock) -> None:
    prefix = f"[host {host}] ".encode()
    for line in iter(stream.readline, b""):
        text = line.decode("utf-8", "replace").rstrip()
        for tail in tails:
            tail.append(text)
        with lock:
            out.write(prefix + line if line.endswith(b"\n") else prefix + line + b"\n")
            out.flush()


def _wait(procs: list[subprocess.Popen], folder: Path, timeout: float) -> dict:
    """Wait for the hosts; end the rest once one failed (after ``GRACE``), one stopped at
    ``--steps``, ``LAG`` seconds after one finished while others have not, or at
    ``timeout``. Each host's end: its status (None: ended here), when, and when it finished
    its script (``done``)."""
    start = time.monotonic()
    ends: dict = {}
    done: dict[int, float] = {}
    failed_at = None
    why = None
    while len(ends) < len(procs):
        now = time.monotonic() - start
        for k, proc in enumerate(procs):
            if k in ends or (code := proc.poll()) is None:
                if k not in done and (folder_of(folder, k) / EXITING).exists():
                    done[k] = now
                continue
            ends[k] = {"host": k, "status": code, "killed": False, "at": now}
            done.setdefault(k, now)
            stopped = (folder_of(folder, k) / "stopped").exists()
            if (code != 0 or stopped) and failed_at is None:
                failed_at = now if code != 0 else now - GRACE
        if len(ends) == len(procs):
            break
        why = _why_stop(now, failed_at, done, len(procs), timeout)
        if why is not None:
            break
        time.sleep(0.02)
    for k, proc in enumerate(procs):
        if k not in ends:
            with _suppressed():
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            ends[k] = {"host": k, "status": None, "killed": True, "at": None}
    for k, at in done.items():
        ends[k]["done"] = at
    ends["timed_out"] = why == "timeout"
    ends["lagged"] = why == "lag"
    return ends


def _why_stop(
    now: float, failed_at: float | None, done: dict[int, float], hosts: int, timeout: float
) -> str | None:
    """Why the hosts still running are to be ended now (``failed``, ``lag``, ``timeout``),
    or None. A host that finished its script (exited with 0, or waits at JAX's shutdown
    for its peers) starts the clock: the others have ``LAG`` seconds to finish theirs,
    and, once all have, ``LAG`` more to end."""
    if failed_at is not None and now - failed_at >= GRACE:
        return "failed"
    if done:
        since = max(done.values()) if len(done) == hosts else min(done.values())
        if now - since >= LAG:
            return "lag"
    if now >= timeout:
        return "timeout"
    return None


class _suppressed:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb) -> bool:
        return kind is not None and issubclass(kind, ProcessLookupError)


@dataclass
class HostEnd:
    """How one host of a multi-host capture ended, with how far it got."""

    host: int
    status: int | None  # its exit code (negative: the signal); None: ended by the capture
    at: float | None  # seconds after the start it ended by itself
    tail: list[str] = field(default_factory=list)  # its last lines, stdout and stderr
    state: dict = field(default_factory=dict)  # its functions.json, the functions aside
    calls: int = 0  # runs of its jitted functions
    done: float | None = None  # seconds after the start it finished its script
    stderr: list[str] = field(default_factory=list)  # its stderr's last lines

    @property
    def error(self) -> dict:
        error = self.state.get("error")
        return error if isinstance(error, dict) else {}

    @property
    def stage(self) -> int:
        """How far it got in ``jax.distributed`` (an index of ``_STAGES``)."""
        stage = self.state.get("distributed")
        return _STAGES.index(stage) if stage in _STAGES else 0

    def reason(self) -> str:
        """Why it failed, on one line."""
        error = self.error
        if error.get("kind") == "raised":
            return f"host {self.host} raised {_flat(error.get('reason', ''))}"
        if error.get("reason"):
            return f"host {self.host}: {_flat(error['reason'])}"
        if self.status is not None and self.status < 0:
            try:
                how = f"was killed by {signal.Signals(-self.status).name}"
            except ValueError:
                how = f"was killed by signal {-self.status}"
        else:
            how = f"exited with status {self.status}"
        last = None
        if self.status != -signal.SIGKILL:
            last = _last_words(self.stderr) or _last_words(self.tail)
        return f"host {self.host} {how}" + (f" ({_flat(last)})" if last else "")

    def caused_by_a_peer(self) -> bool:
        """Whether its failure reads as a peer's: a lost peer, a distributed time limit
        (not when it was killed by SIGKILL, which no peer sends)."""
        if self.status in (0, None, -signal.SIGKILL):
            return False
        if self.error.get("kind") in _OWN_KINDS:
            return False
        text = "\n".join([self.error.get("reason") or "", *self.tail])
        return _PEER.search(text) is not None


def _last_words(tail: list[str]) -> str | None:
    """What a host's output last said: the message of an absl fatal line (XLA's check
    failures), else its last line that is neither part of a native stack trace nor gloo's
    notice of its connections (``[Gloo] Rank 1 is connected to 1 peer ranks. ...``,
    printed here with jax 0.10.2 on the CPU as a process ends)."""
    for line in reversed(tail):
        if m := _FATAL.match(line.strip()):
            return m.group(1)
    for line in reversed(tail):
        text = line.strip()
        if text and not text.startswith(("@", "***", "RPC:", "[Gloo]")):
            return text
    return None


def _flat(text: str) -> str:
    return " ".join(str(text).split())[:400]


def read_ends(folder: Path, hosts: int) -> tuple[list[HostEnd], bool, bool] | None:
    """Each host's end from ``hosts.json`` and its ``functions.json``, whether the hosts
    ran out of time, and whether those left were ended for falling behind (``LAG``);
    None where the report is missing (the worker was killed)."""
    from shardscope.backend.program.capture_file import left_json

    report = left_json(folder / REPORT, "the capture's record of its hosts")
    if not isinstance(report, dict):
        return None
    ends = []
    for k, entry in enumerate(report.get("hosts", [])[:hosts]):
        entry = entry if isinstance(entry, dict) else {}
        state = left_json(folder_of(folder, k) / "functions.json", f"host {k}'s record")
        state = state if isinstance(state, dict) else {}
        functions = state.pop("functions", None)
        functions = functions if isinstance(functions, list) else []
        calls = sum(
            f["calls"] for f in functions if isinstance(f, dict) and type(f.get("calls")) is int
        )
        tail = entry.get("tail") or []
        end = HostEnd(k, entry.get("status"), entry.get("at"), tail, state, calls)
        end.done = entry.get("done")
        end.stderr = entry.get("stderr") or []
        ends.append(end)
    return ends, bool(report.get("timed_out")), bool(report.get("lagged"))


def blame(
    ends: list[HostEnd], timed_out: bool, timeout: float, stopped: bool, lagged: bool = False
) -> tuple[str, str | None]:
    """How a multi-host run ended (``finished``, ``stopped after --steps``, ...) and, where
    a host is at fault, why, on one line (None otherwise).

    The first host that failed by itself is at fault; a failure that reads as a peer's
    (``HostEnd.caused_by_a_peer``) blames the host that was furthest behind among those
    still running; hosts ended for falling behind (``lagged``) blame the one furthest
    behind; at the time limit, hosts out of step blame the one behind, and hosts in step
    stopped as one script would."""
    failed = sorted(
        (e for e in ends if e.status not in (0, None)), key=lambda e: (e.at or 0.0, e.host)
    )
    own = [e for e in failed if not e.caused_by_a_peer()]
    if own:
        first = own[0]
        reasons = {e.error.get("reason") for e in ends}
        if first.error.get("kind") in _OWN_KINDS and len(reasons) == 1:
            return "failed", f"{_flat(first.error['reason'])} (every host)"
        return "failed", first.reason()
    if stopped:
        return "stopped after --steps", None
    running = [e for e in ends if e.status is None]
    if failed:
        said = _last_words([*failed[0].tail, failed[0].error.get("reason") or ""])
        why = f" ({_flat(said)[:200]})" if said else ""
        if running:
            behind = min(running, key=_progress)
            return "failed", (
                f"host {behind.host} stopped responding: host {failed[0].host} failed "
                f"waiting for it{why}"
            )
        return "failed", failed[0].reason()
    if lagged:
        return "failed", _lag(ends)
    if timed_out:
        if len({_progress(e) for e in ends}) > 1:
            behind = min(ends, key=_progress)
            ahead = max(ends, key=_progress)
            return "failed", (
                f"host {behind.host} fell behind: after {timeout:g} s (--timeout) it "
                f"{_where(behind)}, while host {ahead.host} {_where(ahead)}"
            )
        return f"stopped after {timeout:g} s (--timeout)", None
    return "finished", None


def _lag(ends: list[HostEnd]) -> str:
    """Why hosts ended for falling behind (``LAG``) are at fault, on one line."""
    first = min((e for e in ends if e.done is not None), key=lambda e: (e.done, e.host))
    behind = [e for e in ends if e.status is None and e.done is None]
    if behind:
        late = min(behind, key=_progress)
        if first.stage == 0 < max(e.stage for e in behind):
            return (
                f"host {first.host} ended its script without joining the others (it "
                f"{_where(first)}), while host {late.host} {_where(late)}"
            )
        if first.calls < max(e.calls for e in behind):
            # hosts in step make as many runs: the one that made fewer left the others
            ahead = max(behind, key=lambda e: e.calls)
            return (
                f"host {first.host} ended its script early: it {_where(first)}, while host "
                f"{ahead.host} {_where(ahead)} and was still running {LAG:g} s later"
            )
        return (
            f"host {late.host} fell behind: it was still running {LAG:g} s after host "
            f"{first.host} finished its script (host {late.host} {_where(late)}, while host "
            f"{first.host} {_where(first)})"
        )
    stuck = next(e for e in ends if e.status is None)
    return (
        f"host {stuck.host} did not end within {LAG:g} s of every host finishing its script "
        f"(it waited at JAX's shutdown)"
    )


def _progress(end: HostEnd) -> tuple[int, int]:
    return end.stage, end.calls


def _where(end: HostEnd) -> str:
    stage = _STAGES[end.stage]
    if stage == "not called":
        return "had not called jax.distributed.initialize()"
    if stage == "joining":
        return "was waiting in jax.distributed.initialize() for the others"
    runs = f"{end.calls} run{'s' if end.calls != 1 else ''} of its jitted functions"
    return f"had made {runs}" + (" and was exiting" if stage == "exiting" else "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
