"""``propagate``: run Shardy on a program with a mesh and specs; show steps, conflicts, collectives."""

from __future__ import annotations

import json

from shardscope.app.cli.options import (
    add_hardware_option,
    add_program_options,
    given_mesh,
    hardware_profile,
    note_mesh_override,
    parse_spec_args,
    program_mesh,
)
from shardscope.backend.program.load import load_program
from shardscope.backend.sharding.spec import dims_text

NAME = "propagate"
HELP = "propagate shardings through a program with Shardy and explain every step"
LOADS_PROGRAM = True


def add_arguments(parser) -> None:
    """Options of ``propagate``."""
    add_program_options(parser, timeout_help="seconds allowed for loading or compiling")
    parser.add_argument(
        "--gspmd",
        action="store_true",
        help="also compile with GSPMD: list the values it shards differently and its "
        "compiled collectives",
    )
    add_hardware_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    """Load, propagate, print."""
    # Imported when the command runs: every command module is imported to build the
    # parser, and the loading commands should not wait for jax before their worker starts.
    from shardscope.backend.cost.price import price_result
    from shardscope.backend.run.compiled import propagate_compiled

    hardware = hardware_profile(args)
    given_mesh(args)  # a bad --mesh or --device-order is told before anything loads
    specs = parse_spec_args(args.spec) if args.spec else None
    program = load_program(args.program, timeout=args.timeout, while_waiting=args.while_loading)
    mesh = program_mesh(args, program)
    result = propagate_compiled(program, mesh, specs, timeout=args.timeout)
    price_result(result, hardware)
    if args.gspmd:
        # The GSPMD comparison is imported only when asked for.
        from shardscope.backend.gspmd.compare import compare_gspmd

        comparison = compare_gspmd(program, result, timeout=args.timeout)
        result.gspmd_differences = comparison.differences
        result.gspmd_collectives = comparison.collectives
    note_mesh_override(program, args.mesh)
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    print(summary(result))
    return 0


def _compiled_lines(result) -> list[str]:
    """The compiled collectives: kind, axes, operands, tensor, op, line, cause."""
    compiled = result.compiled_collectives
    if compiled is None:
        why = result.compile_error or "not compiled"
        return ["", f"collectives: none listed ({why})"]
    lines = ["", f"collectives: {len(compiled)} (as XLA compiled them)"]
    graph = result.graph
    for c in compiled:
        cause = c.cause
        axes = "+".join(c.axes) if c.axes else "?"
        op = cause.op if cause is not None and cause.op is not None else None
        op_text = f"op {op} {graph.ops[op].short_name}" if op is not None else c.source
        line = cause.line if cause is not None and cause.line is not None else c.line
        runs = f" x{c.runs_per_call} per call" if c.runs_per_call > 1 else ""
        tensor = cause.tensor if cause is not None and cause.tensor else "?"
        lines.append(
            f"  {c.kind:18} {axes:12} {c.operands} operand(s) {tensor} for {op_text}"
            f" line {line if line is not None else '?'}{runs} [{c.origin or '?'}]"
        )
        if cause is not None:
            lines.append(f"    {cause.kind}: {cause.text}")
    for w in result.xla_warnings or []:
        where = f"op {w.op}" if w.op is not None else w.op_name or "?"
        size = f", {w.bytes} B gathered per device" if w.bytes else ""
        lines.append(f"  XLA warns at {where} line {w.line}{size}: {w.message[:160]}")
    return lines


