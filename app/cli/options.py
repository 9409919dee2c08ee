"""Options shared by the commands that load a program and take a mesh and specs."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from typing import Protocol

from shardscope.backend.errors import MeshError, SpecError, shortened
from shardscope.backend.isolation.limits import MAX_TIMEOUT
from shardscope.backend.program.load import DEFAULT_TIMEOUT
from shardscope.backend.sharding.mesh import Mesh, parse_ints, parse_mesh
from shardscope.backend.sharding.spec import Spec, parse_spec

SPEC_HELP = (
    "shard a value: NAME is an argument (x, params['w1']), result[i] or a value id; SPEC is "
    "dims separated by commas (_ replicated, data+model a tuple, trailing ? open, @pN "
    "priority). Replaces the program's SPECS; repeat for several values"
)


def positive_number(text: str) -> float:
    """argparse type: a finite number > 0 (``--scale``, ``--timeout``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number: give e.g. 1.5") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number > 0: give e.g. 1.5")
    return value


def timeout_seconds(text: str) -> float:
    """argparse type for ``--timeout``: seconds, > 0 and at most ``MAX_TIMEOUT``."""
    try:
        value = positive_number(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{shortened(text)} is not a number of seconds > 0: give e.g. --timeout 300"
        ) from None
    if value > MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"{text} s is over a week: give at most --timeout {MAX_TIMEOUT:g}"
        )
    return value


def program_path(text: str) -> str:
    """argparse type for ``PROGRAM``: a name the system can open (checked for length)."""
    if text.startswith("example:"):
        return text
    path_max = _limit("PC_PATH_MAX", 4096)
    name_max = _limit("PC_NAME_MAX", 255)
    longest = max((len(os.fsencode(p)) for p in text.split(os.sep)), default=0)
    if len(os.fsencode(text)) >= path_max or longest > name_max:
        raise argparse.ArgumentTypeError(
            f"the path ({len(text)} characters) is longer than this system opens "
            f"({path_max - 1} in all, {name_max} per name): move or rename the file"
        )
    return text


class MeshArgs(Protocol):
    """``--mesh`` and ``--device-order``, as parsed."""

    mesh: str | None
    device_order: str | None


class ProgramArgs(MeshArgs, Protocol):
    """What ``add_program_options`` adds, and what ``main`` calls while a program loads."""

    program: str
    spec: list[str]
    timeout: float
    while_loading: Callable[[], object] | None


class HostsArgs(Protocol):
    """What ``add_hosts_options`` adds."""

    hosts: int | None
    dcn: str | None


class LaidOutArgs(MeshArgs, HostsArgs, Protocol):
    """The options that lay a mesh out over hosts."""


class HardwareArgs(Protocol):
    """What ``add_hardware_option`` adds."""

    hardware: str | None


def _limit(name: str, default: int) -> int:
    try:
        return int(os.pathconf("/", name))
    except (OSError, ValueError):
        return default


def add_program_options(
    parser, *, timeout_help: str = "seconds allowed to load the program"
) -> None:
    """``PROGRAM``, ``--mesh``, ``--spec NAME=SPEC`` (repeatable) and ``--timeout``."""
    parser.add_argument(
        "program", type=program_path, help="a .py file, a .mlir file or example:NAME"
    )
    parser.add_argument(
        "--mesh", help="mesh axes, e.g. data=4,model=2 (default: the program's MESH)"
    )
    parser.add_argument(
        "--device-order",
        metavar="IDS",
        help="the device id at each mesh position, row-major, e.g. 0,2,4,6,1,3,5,7 (default: "
        "the program's own order where its mesh has as many devices, else 0,1,2...)",
    )
    parser.add_argument("--spec", action="append", default=[], metavar="NAME=SPEC", help=SPEC_HELP)
    parser.add_argument(
        "--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT, help=timeout_help
    )


def host_count(text: str) -> int:
    """argparse type for ``--hosts``: a whole number of hosts from 1 to 64."""
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(
            f"{shortened(text)} is not a number of hosts from 1 to 64: give e.g. --hosts 2"
        )
    return int(text)


# ``--hosts`` of the commands that lay a program's mesh over hosts without running it.
LAY_OUT_HOSTS_HELP = "lay the mesh's devices over H hosts (device numbers k*N/H.. on host k)"
PRICE_HOSTS_HELP = "mark the collectives that cross hosts and price them on the slow link"


