"""Subcommands of ``python main.py``.

Each module here defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``, and ``LOADS_PROGRAM = True`` when it loads a program (the
loader's worker then starts at once), and optionally ``preflight(args)``, which returns a
one-line problem (exit 2) before anything starts, or None; ``COMMANDS`` lists them in the order ``--help`` shows.
"""

from app.commands import gui, load, propagate, render, shard

COMMANDS = [gui, load, shard, propagate, render]
