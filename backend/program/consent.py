"""Which Python file running a program imports, and whether the user has allowed it.

Running a program for real (``run``, Propagation > Run on devices, the GSPMD comparison's
traced route) imports its Python file in a worker, and so runs its code. A program loaded
from its source was run by the user's own choice already. A program that came from a
session or recovery file (``Program.from_session``) names a file that whoever wrote the
session chose, so none of that is run until the user has allowed that very file, by name
(``allow``, after a prompt that names it). The allowance is kept on the loaded program
only: a session saved and opened again asks again.

A built-in example runs the example of its name from shardscope's own examples folder,
never the path a session gives for it. ``.mlir`` modules, captures and programs from
``shardscope.inspect`` have no Python file to run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import (
    EXAMPLE_PREFIX,
    EXAMPLES_DIR,
    list_examples,
    split_source,
)

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program

__all__ = [
    "NoPythonFile",
    "SourceNotAllowed",
    "allow",
    "needs_consent",
    "python_file",
    "runnable_file",
    "source_python_file",
]

_WHAT = {
    "capture": "a captured module",
    "api": "a program from shardscope.inspect",
    "mlir": "a .mlir module",
}


class NoPythonFile(ShardscopeError):
    """The program has no Python file to run (a ``.mlir`` module, a capture, the API's)."""


class SourceNotAllowed(ShardscopeError):
    """The program's Python file was named by a session file and the user has not allowed
    it to run; ``path`` is the file, for the prompt that asks."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def python_file(program: Program) -> str | None:
    """The Python file running ``program`` would import, or None if it has none. An
    example's is the built-in example of its name, whatever path the program carries."""
    if program.kind == "example":
        base, _ = split_source(program.source)
        name = base[len(EXAMPLE_PREFIX) :] if base.startswith(EXAMPLE_PREFIX) else program.name
        if name not in list_examples():
            return None
        return str(EXAMPLES_DIR / f"{name}.py")
    if program.kind == "python" and program.path and program.path.endswith(".py"):
        return str(Path(program.path).expanduser().absolute())
    return None


def source_python_file(source: str) -> str | None:
    """The Python file that loading ``source`` imports (absolute), or None for a source
    whose loading runs no code of the user's: a built-in example, a ``.mlir`` module, a
    capture file."""
    base, _ = split_source(source)
    if base.startswith(EXAMPLE_PREFIX):
        return None
    path = Path(base).expanduser()
    return str(path.absolute()) if path.suffix == ".py" else None


def needs_consent(program: Program) -> str | None:
    """The file the user must allow before ``program`` runs, or None if it may run (or has
    no file to run)."""
    path = python_file(program)
    if path is None or program.kind == "example" or not program.from_session:
        return None
    return None if program.allowed_file == path else path


def allow(program: Program, path: str) -> None:
    """The user agreed to run ``path`` for ``program`` (the file ``needs_consent`` named)."""
    if path != python_file(program):
        raise ShardscopeError(f"{path} is not the file {program.name} runs; nothing was allowed")
    program.allowed_file = path


def runnable_file(program: Program, action: str) -> str:
    """The Python file ``action`` (``run``, ``the GSPMD comparison``) may import for
    ``program``. Raises ``NoPythonFile`` for a program without one and
    ``SourceNotAllowed`` for a file a session named that the user has not allowed."""
    path = python_file(program)
    if path is None:
        if program.kind == "example":
            known = ", ".join(list_examples())
            raise NoPythonFile(
                f"{program.name}: no built-in example of that name to run; open one of: {known}"
            )
        what = _WHAT.get(program.kind, "this program")
        raise NoPythonFile(
            f"{program.name}: {action} needs a Python program (.py or example:NAME); {what} "
            f"has no function to call: run the Python file it came from"
        )
    waiting = needs_consent(program)
    if waiting is not None:
        raise SourceNotAllowed(
            f"{program.name}: {action} would run {waiting}, which a session file names; "
            f"shardscope runs it only when you allow it: use File > Run source again, or "
            f"Run on devices and answer Yes when it asks about that file",
            waiting,
        )
    return path
