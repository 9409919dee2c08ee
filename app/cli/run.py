"""``run``: compile and run a program on the attached devices; shards, collectives, timings."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Protocol

from shardscope.app.cli.options import (
    HardwareArgs,
    HostsArgs,
    ProgramArgs,
    add_hardware_option,
    add_hosts_options,
    add_program_options,
    given_mesh,
    hardware_profile,
    note_mesh_override,
    parse_spec_args,
    program_mesh,
)
from shardscope.backend.program.load import load_program, python_source
from shardscope.backend.sharding.mesh import parse_ints

NAME = "run"
HELP = (
    "compile and run a program on the attached devices: each device's shard, the real collectives"
)
# Not a loading command in ``main``'s sense (no fork server to warm up): a Python program
# is loaded in the run's own worker.
LOADS_PROGRAM = False


def add_arguments(parser) -> None:
    """Options of ``run``."""
    add_program_options(parser, timeout_help="seconds allowed for loading, and for the run")
    parser.add_argument(
        "--runs",
        type=_runs,
        default=5,
        help="timed runs after a warm-up one; run_s is their median (default 5)",
    )
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the unsharded run that max_rel_error compares against (one compile less)",
    )
    add_hosts_options(
        parser,
        hosts_help="run as H local processes on JAX's distributed runtime, each owning "
        "mesh size / H fake CPU devices: each shard names its host, each collective whether "
        "it crosses hosts (a Python program only)",
    )
    add_hardware_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _runs(text: str) -> int:
    import argparse

    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of runs from 1 to 1000")
    return int(text)


class RunArgs(ProgramArgs, HostsArgs, HardwareArgs, Protocol):
    """What ``run`` reads of its parsed options."""

    runs: int
    no_reference: bool
    json: bool


def run(args: RunArgs) -> int:
    """Run a Python program in one worker that loads, predicts, compiles and runs it
    (``run.source``); a ``.mlir`` module or a capture is loaded here and its module run on
    seeded inputs (``_run_loaded``). Print."""
    hardware_profile(args)  # a bad --hardware is told before anything starts
    mesh = given_mesh(args)  # a bad --mesh or --device-order is told before anything starts
    specs = parse_spec_args(args.spec) if args.spec else None
    python = python_source(args.program)
    if python is None:
        if (args.hosts or 1) > 1 or args.dcn:
            from shardscope.backend.errors import ShardscopeError
            from shardscope.backend.run.dispatch import MODULE_ON_HOSTS

            raise ShardscopeError(MODULE_ON_HOSTS.format(name=args.program))
        return _run_loaded(args, mesh, specs)
    # Imported when the command runs: every command module is imported to build the
    # parser, and only ``run`` needs these.
    from shardscope.backend.run.dispatch import run as run_request
    from shardscope.backend.run.request import ProgramFile

    path, params, example = python
    program = ProgramFile(
        path,
        params,
        name=example or path.stem,
        source=args.program,
        kind="example" if example else "python",
        device_order=parse_ints(args.device_order, "--device-order") if mesh is None else None,
    )
    done = run_request(_request(args, program, mesh, specs))
    note_mesh_override(SimpleNamespace(mesh=done.program_mesh), args.mesh)
    _print(done.result, args)
    return 0


def _print(result, args: RunArgs) -> None:
    pricing = run_pricing(result, hardware_profile(args))
    if args.json:
        data = result.to_json()
        data["cost"] = {**pricing.to_json(), "measured": _measured(result)}
        print(json.dumps(data))
    else:
        print(summary(result))
        measured = result.run_times if result.platform != "cpu" else None
        print("\n".join(["", *pricing.summary_lines(measured=measured)]))
        from shardscope.backend.cost.traffic import traffic_lines

        lines = traffic_lines(pricing)
        if lines:
            print("\n".join(["", *lines]))


def run_pricing(result, hardware):
    """The run's compiled collectives and memory priced on ``hardware``: an estimate. The
    memory is the buffer assignment of the run's own compile, on its own platform; on
    several hosts a collective that crosses them is priced on the slower link."""
    from shardscope.backend.cost.price import price
    from shardscope.backend.sharding.hosts import Hosts

    source = (
        f"XLA's {result.platform.upper()} buffer assignment of this run's compile "
        "(compiled.memory_analysis()), bytes per device"
    )
    if result.platform == "cpu":
        source += ": an estimate of what the accelerator's compiler would assign"
    hosts = Hosts(result.hosts, result.device_count) if result.hosts > 1 else None
    return price(result.collectives, result.memory, hardware, memory_source=source, hosts=hosts)


def _measured(result) -> dict | None:
    """The run's own times where it ran on an accelerator, beside the estimate."""
    if result.platform == "cpu":
        return None
    return {
        "platform": result.platform,
        "run_times": list(result.run_times),
        "run_s": result.run_s,
        "text": "measured: the whole program per run on the accelerator (compute and "
        "collectives); the estimate counts collectives alone",
    }


def _run_loaded(args: RunArgs, mesh, specs) -> int:
    """Load a source ``load.python_source`` does not name (a ``.mlir`` module, a capture)
    and run its module on seeded inputs on fake CPU devices (``run.module_run``, which
    also predicts its collectives beside the run); print. Loading says what is wrong with
    any other source."""
    from shardscope.backend.run.dispatch import run as run_request
    from shardscope.backend.run.request import ProgramLoader

    def load():
        program = load_program(args.program, timeout=args.timeout, while_waiting=args.while_loading)
        return program, program_mesh(args, program)

    # The run's worker starts now and imports JAX while the program loads.
    done = run_request(_request(args, ProgramLoader(load), None, specs, predict=True))
    note_mesh_override(SimpleNamespace(mesh=done.program_mesh), args.mesh)
    _print(done.result, args)
    return 0


