"""Propagate one program again and again: the window's edits, each answered by one child.

``propagate`` parses the program, tags its ops and forks a child for every run. An edit
in the window propagates the same program with other specs, so ``PropagationServer``
forks one child per program instead: it parses and tags the module once (``parse``) and
then, for each request, annotates a copy of it (``annotated_copy``), runs Shardy
(``run_prepared``) and sends back the final shardings as soon as they are read, and the
whole result after; when asked, the annotated module's text too (what XLA compiles for the
session), right after the final shardings or before Shardy runs. A crash still only takes the child down: the caller gets
``ChildCrashed`` and the next request starts a new child.

A request that a newer one supersedes is cut short: a caller that finds a newer request
waiting gets ``Superseded`` without asking, and one whose child is already reading steps
and conflicts for it pokes the child, which abandons it at its next stage.

Wire format, both ways: an 8-byte length, then a pickle. Requests are ``(ticket, mesh,
specs, strict, origins, annotated)``; replies ``("final", dims)`` (``result.final_dims``),
then one of ``("result", PropagationResult)``, ``("error", exception)`` or
``("abandoned", None)``. A request whose ``annotated`` is ``"after"`` or ``"before"`` also
gets ``("annotated", text)`` (the annotated module with its locations): right after
``final`` (written from a fresh copy then, off the badges' way), or before Shardy runs.
A poke is a newer request's ticket (8 bytes) on a pipe of its own. The child exits when
its request pipe closes or its parent dies; it keeps no descriptor of the parent's but
its pipes and its log, so it holds nothing of the parent's open.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import pickle
import resource
import select
import signal
import struct
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.worker_job import how_it_ended, last_line
from shardscope.backend.propagation.guard import DEFAULT_TIMEOUT, ChildCrashed
from shardscope.backend.propagation.propagate import annotated_copy, parse, run_prepared
from shardscope.backend.propagation.result import PropagationResult

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.annotate import SpecLike
    from shardscope.backend.sharding.mesh import Mesh

# The final shardings a request's first reply carries: axes per dimension by value id.
FinalDims = dict[int, tuple[tuple[str, ...], ...]]

_HEADER = struct.Struct("<Q")
# How often the child checks that its parent is still there while it waits.
_PARENT_CHECK_S = 1.0


class Superseded(Exception):
    """A newer request to the same server made this one's answer moot."""


class _Abandoned(Exception):
    """Raised in the child at a stage boundary once a newer request poked it."""


