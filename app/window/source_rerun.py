"""File > Run source again: the program's source run anew, keeping the session's mesh,
specs and view on the program it gives. A file a session named runs only once the user
agrees (``CodeConsent``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from shardscope.app.window.code_consent import CodeConsent
from shardscope.app.window.loading import LoadRequest, ProgramLoader
from shardscope.app.window.undo import UndoBridge
from shardscope.backend.program.capture_file import split_capture_source
from shardscope.backend.program.consent import source_python_file
from shardscope.backend.program.load import Program, split_source
from shardscope.backend.session.document import Session
from shardscope.viewers.common.messages import MessagesView


def rerun_source(
    session: Session,
    undo: UndoBridge,
    messages: MessagesView,
    consent: CodeConsent,
    loader: ProgramLoader,
) -> bool:
    """Run the program's source again and keep the session's mesh, specs and view on the
    program it gives (a changed program leaves the session unsaved). False if there is
    no program or the user cancelled."""
    program = session.program
    if program is None or loader.loading is not None:
        messages.fail("nothing to run again: open a program first")
        return False
    if program.kind == "api":
        messages.error(
            f"{program.name} came from shardscope.inspect in your own Python: call "
            "inspect(...).show() there again to see changed code"
        )
        return False
    gone = _missing_source(program.source)
    if gone is not None:
        messages.fail(
            f"cannot run {program.source} again: {gone} is no longer there (moved or "
            "deleted); put it back, or open the program where it is now (File > Open "
            "program); the session is as it was"
        )
        return False
    path = source_python_file(program.source)
    if (
        program.from_session
        and path is not None
        and program.allowed_file != path
        and not consent.confirm_session_file(path, "File > Run source again")
    ):
        return False
    state = {**session.to_json(), "program": None}
    unsaved = _unsaved_check(session, messages, program, clean=undo.qstack.isClean())
    messages.add(f"running {program.source} again")
    loader.load(LoadRequest(program.source, state, session_file=session.file, unsaved=unsaved))
    return True


def _unsaved_check(
    session: Session, messages: MessagesView, program: Program, *, clean: bool
) -> Callable[[Program], bool]:
    """Whether the program the source gives anew leaves the session unsaved: it was not
    ``clean``, the program changed, or specs were dropped; each is said in Messages."""
    before = program.mlir_text
    names = {vid: program.graph.values[vid].display_name for vid in session.specs}

    def unsaved(new: Program) -> bool:
        kept = {new.graph.values[vid].display_name for vid in session.specs}
        lost = [name for name in names.values() if name not in kept]
        if lost:
            keeps = (
                f"; {session.file} keeps them until you save" if session.file is not None else ""
            )
            messages.add(
                f"the program {new.source} gives has no tensor for the specs of "
                f"{', '.join(lost)}, so they were dropped{keeps}",
                "warning",
            )
        changed = new.mlir_text != before
        if changed:
            messages.add(
                f"{new.source} gives a different program than before; save the session "
                "to keep the new one"
            )
        return not clean or changed or bool(lost)

    return unsaved


def _missing_source(source: str) -> str | None:
    """The file ``source`` loads from, if it does not exist (None: it does, or ``source``
    is a built-in example)."""
    base, _ = split_source(source)
    if base.startswith("example:"):
        return None
    if ".json#" in base:
        base = split_capture_source(base)[0]
    path = Path(base).expanduser()
    return None if path.exists() else str(path)