def _request(args: RunArgs, program, mesh, specs, **more):
    """The run the command's options ask for, of ``program`` on ``mesh`` with ``specs``."""
    from shardscope.backend.run.request import RunRequest

    return RunRequest(
        program,
        mesh,
        {k: v.format() for k, v in specs.items()} if specs is not None else None,
        timeout=args.timeout,
        runs=args.runs,
        reference=not args.no_reference,
        values=False,  # neither output form prints them
        hosts=args.hosts,
        dcn=args.dcn,
        **more,
    )


def _index(index) -> str:
    return "[" + ", ".join(f"{a}:{b}" for a, b in index) + "]"


def _groups(groups) -> str:
    if groups is None:
        return "?"
    text = " ".join("{" + ",".join(map(str, g)) + "}" for g in groups[:8])
    return text + (f" ... ({len(groups)} groups)" if len(groups) > 8 else "")


def _hosts_lines(result) -> list[str]:
    """For a run on several hosts: the devices each host owns (``sharding.hosts``), and
    how many compiled collectives cross hosts."""
    if result.hosts <= 1:
        return []
    per = result.device_count // result.hosts
    owned = "; ".join(
        f"host {k}: devices {k * per}-{(k + 1) * per - 1}" for k in range(result.hosts)
    )
    crossing = sum(1 for c in result.collectives if c.crosses_hosts)
    return [
        f"hosts: {result.hosts} processes on JAX's distributed runtime ({owned})",
        f"collectives crossing hosts: {crossing} of {len(result.collectives)}",
    ]


def summary(result) -> str:
    """The readable report ``run`` prints without ``--json``."""
    lines = _head_lines(result)
    for title, tensors in (("outputs", result.outputs), ("arguments", result.arguments)):
        lines += ["", f"{title}:"]
        for t in tensors:
            lines += _tensor_lines(t, result.hosts)
    lines += _collective_lines(result)
    if result.predicted_only:
        lines += ["", f"predicted but not compiled: {len(result.predicted_only)}"]
        lines += [
            f"  {p.kind:18} {'+'.join(p.axes):12} {p.bytes:,} B/device  {p.source} line {p.line}"
            for p in result.predicted_only
        ]
    if result.warnings:
        lines += ["", "XLA warnings:"]
        lines += [f"  {w.op_name or '?'}: {w.message}" for w in result.warnings]
    if result.notes:
        lines += ["", "notes:"] + [f"  {n}" for n in result.notes]
    return "\n".join(lines)


def _head_lines(result) -> list[str]:
    """Where it ran, on which inputs, how long it took, the memory, and the hosts."""
    from shardscope.backend.cost.price import HELD_WORDS, held_bytes

    mesh = ", ".join(f"{k}={v}" for k, v in result.mesh.items())
    memory = [f"{k} {v:,} B" for k, v in result.memory.items() if k != "generated_code"]
    lines = [
        f"{result.program}: ran on {result.device_count} {result.platform.upper()} devices "
        f"(mesh {mesh})",
        *(
            ["inputs: seeded random data, not the script's (see notes)"]
            if result.inputs == "seeded"
            else []
        ),
        f"compile {result.compile_s:.3f} s, run {result.run_s * 1e3:.3f} ms (median of "
        f"{len(result.run_times)})",
        f"memory per device: holds {held_bytes(result.memory):,} B ({HELD_WORDS}): "
        + ", ".join(memory),
    ]
    if result.reference_kept:
        from shardscope.backend.run.reference_cache import KEPT

        lines.append(KEPT)
    return lines + _hosts_lines(result)


def _tensor_lines(t, hosts: int) -> list[str]:
    """One tensor of the run: its spec, its error against the reference, whether its
    replicas match, and each shard's device, index, shape and checksum."""
    err = "no reference" if t.max_rel_error is None else f"max rel error {t.max_rel_error:.2e}"
    replicas = "replicas match"
    if not t.replicas_match:
        differ = "; ".join(",".join(map(str, g)) for g in t.replica_mismatches)
        replicas = f"REPLICAS DIFFER on devices {differ}"
    lines = [f"  {t.name:24} {t.dtype}{list(t.shape)} spec [{t.spec}]  {err}, {replicas}"]
    if t.where:
        lines.append(f"    in the return value: {t.where}")
    for s in t.shards:
        host = f" host {s.host}" if hosts > 1 else ""
        padding = f"  {s.padding_text}" if s.padding_text else ""
        lines.append(
            f"    device {s.device:3}{host} {_index(s.index):28} {list(s.shape)!s:16} "
            f"{s.checksum}{padding}"
        )
    return lines


def _collective_lines(result) -> list[str]:
    """The compiled collectives: kind, shape, bytes, source, groups and the prediction
    each matched."""
    lines = ["", f"compiled collectives: {len(result.collectives)}"]
    for c in result.collectives:
        where = f"line {c.line}" if c.line else ""
        extra = f" x{c.operands} operands" if c.operands > 1 else ""
        predicted = "NOT PREDICTED"
        if c.predicted:
            predicted = "predicted: " + ", ".join(
                f"{p.kind} {'+'.join(p.axes)}" for p in c.predicted
            )
        crossing = "  CROSSES HOSTS" if c.crosses_hosts else ""
        lines.append(
            f"  {c.kind:18} {list(c.shape)!s:14}{extra} {c.bytes:,} B/device  {c.source} "
            f"{where}{crossing}"
        )
        lines.append(f"    groups {_groups(c.device_groups)}; {predicted}")
    return lines
