"""``capture``: run an unmodified script and keep the functions it compiles with jax.jit."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Protocol

from shardscope.app.cli.options import host_count, timeout_seconds
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import check_target, shown_path, write_atomic
from shardscope.backend.program.capture import (
    DEFAULT_DEVICES,
    DEFAULT_TIMEOUT,
    MAX_DEVICES,
    capture_script,
)
from shardscope.backend.program.capture_file import Capture, capture_source, name_in_source

NAME = "capture"
HELP = (
    "run a script with fake CPU devices and save every function it compiles with jax.jit, "
    "or every graph a torch_xla script's syncs compile (capture [options] -- python train.py ARGS)"
)


class CaptureArgs(Protocol):
    """What ``capture`` reads of its parsed options."""

    command: list[str]
    devices: int
    hosts: int
    out: str | None
    steps: int | None
    timeout: float
    open: bool
    json: bool


def _count(flag: str, low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = int(text) if text.isascii() else None
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number from {low} to {high}: give e.g. {flag} {low * 8}"
            )
        return value

    return parse


def add_arguments(parser) -> None:
    """Options of ``capture``."""
    parser.add_argument(
        "--devices",
        type=_count("--devices", 1, MAX_DEVICES),
        default=DEFAULT_DEVICES,
        help=f"fake CPU devices the script sees (default {DEFAULT_DEVICES})",
    )
    parser.add_argument(
        "--hosts",
        type=host_count,
        default=1,
        metavar="H",
        help="run the command as H local processes of --devices/H fake CPU devices each, "
        "joined through JAX's distributed runtime, and keep process 0's functions. Each "
        "process gets JAX_COORDINATOR_ADDRESS=127.0.0.1:PORT (read by "
        "jax.distributed.initialize; the port is a free one), JAX_NUM_PROCESSES=H and "
        "JAX_PROCESS_ID=K (jax does not read these two; scripts may). The script must call "
        "jax.distributed.initialize() before its first use of devices; the arguments it "
        "leaves out are filled in. One process that fails or falls behind ends the capture, "
        "naming it (default 1)",
    )
    parser.add_argument(
        "--out", help="the capture file to write (default: capture-SCRIPT.json, printed)"
    )
    parser.add_argument(
        "--steps",
        type=_count("--steps", 1, 10**9),
        help="stop the script once a jitted function is about to run this many times more "
        "(a torch_xla script: once it has synced this many times)",
    )
    parser.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=DEFAULT_TIMEOUT,
        help=f"seconds the script may run before it is stopped (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument("--open", action="store_true", help="open the capture in the window")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, help="the command that runs the script, after --"
    )


def default_out(command: list[str]) -> Path:
    """``capture-train.json`` for ``python train.py``: named after the first ``.py``
    argument (else the command), in the current folder, numbered if it exists."""
    script = next((Path(a).stem for a in command if a.endswith(".py")), Path(command[0]).name)
    stem = "capture-" + (re.sub(r"[^\w.-]+", "_", script) or "script")
    path = Path(f"{stem}.json")
    n = 2
    while path.exists():
        path = Path(f"{stem}-{n}.json")
        n += 1
    return path


def summary(capture: Capture, out: Path) -> dict:
    """What ``capture --json`` prints: the file and each function, without its module text."""
    return {
        "out": str(out),
        "command": capture.command,
        "devices": capture.devices,
        "hosts": capture.hosts,
        "ended": capture.ended,
        "framework": capture.framework,
        "warnings": capture.warnings,
        "functions": [
            {k: v for k, v in vars(f).items() if k not in ("mlir", "compiled_hlo")}
            for f in capture.functions
        ],
        "skipped": capture.skipped,
    }


def run(args: CaptureArgs) -> int:
    """Run the script, write the capture file, list what it holds."""
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise ShardscopeError(
            "no command to capture: give it after --, as in "
            "`python main.py capture -- python train.py`"
        )
    out = Path(args.out) if args.out else default_out(command)
    if out.suffix != ".json":
        raise ShardscopeError(
            f"--out {shown_path(out)}: a capture file ends in .json; give e.g. --out capture.json"
        )
    fix = "give a file name ending in .json as --out"
    # Before the script runs: a FIFO, device or folder there is left as it is.
    check_target(out, fix)
    capture = capture_script(
        command, devices=args.devices, steps=args.steps, timeout=args.timeout, hosts=args.hosts
    )
    data = json.dumps(capture.to_json(), indent=1).encode()
    write_atomic(out, lambda f: f.write(data), fix)
    for warning in capture.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary(capture, out), indent=1))
    else:
        _print(capture, out)
    if args.open:
        from shardscope.app.window.launch import run_gui

        sys.stdout.flush()
        return run_gui(str(out))
    return 0


def _print(capture: Capture, out: Path) -> None:
    import shlex

    n = len(capture.functions)
    on = f" on {capture.hosts} hosts ({capture.devices // capture.hosts} devices each)"
    print(
        f"captured {n} function{'s' if n != 1 else ''} from `{' '.join(capture.command)}`"
        f"{on if capture.hosts > 1 else ''} ({capture.ended}) into {out}:"
    )
    names = [name_in_source(f.name) for f in capture.functions]
    width = max(map(len, names))
    for f, name in zip(capture.functions, names, strict=True):
        calls = "? calls" if f.calls is None else f"{f.calls} call{'s' if f.calls != 1 else ''}"
        mesh = ", ".join(f"{k}={v}" for k, v in (f.mesh or {}).items()) or "none"
        where = f"{os.path.basename(f.file)}:{f.line}" if f.file else ""
        print(f"  {name:<{width}}  {f.ops:>6} ops  {calls:<9}  mesh {mesh:<20} {where}")
    if capture.skipped:
        total = sum(capture.skipped.values())
        outside = (
            "graphs torch_xla compiled outside a sync (a tensor's .item() or print)"
            if capture.framework == "torch_xla"
            else "operations outside the script's jitted functions"
        )
        print(f"skipped {total} compile(s) of {outside}")
    largest = capture_source(out, capture.pick(None, str(out)).name)
    print(
        f"open one: python main.py propagate {shlex.quote(largest)}  "
        f"(or gui {shlex.quote(str(out))} to choose)"
    )