class PropagationServer:
    """One program's propagation child, started on the first request; see the module
    docstring. Thread-safe: requests from several threads are answered one at a time."""

    def __init__(self, program: Program, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.program = program
        self.timeout = timeout
        self.pid: int | None = None
        self._requests = self._replies = self._pokes = -1
        self._log: Any = None
        self._busy = threading.Lock()
        self._state = threading.Lock()
        self._latest = 0
        self.served = 0  # requests answered by the current child
        self._closed = False

    # -- the caller's side ------------------------------------------------------------
    @property
    def alive(self) -> bool:
        """Whether a child is running (it may have died since it last answered)."""
        return self.pid is not None

    def propagate(
        self,
        mesh: Mesh | Mapping[str, int] | None,
        specs: Mapping[str | int, SpecLike],
        *,
        strict: bool = False,
        origins: bool = True,
        on_final: Callable[[FinalDims], None] | None = None,
        on_annotated: Callable[[str], None] | None = None,
        annotated_first: bool = False,
    ) -> PropagationResult:
        """Propagate ``specs`` on ``mesh`` as ``propagate.propagate`` does, in the child.

        ``on_final(dims)`` is called (on this thread) with the final shardings before the
        rest of the result is read; ``on_annotated(text)`` with the annotated module's
        text (``Prepared.annotated_text``) right after them, or before Shardy runs with
        ``annotated_first`` (which delays the final shardings by the writing). Raises what ``propagate`` raises for bad input,
        ``Superseded`` when a newer request came meanwhile, ``ChildCrashed`` when the
        child died (the next request starts another), ``ShardscopeError`` past the
        timeout (the child is killed).
        """
        with self._state:
            self._latest += 1
            ticket = self._latest
            if self._busy.locked() and self._pokes >= 0:
                try:
                    os.write(self._pokes, _HEADER.pack(ticket))
                except OSError:
                    pass  # the child is gone; the request in flight finds out
        with self._busy:
            if ticket != self._latest or self._closed:
                raise Superseded()
            if self.pid is None:
                self._start()
            deadline = time.monotonic() + self.timeout
            annotated = None if on_annotated is None else "before" if annotated_first else "after"
            self._send((ticket, mesh, dict(specs), strict, origins, annotated))
            while True:
                kind, value = self._receive(deadline)
                if kind == "annotated":
                    if on_annotated is not None:
                        on_annotated(value)
                    continue
                if kind == "final":
                    if on_final is not None:
                        on_final(value)
                    continue
                self.served += 1
                if kind == "result":
                    return value.with_graph(self.program.graph)
                if kind == "abandoned":
                    raise Superseded()
                raise value

    def close(self) -> None:
        """Stop the child and answer no more requests. An idle child exits when its
        request pipe closes (killed if it does not at once); one busy with a request is
        killed, and the caller waiting for it gets ``Superseded``."""
        self._closed = True
        if self._busy.acquire(blocking=False):
            try:
                self._stop(grace=1.0)
            finally:
                self._busy.release()
            return
        self._kill_child()

    def _stop(self, grace: float) -> int | None:
        """Close the pipes and reap the child; its wait status, if it was reaped."""
        with self._state:
            pid, self.pid = self.pid, None
            fds = (self._requests, self._replies, self._pokes)
            self._requests = self._replies = self._pokes = -1
            log, self._log = self._log, None
        for fd in fds:
            if fd >= 0:
                os.close(fd)
        if log is not None:
            log.close()
        return None if pid is None else _reap(pid, grace)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to tell at interpreter exit
            pass

    def _start(self) -> None:
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        pokes_r, pokes_w = os.pipe()
        log = tempfile.TemporaryFile()
        keep = (requests_r, replies_w, pokes_r, log.fileno())
        parent = os.getpid()
        with warnings.catch_warnings():
            # JAX warns on every fork once it has a backend; the child runs no JAX code.
            warnings.filterwarnings("ignore", message="os.fork", category=RuntimeWarning)
            pid = os.fork()
        if pid == 0:
            code = 1
            try:
                _close_all_but(keep)
                _serve(self.program, parent, *keep)
                code = 0
            finally:
                os._exit(code)
        for fd in (requests_r, replies_w, pokes_r):
            os.close(fd)
        self.pid, self._log = pid, log
        self._requests, self._replies, self._pokes = requests_w, replies_r, pokes_w
        self.served = 0

    def _send(self, message: object) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self._requests, _HEADER.pack(len(data)) + data)
        except OSError:
            raise self._crashed() from None

    def _receive(self, deadline: float) -> tuple[str, Any]:
        header = self._read(_HEADER.size, deadline)
        return pickle.loads(self._read(_HEADER.unpack(header)[0], deadline))

    def _read(self, n: int, deadline: float) -> bytes:
        chunks, left = [], n
        while left:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([self._replies], [], [], wait)[0]:
                self._kill()
                raise ShardscopeError(
                    f"Shardy's propagation did not finish within {self.timeout:g} s; "
                    f"try a smaller program or a smaller mesh"
                )
            chunk = os.read(self._replies, min(left, 1 << 20))
            if not chunk:
                if self._closed:
                    self._stop(grace=1.0)
                    raise Superseded()
                raise self._crashed()
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _crashed(self) -> ChildCrashed:
        """The child ended without answering: how, and the last line it wrote."""
        log, self._log = self._log, None  # kept open to read the last line
        status = self._stop(grace=5.0)
        how = "ended" if status is None else how_it_ended(status)
        last = None
        if log is not None:
            log.seek(0)
            last = last_line(log.read().decode(errors="replace"))
            log.close()
        return ChildCrashed(how, last)

    def _kill(self) -> None:
        self._kill_child()
        self._stop(grace=5.0)

    def _kill_child(self) -> None:
        """SIGKILL the child, if there is one; whoever reads its pipe reaps it."""
        pid = self.pid
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _reap(pid: int, grace: float) -> int | None:
    """``pid``'s wait status: waited for up to ``grace`` seconds, then killed."""
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            time.sleep(0.002)
        os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    except (ChildProcessError, ProcessLookupError):
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _close_all_but(keep: tuple[int, ...]) -> None:
    """Close every descriptor the fork copied except ``keep`` and the standard three."""
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    limit = limit if 0 < limit < 1 << 20 else 1 << 16
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, limit)


