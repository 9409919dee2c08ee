"""Entry point: ``python main.py <command> [options]``."""

from __future__ import annotations

import argparse
import errno
import gc
import os
import signal
import sys
import threading

from shardscope.app.cli import capture, gui, load, propagate, render, run, shard
from shardscope.backend.errors import ShardscopeError, shortened, shortened_words

# The subcommands, in the order --help lists them. Each module defines NAME, HELP,
# add_arguments(parser) and run(args) -> int; LOADS_PROGRAM = True when it loads a program
# (the loader's worker then starts at once); optionally preflight(args), which returns a
# one-line problem (exit 2) before anything starts, or None.
COMMANDS = [gui, load, shard, propagate, run, render, capture]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other error of ours."""

    def error(self, message: str):
        self.exit(2, shortened_words(f"error: {self.prog}: {message} (see {self.prog} --help)\n"))


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per command."""
    parser = _Parser(
        prog="python main.py",
        description="shardscope: see how JAX/XLA shards your program, step by step.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(command.NAME, help=command.HELP, description=command.HELP)
        command.add_arguments(p)
        p.set_defaults(
            _run=command.run,
            _loads=getattr(command, "LOADS_PROGRAM", False),
            _preflight=getattr(command, "preflight", None),
        )
    return parser


# What a command stopped by Ctrl+C (SIGINT) says, and its exit code.
INTERRUPTED = "error: interrupted (Ctrl+C): stopped, with every process it started"
INTERRUPTED_CODE = 130
# Seconds the command has to wind up after Ctrl+C (its workers are gone by then) before
# it ends at once.
UNWIND_S = 1.0


def _end_now(*_args) -> None:
    """End this process at once: kill its workers and the fork server, say so."""
    from shardscope.backend.isolation.forkserver import shared_server
    from shardscope.backend.isolation.registry import cancel_workers

    cancel_workers()
    shared_server().kill()
    try:
        print(INTERRUPTED, file=sys.stderr, flush=True)
    finally:
        os._exit(INTERRUPTED_CODE)


def _on_interrupt(_signum, _frame) -> None:
    """Ctrl+C: kill every worker and start no more (``registry.interrupt``), so that what
    waits on one returns and the command winds up; one still busy after ``UNWIND_S``
    (its own work in this process), or a second Ctrl+C, ends at once. No exception is
    raised here: a library may swallow one (an import, a garbage collector's callback)."""
    from shardscope.backend.isolation.registry import interrupt, interrupted

    if interrupted():
        _end_now()
    interrupt()
    signal.signal(signal.SIGALRM, _end_now)
    signal.setitimer(signal.ITIMER_REAL, UNWIND_S)


def _interrupted() -> bool:
    from shardscope.backend.isolation.registry import interrupted

    return interrupted()


def main(argv: list[str] | None = None) -> int:
    """Run one command; with no command, open the GUI on a built-in example."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # shardscope allocates in bursts of ~100k small objects (graphs, timelines, JSON) that
    # live on; with CPython's default threshold of 700 the collector rescans them dozens of
    # times per burst, which cost more than building them.
    gc.set_threshold(50_000, 20, 20)
    parser = build_parser()
    args = parser.parse_args(argv or ["gui"])
    if args.command == "gui" or threading.current_thread() is not threading.main_thread():
        return _main(args)
    previous = signal.signal(signal.SIGINT, _on_interrupt)
    try:
        code = _main(args)
    except BaseException:
        if not _interrupted():
            raise
        code = INTERRUPTED_CODE
    finally:
        signal.signal(signal.SIGINT, previous)
    if _interrupted():
        signal.setitimer(signal.ITIMER_REAL, 0)
        print(INTERRUPTED, file=sys.stderr)
        return INTERRUPTED_CODE
    return code


def _main(args: argparse.Namespace) -> int:
    if args._preflight is not None:
        problem = args._preflight(args)
        if problem:
            print(problem, file=sys.stderr)
            return 2
    args.while_loading = None
    if args._loads:
        # The loader's worker imports jax while this process does the same: on two or
        # more cores the first load no longer waits for a cold interpreter.
        from shardscope.backend.isolation.forkserver import warm_up

        warm_up()
        # While the worker lowers the program this process would sit idle, then import jax
        # and register MLIR's dialects and passes for its first context: the load does that
        # while it waits. (Not in a thread: two threads importing numpy or jaxlib at once
        # can each see the other's half-initialised module.)
        from shardscope.backend.program.mlir import warm_up as warm_up_mlir

        args.while_loading = warm_up_mlir
    try:
        return int(args._run(args) or 0)
    except ShardscopeError as exc:
        if _interrupted():
            return INTERRUPTED_CODE  # the interrupt's own line says what ended
        print(shortened_words(f"error: {exc}"), file=sys.stderr)
        return 1
    except OSError as exc:
        # Every path option meets this, whichever module declares it (PROGRAM, --out).
        if exc.errno != errno.ENAMETOOLONG:
            raise
        name = str(exc.filename or "")
        print(
            f"error: the path {shortened(name)} is longer than this system opens: move or rename the file",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        return INTERRUPTED_CODE


def run(argv: list[str]) -> None:
    """``python main.py``: run ``main`` and exit with its code.

    Headless commands leave a large heap behind (a propagated transformer's graph,
    timeline and MLIR contexts); tearing it down object by object takes longer than some
    commands and achieves nothing at exit, so they end with ``os._exit`` once their
    output is flushed. The GUI exits normally: Qt and QSettings finish their work in
    destructors.
    """
    code = main(argv)
    if not argv or argv[0] == "gui":
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (``| head``): nothing left to say
        pass
    os._exit(code)
