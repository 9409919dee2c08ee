"""Loading a program into the window, off the GUI thread: a program file or example run
anew, or the program a session saved (no code runs). Nothing changes until the program
has loaded and the saved state fits it; a load that fails, or a state that does not fit,
reports where the user is looking (``MessagesView.fail``: a banner over the graph, the
Messages dock in front, the status bar) and leaves the window as it was (title, session
file, program, specs, undo history). A newer load supersedes one still running.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shardscope.app.window.file_context import FileContext, FilePart
from shardscope.app.window.recent_files import RecentMenu
from shardscope.app.window.tasks import TaskRunner, load_task, saved_program_task
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import Program


@dataclass(frozen=True)
class LoadRequest:
    """What to load: ``source`` (with a saved ``state``: its mesh, specs and view), or with
    ``from_state`` the program ``state`` holds instead of running ``source``. Once loaded
    the window belongs to ``session_file`` (None: to no session file). A state restored
    ``recovered_from`` a recovery file stays unsaved, and that file is removed once this
    window's own recovery file holds its edits; so does a session for whose program
    ``unsaved(program)`` is True."""

    source: str
    state: dict | None = None
    session_file: Path | None = None
    recovered_from: Path | None = None
    from_state: bool = False
    unsaved: Callable[[Program], bool] | None = None

    @property
    def what(self) -> str:
        """The file the user opened: the session file, else the source."""
        return str(self.session_file) if self.session_file is not None else self.source


class ProgramLoader(FilePart):
    """Loads programs in the task runner and, once one fits, gives it to the session."""

    def __init__(
        self,
        context: FileContext,
        *,
        runner: TaskRunner,
        recent: RecentMenu,
        load_timeout: float,
        update_title: Callable[[], None],
    ) -> None:
        super().__init__(context)
        self.runner = runner
        self.recent = recent
        self.load_timeout = load_timeout
        self.update_title = update_title
        self.loading: str | None = None  # the source being loaded, if any

    def load(self, request: LoadRequest) -> None:
        """Start loading ``request``; the session changes only once it has loaded."""
        self.loading = request.source
        self._announce(request)
        if request.from_state and request.state is not None:
            task = saved_program_task(request.state, request.what)
        else:
            task = load_task(request.source, self.load_timeout)
        self.runner.start(
            task,
            lambda program, seconds: self._loaded(request, program, seconds),
            lambda message: self._failed(request, message),
        )

    def _announce(self, request: LoadRequest) -> None:
        status = self.window.statusBar()
        if request.from_state:
            status.showMessage(f"opening {request.what}…")
            self.messages.add(f"opening the program saved in {request.what} (no code runs)")
        else:
            status.showMessage(f"loading {request.source}…")
            self.messages.add(f"loading {request.source}")

    def _loaded(self, request: LoadRequest, program: Program, seconds: float) -> None:
        if self.loading != request.source:
            return  # a newer load superseded this one
        self.loading = None
        if not self._fits(request, program):
            return
        self.undo.clear()
        self.session.file = request.session_file
        self.session.set_program(program, state=request.state)
        self._mark_saved_or_not(request, program)
        self.recent.add(request.what)
        self._report_loaded(request, program, seconds)
        self.window.statusBar().showMessage(f"loaded {program.name}", 4000)

    def _fits(self, request: LoadRequest, program: Program) -> bool:
        """Whether the saved state fits ``program``; if not, say so and change nothing."""
        if request.state is None:
            return True
        try:
            self.session.check_state(program, request.state)
        except ShardscopeError as exc:
            self.messages.fail(f"cannot open {request.what}: {exc}")
            self.update_title()
            return False
        return True

    def _mark_saved_or_not(self, request: LoadRequest, program: Program) -> None:
        # a recovered or changed session keeps its edits unsaved, so the recovery file
        # must hold them; a session as saved leaves nothing to recover
        if request.recovered_from is not None:
            self.undo.qstack.resetClean()
            request.recovered_from.unlink(missing_ok=True)
        elif request.unsaved is not None and request.unsaved(program):
            self.undo.qstack.resetClean()
            self.session.autosave()
        else:
            self.session.discard_recovery()

    def _report_loaded(self, request: LoadRequest, program: Program, seconds: float) -> None:
        if request.from_state:
            self.messages.add(
                f"opened {program.name} as saved in {request.what}: {len(program.graph.ops)} "
                f"ops; File > Run source again runs {request.source} to lower it anew"
            )
        else:
            self.messages.add(
                f"loaded {program.name}: {len(program.graph.ops)} ops in {seconds:.2f} s"
            )
        unknown = program.unknown_spec_names() if request.state is None else []
        if unknown:
            self.messages.add(
                f"the program's SPECS name {', '.join(map(repr, unknown))}, which it has no "
                f"argument or result of, so they were left out: use argument names such "
                f"as {', '.join(program.arg_names[:3])}, or result[i]",
                "warning",
            )

    def _failed(self, request: LoadRequest, message: str) -> None:
        if self.loading == request.source:
            self.loading = None
        self.messages.fail(message)
        self.update_title()