def add_hosts_options(parser, *, hosts_help: str = LAY_OUT_HOSTS_HELP) -> None:
    """``--hosts H`` and ``--dcn AXIS=N,...`` (``sharding.hosts.apply_hosts``)."""
    parser.add_argument("--hosts", type=host_count, default=None, metavar="H", help=hosts_help)
    parser.add_argument(
        "--dcn",
        metavar="AXIS=N",
        default=None,
        help="axes that span hosts and how many hosts lie along each, e.g. data=2: the mesh "
        "is laid out as create_hybrid_device_mesh(..., process_is_granule=True) lays it "
        "(the other axes stay within a host); the host count is the product",
    )


def hosts_of(args: LaidOutArgs, mesh, program=None):
    """The mesh laid over ``--hosts``/``--dcn`` (``sharding.hosts.apply_hosts``) and its
    hosts; (``mesh``, None) without them. Before loading (``program`` None) only a given
    ``--mesh`` is checked."""
    if args.hosts is None and not args.dcn:
        return mesh, None
    if args.dcn and args.device_order:
        raise MeshError(
            "--dcn lays out the device order itself: give --dcn or --device-order, not both"
        )
    if mesh is None and program is not None:
        from shardscope.backend.propagation.propagate import own_mesh

        mesh = own_mesh(program)
        if mesh is None:
            raise MeshError(
                "--hosts needs a mesh and the program has none: give one with --mesh, "
                "e.g. --mesh data=4,model=2"
            )
    if mesh is None:
        return None, None
    from shardscope.backend.sharding.hosts import apply_hosts

    return apply_hosts(mesh, args.hosts, args.dcn)


def given_mesh(args: MeshArgs) -> Mesh | None:
    """``--mesh`` over ``--device-order``, read before the program loads so that bad input
    is told at once (``MeshError``); None without ``--mesh``. A ``--device-order`` alone is
    checked for its form here and applied to the program's own mesh by ``program_mesh``."""
    order = getattr(args, "device_order", None)
    if not args.mesh:
        parse_ints(order, "--device-order")
        return None
    return parse_mesh(args.mesh, order)


def program_mesh(args: MeshArgs, program) -> Mesh | None:
    """The mesh a command works on for a loaded ``program``: ``--mesh`` (else the program's
    own) over ``--device-order`` (else the program's own order, where the mesh has as many
    devices as the program's: ``Program.device_order``). None: the program's own mesh in
    its own order (or no mesh at all, which propagating tells)."""
    order = getattr(args, "device_order", None)
    own_order = getattr(program, "device_order", None)
    if args.mesh:
        mesh = parse_mesh(args.mesh, order)
        if order or not own_order or len(own_order) != mesh.size:
            return mesh
        return Mesh(mesh.axes, tuple(own_order), mesh.axis_types)
    if not order:
        return None
    # The program is loaded: Shardy's bindings are imported already.
    from shardscope.backend.propagation.propagate import own_mesh

    return own_mesh(program, parse_ints(order, "--device-order"))


def add_hardware_option(parser) -> None:
    """``--hardware NAME``: the hardware profile the compiled collectives and memory are
    priced for (``backend.cost``); checked by ``hardware_profile`` when the command runs,
    so that a bad name is a one-line error naming the choices."""
    from shardscope.backend.cost.hardware import DEFAULT_PROFILE, names

    parser.add_argument(
        "--hardware",
        metavar="NAME",
        default=None,
        help=f"price collectives and memory for {', '.join(names())} "
        f"(default {DEFAULT_PROFILE}): an estimate",
    )


def hardware_profile(args: HardwareArgs):
    """The profile ``--hardware`` names (the default without it); ``ShardscopeError``
    naming the choices for an unknown name."""
    from shardscope.backend.cost.hardware import profile

    return profile(getattr(args, "hardware", None))


def note_mesh_override(program, text: str | None) -> None:
    """Say on stderr (stdout may be JSON) when ``--mesh`` replaces the program's own mesh;
    called once the command has worked, so that an error stays its only line."""
    own = getattr(program, "mesh", None)
    if not text or not own:
        return
    given = parse_mesh(text)
    if dict(given.shape) == dict(own):
        return
    shown = ", ".join(f"{k}={v}" for k, v in own.items())
    print(f"note: --mesh {text} replaces the program's own mesh ({shown})", file=sys.stderr)


def parse_spec_args(items: list[str]) -> dict[str, Spec]:
    """``["x=data,_", ...]`` -> ``{"x": Spec}``; a malformed item raises ``SpecError``."""
    out: dict[str, Spec] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise SpecError(
                f'--spec {shortened(item)} is not NAME=SPEC; write e.g. --spec "x=data,_"'
            )
        out[name.strip()] = parse_spec(text)
    return out
