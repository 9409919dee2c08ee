"""``gui``: open the main window."""

from __future__ import annotations

from typing import Protocol

from shardscope.app.cli.options import program_path

NAME = "gui"
HELP = "open the shardscope window (default: on example:mlp)"
LOADS_PROGRAM = True


class GuiArgs(Protocol):
    """What ``gui`` reads of its parsed options."""

    program: str


def add_arguments(parser) -> None:
    """Options of ``gui``."""
    parser.add_argument(
        "program", nargs="?", default="example:mlp", type=program_path, help="program to open"
    )


def preflight(args: GuiArgs) -> str | None:
    """Why no window can open here, checked before anything starts loading."""
    # Imported here, like Qt below: the parser imports every command module.
    from shardscope.app.window.display import display_problem

    return display_problem()


def run(args: GuiArgs) -> int:
    """Start Qt and run the event loop."""
    # Qt is imported only by the command that opens a window.
    from shardscope.app.window.launch import run_gui

    return run_gui(args.program)
