"""Work off the GUI thread: loading programs and propagation run in a thread pool.

``load_program`` itself runs user code in a worker process; the thread here only waits
for it and builds the graph, so the window stays responsive. Each task reports back on
the GUI thread through queued signals; a task that raises reports the one-line message.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from typing import Any, cast

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, SignalInstance

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import Program, load_program
from shardscope.backend.program.mlir import warm_up
from shardscope.backend.program.signature import signature_site
from shardscope.backend.program.snippets import read_snippets
from shardscope.backend.propagation.guard import ChildCrashed
from shardscope.backend.propagation.propagate import start_propagation
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.propagation.server import FinalDims, PropagationServer, Superseded
from shardscope.backend.session.persistence import SavedState
from shardscope.backend.session.saved_program import unpack_program
from shardscope.backend.sharding.mesh import Mesh


class _Signals(QObject):
    done = Signal(object, float)
    failed = Signal(str)


class Task(QRunnable):
    """Run ``fn()`` in the pool; emit ``done(result, seconds)`` or ``failed(message)``."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__()
        self.fn = fn
        self.signals = _Signals()
        self.setAutoDelete(False)

    def run(self) -> None:
        start = time.perf_counter()
        try:
            result = self.fn()
        except ShardscopeError as exc:
            self._report(self.signals.failed, str(exc))
            return
        except Exception as exc:  # a bug must not take the window down
            last = traceback.extract_tb(exc.__traceback__)[-1:]
            where = f" ({last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
            self._report(self.signals.failed, f"{type(exc).__name__}: {exc}{where}")
            return
        self._report(self.signals.done, result, time.perf_counter() - start)

    @staticmethod
    def _report(signal: SignalInstance, *args: object) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:
            pass  # the window that asked closed meanwhile: nobody is left to tell


class TaskRunner(QObject):
    """Starts tasks and keeps them alive until they report; counts those in flight."""

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self.pool = pool or QThreadPool.globalInstance()
        self._tasks: set[Task] = set()

    def start(
        self,
        fn: Callable[[], Any],
        on_done: Callable[[Any, float], None],
        on_error: Callable[[str], None],
    ) -> Task:
        task = Task(fn)
        self._tasks.add(task)

        def finish(*_args, task=task) -> None:
            self._tasks.discard(task)

        task.signals.done.connect(on_done)
        task.signals.failed.connect(on_error)
        task.signals.done.connect(finish)
        task.signals.failed.connect(finish)
        self.pool.start(task)
        return task

    @property
    def busy(self) -> int:
        """Tasks started and not yet reported."""
        return len(self._tasks)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the pool is idle (used on exit and in tests)."""
        return self.pool.waitForDone(msecs)


def load_task(source: str, timeout: float) -> Callable[[], Program]:
    """The function a load task runs: load and build the graph (both off the GUI thread)."""

    def run() -> Program:
        program = load_program(source, timeout=timeout, while_waiting=warm_up)
        graph = program.graph
        # the function's signature too: a saved session shows its arguments' lines
        program.def_site = signature_site(program)
        sites = [(op.source_file, op.source_line) for op in graph.ops]
        program.snippets = read_snippets([*sites, program.def_site or (None, None)])
        return program

    return run


def saved_program_task(state: SavedState, where: str) -> Callable[[], Program]:
    """The function that opens the program a saved session holds: parsed here, off the GUI
    thread; nothing of the program runs."""

    def run() -> Program:
        return unpack_program(cast(dict, state["program"]), str(state["source"]), where)

    return run


def propagate_task(
    program: Program,
    mesh: Mesh,
    specs: dict,
    *,
    server: PropagationServer | None = None,
    on_final: Callable[[FinalDims], None] | None = None,
    on_annotated: Callable[[str | None], None] | None = None,
    annotated_first: bool = False,
) -> Callable[[], PropagationResult | None]:
    """The function a propagation task runs: propagate, reporting problems as warnings.

    ``on_annotated`` gets the annotated module's text (what XLA compiles). With ``server``
    (the program's ``PropagationServer``) the run goes there, ``on_final`` gets the final
    shardings ahead of the result and ``on_annotated`` the text right after them (before
    Shardy runs with ``annotated_first``); the task returns None when a newer request
    superseded it. A server whose child crashed hands
    over to ``start_propagation``, which forks afresh and retries without origins where
    that helps.
    """

    def run() -> PropagationResult | None:
        if server is not None:
            try:
                return server.propagate(
                    mesh,
                    specs,
                    strict=False,
                    on_final=on_final,
                    on_annotated=on_annotated,
                    annotated_first=annotated_first,
                )
            except Superseded:
                return None
            except ChildCrashed:
                pass
        pending = start_propagation(
            program, mesh, specs, strict=False, keep_annotated=on_annotated is not None
        )
        if on_annotated is not None:
            on_annotated(pending.annotated_text)
        return pending.result()

    return run
