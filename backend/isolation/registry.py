"""Which workers run now, and in which cancel group: ``WorkerRegistry``.

A job registers its worker's process group in a ``CancelGroup`` while it waits on it
(``CancelGroup.running``). Cancelling a group kills that group's workers, with what they
started, and refuses new jobs in it; the workers of other groups run on. ``cancel_all``
kills every worker (a window that closes), ``interrupt`` does so and refuses every new
job (Ctrl+C at the command line).

The process has one registry, ``REGISTRY``; a job started without a group of its own runs
in its ``default`` group. ``cancel_workers``, ``interrupt``, ``interrupted`` and
``refuse_if_interrupted`` act on it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.descendants import end_group
from shardscope.backend.isolation.relay import kill_group, kill_marked


class GroupCancelled(ShardscopeError):
    """A job's cancel group was cancelled: its worker was killed, or never started."""


@dataclass
class RunningWorker:
    """One worker while its job waits on it: its process group, whether that group's
    leader is the worker's relay (``relay.split_off_worker``), the ``descendants`` marker
    of what it started, and whether a cancel killed it (its relay's death is then not its
    program's doing)."""

    pid: int
    relayed: bool
    marker: str | None
    group: CancelGroup
    killed: bool = False

    def kill(self) -> None:
        """Kill the worker's process group (its relay last, if relayed: the relay ends
        what the worker left and exits) and the processes its marker marks."""
        if not (self.relayed and end_group(self.pid, spare=self.pid)):
            kill_group(self.pid)
        if self.marker is not None:
            kill_marked(self.marker)


class CancelGroup:
    """Workers cancelled together: one batch of compiles, one run. Made by
    ``WorkerRegistry.group``."""

    def __init__(self, registry: WorkerRegistry, name: str) -> None:
        self.registry = registry
        self.name = name
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel`` was called."""
        return self._cancelled

    def cancel(self) -> None:
        """Kill this group's workers now, with what they started, and start no more jobs
        in it (``GroupCancelled``). Other groups' workers run on."""
        with self.registry.lock:
            self._cancelled = True
            doomed = self.registry.mark_killed(lambda worker: worker.group is self)
        for worker in doomed:
            worker.kill()

    def check(self) -> None:
        """``GroupCancelled`` once this group was cancelled."""
        if self._cancelled:
            raise GroupCancelled(f"the jobs of {self.name} were cancelled")

    def refuse_if_cancelled(self) -> None:
        """``KeyboardInterrupt`` after ``interrupt``, ``GroupCancelled`` once this group was
        cancelled: no new job starts."""
        self.registry.refuse_if_interrupted()
        self.check()

    @contextlib.contextmanager
    def running(
        self, pid: int, marker: str | None = None, *, relayed: bool = False
    ) -> Iterator[RunningWorker]:
        """While the block runs, a cancel of this group (or of all) kills process group
        ``pid`` (at once, if one came first) and the processes ``marker`` marks
        (``descendants``); with ``relayed`` the group's leader is the worker's relay, left
        to end what the worker left before it exits. Yields the worker, whose ``killed``
        says whether a cancel killed it."""
        worker = RunningWorker(pid, relayed, marker, self)
        with self.registry.lock:
            self.registry.workers[pid] = worker
            worker.killed = self._cancelled or self.registry.interrupted()
        if worker.killed:
            worker.kill()
        try:
            yield worker
        finally:
            with self.registry.lock:
                self.registry.workers.pop(pid, None)


class WorkerRegistry:
    """The workers this process is running now, each in a cancel group."""

    def __init__(self) -> None:
        # Reentrant: ``cancel_all`` runs in a signal handler too (Ctrl+C), perhaps while
        # the interrupted code of the same thread holds it.
        self.lock = threading.RLock()
        self.workers: dict[int, RunningWorker] = {}
        self._interrupted = threading.Event()
        self.default = CancelGroup(self, "this process")

    def group(self, name: str) -> CancelGroup:
        """A new cancel group; ``name`` says whose jobs it holds in messages (``the
        window's compiles``)."""
        return CancelGroup(self, name)

    def mark_killed(self, doomed: Callable[[RunningWorker], bool]) -> list[RunningWorker]:
        """The running workers for which the predicate ``doomed`` holds, each marked killed
        (call with ``lock`` held, then kill them)."""
        chosen = [w for w in self.workers.values() if doomed(w)]
        for worker in chosen:
            worker.killed = True
        return chosen

    def cancel_all(self) -> None:
        """Kill every worker of every group now, with what it started. New jobs may still
        start (a window that closes waits on none)."""
        with self.lock:
            doomed = self.mark_killed(lambda worker: True)
        for worker in doomed:
            worker.kill()

    def interrupt(self) -> None:
        """Kill every worker now and start no more: each job waiting returns at once, and
        a later one raises ``KeyboardInterrupt``."""
        self._interrupted.set()
        self.cancel_all()

    def interrupted(self) -> bool:
        """Whether ``interrupt`` was called."""
        return self._interrupted.is_set()

    def refuse_if_interrupted(self) -> None:
        """``KeyboardInterrupt`` once ``interrupt`` was called: no new worker starts."""
        if self._interrupted.is_set():
            raise KeyboardInterrupt


# The process's registry: its state lives in the object, never at module level.
REGISTRY = WorkerRegistry()


def interrupt() -> None:
    """Stop every worker now and start no more (Ctrl+C at the command line): each
    ``run_worker`` waiting returns at once, and a later one raises ``KeyboardInterrupt``."""
    REGISTRY.interrupt()


def interrupted() -> bool:
    """Whether ``interrupt`` was called."""
    return REGISTRY.interrupted()


def refuse_if_interrupted() -> None:
    """``KeyboardInterrupt`` once ``interrupt`` was called: no new worker starts."""
    REGISTRY.refuse_if_interrupted()


def cancel_workers() -> None:
    """Kill every worker this process is running now, in every group, with what it
    started.

    For shutting down: a window closed during a hung load must not wait out the load's
    time limit. Each ``run_worker`` waiting on one returns its (negative) exit code at once.
    """
    REGISTRY.cancel_all()
