"""Options shared by the commands that load a program and take a mesh and specs."""

from __future__ import annotations

from shardscope.backend.errors import SpecError
from shardscope.backend.program.load import DEFAULT_TIMEOUT
from shardscope.backend.sharding.spec import Spec, parse_spec

SPEC_HELP = (
    "shard a value: NAME is an argument (x, params['w1']), result[i] or a value id; SPEC is "
    "dims separated by commas (_ replicated, data+model a tuple, trailing ? open, @pN "
    "priority). Replaces the program's SPECS; repeat for several values"
)


def add_program_options(
    parser, *, timeout_help: str = "seconds allowed to load the program"
) -> None:
    """``PROGRAM``, ``--mesh``, ``--spec NAME=SPEC`` (repeatable) and ``--timeout``."""
    parser.add_argument("program", help="a .py file, a .mlir file or example:NAME")
    parser.add_argument(
        "--mesh", help="mesh axes, e.g. data=4,model=2 (default: the program's MESH)"
    )
    parser.add_argument("--spec", action="append", default=[], metavar="NAME=SPEC", help=SPEC_HELP)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help=timeout_help)


def parse_spec_args(items: list[str]) -> dict[str, Spec]:
    """``["x=data,_", ...]`` -> ``{"x": Spec}``; a malformed item raises ``SpecError``."""
    out: dict[str, Spec] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise SpecError(f'--spec {item!r} is not NAME=SPEC; write e.g. --spec "x=data,_"')
        out[name.strip()] = parse_spec(text)
    return out
