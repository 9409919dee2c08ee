"""``gui``: open the main window."""

from __future__ import annotations

NAME = "gui"
HELP = "open the shardscope window (default: on example:mlp)"
LOADS_PROGRAM = True


def add_arguments(parser) -> None:
    """Options of ``gui``."""
    parser.add_argument("program", nargs="?", default="example:mlp", help="program to open")


def run(args) -> int:
    """Start Qt and run the event loop."""
    from app.gui_main import run_gui

    return run_gui(args.program)
