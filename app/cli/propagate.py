"""``propagate``: run Shardy on a program with a mesh and specs; show steps, conflicts, collectives."""

from __future__ import annotations

import json
import sys
from typing import Protocol

from shardscope.app.cli.options import (
    LAY_OUT_HOSTS_HELP,
    PRICE_HOSTS_HELP,
    HardwareArgs,
    HostsArgs,
    ProgramArgs,
    add_hardware_option,
    add_hosts_options,
    add_program_options,
    given_mesh,
    hardware_profile,
    hosts_of,
    note_mesh_override,
    parse_spec_args,
    program_mesh,
)
from shardscope.app.cli.torch_forms import add_torch_forms, torch_forms_text
from shardscope.backend.program.load import load_program
from shardscope.backend.run.result import operand_label
from shardscope.backend.sharding.spec import dims_text

NAME = "propagate"
HELP = "propagate shardings through a program with Shardy and explain every step"
LOADS_PROGRAM = True


class PropagateArgs(ProgramArgs, HostsArgs, HardwareArgs, Protocol):
    """What ``propagate`` reads of its parsed options."""

    gspmd: bool
    json: bool


def add_arguments(parser) -> None:
    """Options of ``propagate``."""
    add_program_options(parser, timeout_help="seconds allowed for loading or compiling")
    parser.add_argument(
        "--gspmd",
        action="store_true",
        help="also compile with GSPMD: list the values it shards differently and its "
        "compiled collectives (the default for a program its framework partitions with "
        "GSPMD, such as a torch_xla capture)",
    )
    add_hardware_option(parser)
    add_hosts_options(parser, hosts_help=LAY_OUT_HOSTS_HELP + ": " + PRICE_HOSTS_HELP)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: PropagateArgs) -> int:
    """Load, propagate, print."""
    # Imported when the command runs: every command module is imported to build the
    # parser, and the loading commands should not wait for jax before their worker starts.
    from shardscope.backend.analysis.analyse import analyse
    from shardscope.backend.run.compiled import start_compile

    hardware = hardware_profile(args)
    # A bad --mesh, --device-order, --hosts or --dcn is told before anything loads.
    given, _ = hosts_of(args, given_mesh(args))
    specs = parse_spec_args(args.spec) if args.spec else None
    # With --mesh the device count is known: the compile worker starts its imports and
    # its CPU client while the program loads (``analyse`` ends it where it does not fit).
    started = start_compile(given, args.timeout)
    try:
        program = load_program(args.program, timeout=args.timeout, while_waiting=args.while_loading)
        mesh, hosts = hosts_of(args, program_mesh(args, program), program)
    except BaseException:
        if started is not None:
            started.cancel()
        raise
    result = analyse(
        program,
        mesh,
        specs,
        timeout=args.timeout,
        hosts=hosts,
        hardware=hardware,
        gspmd=args.gspmd or program.partitioner == "gspmd",
        started=started,
    )
    note_mesh_override(program, args.mesh)
    if specs is None:  # the load's warnings on the program's own SPECS
        for warning in program.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        data = result.to_json()
        if result.framework == "torch_xla":
            data = add_torch_forms(data, result.mesh)
        print(json.dumps(data))
        return 0
    print(summary(result))
    return 0


def _host_lines(result) -> list[str]:
    """Which devices each host owns and how each axis lies across hosts."""
    if result.hosts < 2:
        return []
    from shardscope.backend.sharding.hosts import Hosts, axis_spans, dcn_factors, format_dcn

    hosts = Hosts(result.hosts, result.mesh.size)
    spans = axis_spans(result.mesh, hosts)
    factors = dcn_factors(result.mesh, hosts)
    layout = f" (the layout of --dcn {format_dcn(factors)})" if factors else ""
    lines = ["", f"hosts: {hosts.count}, {hosts.per_host} devices each{layout}"]
    shown = 8
    for k in range(min(hosts.count, shown)):
        owned = hosts.devices_of(k)
        lines.append(f"  host {k}: devices {owned.start}..{owned.stop - 1}")
    if hosts.count > shown:
        lines.append(f"  ... hosts {shown}..{hosts.count - 1} likewise")
    words = {"ici": "ICI (within hosts)", "dcn": "DCN (across hosts)", "both": "both ICI and DCN"}
    for name, span in spans.items():
        lines.append(f"  axis {name} ({result.mesh.shape[name]}): {words[span]}")
    return lines


