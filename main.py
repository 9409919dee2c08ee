"""Run shardscope from a checkout: ``python main.py <command>`` (``make run`` installs it)."""

import sys

try:
    from shardscope.app.cli.main import run
except ModuleNotFoundError as exc:
    if exc.name not in ("shardscope", "shardscope.app"):
        raise
    sys.exit(
        "shardscope is not installed in this Python: run 'make run' once, or 'pip install -e .'"
    )

if __name__ == "__main__":
    run(sys.argv[1:])
