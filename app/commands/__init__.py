"""Subcommands of ``python main.py``.

Each module here defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``, and ``LOADS_PROGRAM = True`` when it loads a program (the
loader's worker then starts at once); ``COMMANDS`` lists them in the order ``--help`` shows.
"""

from app.commands import gui, load, propagate, render, shard

COMMANDS = [gui, load, shard, propagate, render]