def _compiled_lines(result, how: str = "as XLA compiled them") -> list[str]:
    """The compiled collectives: kind, axes, operands, tensor, op, line, cause."""
    compiled = result.compiled_collectives
    if compiled is None:
        why = result.compile_error or "not compiled"
        return ["", f"collectives: none listed ({why})"]
    lines = ["", f"collectives: {len(compiled)} ({how})"]
    graph = result.graph
    for c in compiled:
        cause = c.cause
        axes = "+".join(c.axes) if c.axes else "?"
        op = cause.op if cause is not None and cause.op is not None else None
        op_text = f"op {op} {graph.ops[op].short_name}" if op is not None else c.source
        line = cause.line if cause is not None and cause.line is not None else c.line
        runs = f" x{c.runs_per_call} per call" if c.runs_per_call > 1 else ""
        tensor = cause.tensor if cause is not None and cause.tensor else "?"
        if cause is not None and cause.kind == "combined":
            tensor = f"{len(c.tensors)} tensors"
        crosses = " CROSSES HOSTS" if c.crosses_hosts else ""
        lines.append(
            f"  {c.kind:18} {axes:12} {c.operands} operand(s) {tensor} for {op_text}"
            f" line {line if line is not None else '?'}{runs} [{c.origin or '?'}]{crosses}"
        )
        if cause is not None and cause.kind == "combined":
            lines.append(f"    combined: XLA combined {len(c.tensors)} {c.kind}s into one:")
            for j, t in enumerate(c.tensors):
                if t.cause is not None:
                    lines.append(f"      {operand_label(j, t)}, {t.cause.kind}: {t.cause.text}")
        elif cause is not None:
            way = f" ({cause.direction})" if cause.direction == "backward" else ""
            lines.append(f"    {cause.kind}{way}: {cause.text}")
    for w in result.xla_warnings or []:
        where = f"op {w.op}" if w.op is not None else w.op_name or "?"
        size = f", {w.bytes} B gathered per device" if w.bytes else ""
        lines.append(f"  XLA warns at {where} line {w.line}{size}: {w.message[:160]}")
    return lines


def _gspmd_first(result) -> bool:
    """Whether GSPMD's answer leads: the program's framework partitions with GSPMD and
    the comparison ran."""
    return result.partitioner == "gspmd" and result.gspmd_differences is not None


def _torch_spec(result, dims) -> str:
    """The spec in torch_xla's form and as DTensor's placements for a torch_xla program,
    else nothing."""
    if result.framework != "torch_xla":
        return ""
    text = torch_forms_text(result.mesh, dims)
    return f"  {text}" if text else ""


def _gspmd_lines(result) -> list[str]:
    """GSPMD's final shardings of arguments and results, and the collectives the
    framework (or GSPMD) compiled: the faithful view of a GSPMD-partitioned program."""
    framework = "torch_xla" if result.framework == "torch_xla" else result.framework
    lines = [
        "",
        f"{framework} partitions this program with GSPMD: GSPMD's shardings and collectives "
        f"come first; Shardy's propagation of the same annotations follows",
        "",
        "arguments and results (GSPMD's final shardings; * where Shardy differs):",
    ]
    differ = {d.id: d for d in result.gspmd_differences}
    key = result.graph.listing_key()
    for v in sorted(result.values, key=lambda v: key(v.id)):
        if v.role == "intermediate":
            continue
        d = differ.get(v.id)
        if d is None:
            dims, hlo, mark = v.spec, v.hlo_sharding, " "
        else:
            dims, hlo, mark = d.gspmd, d.gspmd_text, "*"
        spec = dims_text(dims, "(no spec)")
        torch = _torch_spec(result, dims) if dims is not None else ""
        shape = str(list(v.shape or []))
        lines.append(f" {mark}{v.name:24} {shape:16} {spec:20} {hlo}{torch}")
        if result.sharded_by.get(v.name or ""):
            lines.append(f"      sharded by {result.sharded_by[v.name]}")
        if d is not None:
            lines.append(f"      Shardy: {dims_text(d.shardy)} {d.shardy_hlo}")
    if _framework_compiled(result):
        lines += _compiled_lines(result, f"as {framework} compiled them, partitioned by GSPMD")
    elif result.gspmd_collectives is not None:
        lines += _gspmd_collective_lines(result)
    return lines