# -- the child's side -----------------------------------------------------------------
def _serve(
    program: Program, parent: int, requests: int, replies: int, pokes: int, log: int
) -> None:
    """Answer requests until the request pipe closes or the parent is gone."""
    # A crash is an expected way for this child to end: no Python traceback dump.
    faulthandler.disable()
    os.dup2(log, 2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    # The parent's objects are never freed here: the collector need not walk them.
    gc.freeze()
    gc.disable()
    try:
        # The fork copied the shared MLIR thread pool without its threads: work queued
        # on it would wait forever.
        parsed: Any = parse(program, threads=False)
    except Exception as exc:  # noqa: BLE001 - answered to every request
        parsed = exc
    newest = 0
    while True:
        request = _next_request(requests, parent)
        if request is None:
            return
        ticket, mesh, specs, strict, origins, annotated = request

        def checkpoint(ticket: int = ticket) -> None:
            nonlocal newest
            while select.select([pokes], [], [], 0)[0]:
                data = os.read(pokes, 1 << 12)
                for (poked,) in struct.iter_unpack("<Q", data[: len(data) // 8 * 8]):
                    newest = max(newest, poked)
            if newest > ticket:
                raise _Abandoned()

        reply: tuple[str, Any]
        try:
            if isinstance(parsed, Exception):
                raise parsed
            first = annotated == "before"
            prep = annotated_copy(parsed, mesh, specs, strict=strict, keep_annotated=first)
            if first:
                _reply(replies, ("annotated", prep.annotated_text))
                prep.annotated_text = None
            on_final = _final_replies(replies, parsed, request)
            result = run_prepared(prep, origins, on_final=on_final, checkpoint=checkpoint)
            reply = ("result", result.without_module())
        except _Abandoned:
            reply = ("abandoned", None)
        except Exception as exc:  # noqa: BLE001 - handed to the caller as it was raised
            reply = ("error", exc)
        _reply(replies, reply)
        del reply
        prep = result = None  # noqa: F841 - the copy of the module goes before the next
        gc.collect()


def _final_replies(replies: int, parsed: Any, request: tuple) -> Callable[[FinalDims], None]:
    """What the child sends once the final shardings are read: them, then, if the request
    asked for it after them, the annotated module's text, written from a fresh copy."""
    _, mesh, specs, strict, _, annotated = request

    def on_final(dims: FinalDims) -> None:
        _reply(replies, ("final", dims))
        if annotated == "after":
            again = annotated_copy(parsed, mesh, specs, strict=strict, keep_annotated=True)
            _reply(replies, ("annotated", again.annotated_text))

    return on_final


def _next_request(requests: int, parent: int) -> tuple | None:
    """The next request, or None once the pipe closed or the parent died."""
    while not select.select([requests], [], [], _PARENT_CHECK_S)[0]:
        if os.getppid() != parent:
            return None
    header = _read_exact(requests, _HEADER.size)
    if header is None:
        return None
    data = _read_exact(requests, _HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _reply(fd: int, message: tuple[str, Any]) -> None:
    try:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - an answer that does not pickle
        error = ShardscopeError(f"{type(exc).__name__}: {exc}")
        data = pickle.dumps(("error", error), protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEADER.pack(len(data)) + data)