def summary(result) -> str:
    """The readable report ``propagate`` prints without ``--json``."""
    lines = [
        f"{result.program}: mesh {', '.join(f'{k}={v}' for k, v in result.mesh.shape.items())}",
        f"route: {result.route}",
        "",
        "annotations:",
    ]
    values = result.graph.values
    for a in result.annotations:
        if a.spec.dims:
            spec = a.spec.format()
        elif a.value is not None and values[a.value].shape == ():
            spec = "(a scalar: replicated)"
        else:
            spec = "(in code)"
        lines.append(f"  {a.source:4} {a.target} = {spec}  [{a.origin}]")
    lines += ["", "arguments and results:"]
    key = result.graph.listing_key()
    for v in sorted(result.values, key=lambda v: key(v.id)):
        if v.role != "intermediate":
            lines.append(
                f"  {v.name:24} {str(list(v.shape or [])):16} {dims_text(v.spec):20} {v.hlo_sharding}"
            )
    steps = result.timeline.steps
    lines += ["", f"steps: {len(steps)}"]
    graph = result.graph
    for s in steps[:40]:
        names = ", ".join(graph.values[v].display_name for v in s.values)
        flag = "" if s.recorded else " (not recorded by Shardy)"
        lines.append(
            f"  {s.index:4} {s.axis:8} {s.op_name} {s.source} -> {', '.join(s.targets)}: {names}{flag}"
        )
    if len(steps) > 40:
        lines.append(f"  ... {len(steps) - 40} more (use --json)")
    lines += ["", f"conflicts: {len(result.conflicts)}"]
    for c in result.conflicts:
        props = "; ".join(f"{p.tensor} {'+'.join(p.axes)} ({p.origin})" for p in c.proposals)
        lines.append(f"  op {c.op} {c.op_name} factor {c.factor}: {props}")
        lines.append(f"    kept [{'+'.join(c.kept) or '_'}] by {c.rule}")
        for r in c.reshards:
            lines.append(
                f"    to reach it: {r.tensor} [{'+'.join(r.from_axes) or '_'}] -> "
                f"[{'+'.join(r.to_axes) or '_'}] ({r.kind})"
            )
        # Shardy's explicit-reshard pass may settle the op another way (e.g. reduce over a
        # contracting factor instead of gathering it): show what it really inserts.
        inserted = ", ".join(f"{x.kind} {'+'.join(x.axes)}" for x in c.collectives)
        lines.append(f"    the partitioner inserts: {inserted or 'nothing'}")
    lines += _compiled_lines(result)
    matched = result.predicted_matched or [None] * len(result.collectives)
    lines += [
        "",
        f"predicted collectives: {len(result.collectives)} (Shardy's explicit reshards, "
        f"before compiling)",
    ]
    for c, m in zip(result.collectives, matched, strict=True):
        what = graph.values[c.value].display_name if c.value is not None else "?"
        where = f"op {c.op} {c.op_name}" if c.op is not None else c.op_name
        flag = {True: "matched", False: "NOT compiled", None: ""}[m]
        lines.append(
            f"  {c.kind:18} {'+'.join(c.axes):12} on {what} for {where}: "
            f"{c.bytes_per_device} B/device  {flag}".rstrip()
        )
    if result.gspmd_differences is not None:
        lines += ["", f"GSPMD differs on {len(result.gspmd_differences)} value(s):"]
        for d in result.gspmd_differences:
            theirs = dims_text(d.gspmd) if d.gspmd is not None else "(no spec)"
            lines.append(
                f"  {d.display_name}: shardy {dims_text(d.shardy)}  gspmd {theirs} {d.gspmd_text}"
            )
    if result.gspmd_collectives is not None:
        lines += ["", f"GSPMD's compiled collectives: {len(result.gspmd_collectives)}"]
        for c in result.gspmd_collectives:
            axes = "+".join(c.axes) if c.axes else "?"
            ops = ", ".join(f"{t.op_name}:{t.line}" for t in c.tensors)
            lines.append(
                f"  {c.kind:18} {axes:12} x{c.operands} {list(c.shape)} {c.bytes} B/device: {ops}"
            )
    if result.pricing is not None:
        lines += ["", *result.pricing.summary_lines()]
    if result.warnings:
        lines += ["", "warnings:"] + [f"  {w}" for w in result.warnings]
    return "\n".join(lines)