def _framework_compiled(result) -> bool:
    """Whether the compiled collectives are the framework's own compile (a torch_xla
    capture as the script ran it), not shardscope's compile with Shardy."""
    return result.framework != "jax" and result.compiled_by == result.framework


def _gspmd_collective_lines(result) -> list[str]:
    lines = ["", f"GSPMD's compiled collectives: {len(result.gspmd_collectives)}"]
    for c in result.gspmd_collectives:
        axes = "+".join(c.axes) if c.axes else "?"
        ops = ", ".join(f"{t.op_name}:{t.line}" for t in c.tensors)
        lines.append(
            f"  {c.kind:18} {axes:12} x{c.operands} {list(c.shape)} {c.bytes} B/device: {ops}"
        )
    return lines


def summary(result) -> str:
    """The readable report ``propagate`` prints without ``--json``.

    For a program its framework partitions with GSPMD (a torch_xla capture) GSPMD's
    final shardings and the collectives compiled come first, and Shardy's propagation
    follows under a heading saying it is Shardy's view of the same annotations.
    """
    gspmd_first = _gspmd_first(result)
    framework_compiled = _framework_compiled(result)
    lines = _head_lines(result)
    if gspmd_first:
        lines += [*_gspmd_lines(result), "", "== what Shardy does with the same annotations =="]
    lines += _annotation_lines(result)
    lines += _value_lines(result, gspmd_first)
    lines += _step_lines(result)
    lines += _conflict_lines(result)
    if not (gspmd_first and framework_compiled):
        lines += _compiled_lines(result)
    lines += _predicted_lines(result)
    lines += _gspmd_difference_lines(result)
    if result.gspmd_collectives is not None and not (gspmd_first and not framework_compiled):
        lines += _gspmd_collective_lines(result)
    lines += _pricing_lines(result)
    if result.warnings:
        lines += ["", "warnings:"] + [f"  {w}" for w in result.warnings]
    return "\n".join(lines)


def _head_lines(result) -> list[str]:
    """The program, its mesh (with the device order where not the default), the route,
    and the hosts."""
    order = result.mesh.device_order
    devices = "" if result.mesh.is_iota else f" over devices {','.join(map(str, order))}"
    mesh = ", ".join(f"{k}={v}" for k, v in result.mesh.shape.items())
    lines = [f"{result.program}: mesh {mesh}{devices}", f"route: {result.route}"]
    return lines + _host_lines(result)


def _annotation_lines(result) -> list[str]:
    """Each sharding annotation the program carries: where, on what, which spec."""
    lines = ["", "annotations:"]
    values = result.graph.values
    for a in result.annotations:
        if a.spec.dims:
            spec = a.spec.format() + _torch_spec(result, [d.axes for d in a.spec.dims])
        elif a.value is not None and values[a.value].shape == ():
            spec = "(a scalar: replicated)"
        else:
            spec = "(in code)"
        lines.append(f"  {a.source:4} {a.target} = {spec}  [{a.origin}]")
    return lines


def _value_lines(result, gspmd_first: bool) -> list[str]:
    """The final shardings of the arguments and results."""
    whose = " (Shardy's final shardings)" if gspmd_first else ""
    lines = ["", f"arguments and results{whose}:"]
    # An Analysis reads propagation's values through; a PropagationResult is its own.
    for v in getattr(result, "propagation", result).io_values():
        if v.role != "intermediate":
            lines.append(
                f"  {v.name:24} {str(list(v.shape or [])):16} {dims_text(v.spec):20} "
                f"{v.hlo_sharding}{_torch_spec(result, v.spec)}"
            )
    return lines


