"""Subcommands of ``python main.py``.

Each module here defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; ``COMMANDS`` lists them in the order ``--help`` shows them.
"""

from app.commands import gui, load, propagate, render, shard

COMMANDS = [gui, load, shard, propagate, render]