def _step_lines(result, shown: int = 40) -> list[str]:
    """The first ``shown`` steps of propagation: axis, op, edge and the values set."""
    steps = result.timeline.steps
    graph = result.graph
    lines = ["", f"steps: {len(steps)}"]
    for s in steps[:shown]:
        names = ", ".join(graph.values[v].display_name for v in s.values)
        flag = "" if s.recorded else " (not recorded by Shardy)"
        lines.append(
            f"  {s.index:4} {s.axis:8} {s.op_name} {s.source} -> {', '.join(s.targets)}: "
            f"{names}{flag}"
        )
    if len(steps) > shown:
        lines.append(f"  ... {len(steps) - shown} more (use --json)")
    return lines


def _conflict_lines(result) -> list[str]:
    """Each conflict: the offers, what was kept by which rule, the reshards that reach
    it, and what the partitioner really inserts."""
    lines = ["", f"conflicts: {len(result.conflicts)}"]
    for c in result.conflicts:
        props = "; ".join(f"{p.tensor} {'+'.join(p.axes)} ({p.origin})" for p in c.proposals)
        lines.append(f"  op {c.op} {c.op_name} factor {c.factor}: {props}")
        lines.append(f"    kept {dims_text([c.kept])} by {c.rule}")
        for r in c.reshards:
            lines.append(
                f"    to reach it: {r.tensor} {dims_text([r.from_axes])} -> "
                f"{dims_text([r.to_axes])} ({r.kind})"
            )
        # Shardy's explicit-reshard pass may settle the op another way (e.g. reduce over a
        # contracting factor instead of gathering it): show what it really inserts.
        inserted = ", ".join(f"{x.kind} {'+'.join(x.axes)}" for x in c.collectives)
        lines.append(f"    the partitioner inserts: {inserted or 'nothing'}")
    return lines


def _predicted_lines(result) -> list[str]:
    """Shardy's predicted collectives, each marked matched or not compiled and where it
    crosses hosts."""
    collectives = result.collectives
    matched = result.predicted_matched or [None] * len(collectives)
    crossing = result.predicted_crossing or [None] * len(collectives)
    graph = result.graph
    lines = [
        "",
        f"predicted collectives: {len(collectives)} (Shardy's explicit reshards, before compiling)",
    ]
    for c, m, x in zip(collectives, matched, crossing, strict=True):
        what = graph.values[c.value].display_name if c.value is not None else "?"
        where = f"op {c.op} {c.op_name}" if c.op is not None else c.op_name
        flag = {True: "matched", False: "NOT compiled", None: ""}[m]
        flag += " CROSSES HOSTS" if x else ""
        lines.append(
            f"  {c.kind:18} {'+'.join(c.axes):12} on {what} for {where}: "
            f"{c.bytes_per_device} B/device  {flag}".rstrip()
        )
    return lines


def _gspmd_difference_lines(result) -> list[str]:
    """The values GSPMD shards differently from Shardy (none without ``--gspmd``)."""
    if result.gspmd_differences is None:
        return []
    lines = ["", f"GSPMD differs on {len(result.gspmd_differences)} value(s):"]
    for d in result.gspmd_differences:
        theirs = dims_text(d.gspmd, "(no spec)")
        lines.append(
            f"  {d.display_name}: shardy {dims_text(d.shardy)}  gspmd {theirs} {d.gspmd_text}"
        )
    return lines


def _pricing_lines(result) -> list[str]:
    """The price of the collectives and memory, and the traffic within and across hosts."""
    if result.pricing is None:
        return []
    from shardscope.backend.cost.traffic import traffic_lines

    traffic = traffic_lines(result.pricing)
    return ["", *result.pricing.summary_lines(), *(["", *traffic] if traffic else [])]
