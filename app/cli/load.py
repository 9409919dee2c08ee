"""``load``: load a program and print its arguments, results, scopes and sources."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Protocol

from shardscope.app.cli.options import program_path, timeout_seconds
from shardscope.app.cli.torch_forms import torch_forms
from shardscope.backend.natural_order import natural_key
from shardscope.backend.program.load import DEFAULT_TIMEOUT, Program, load_program

NAME = "load"
HELP = "load a program (.py, .mlir or example:NAME) and list its tensors and scopes"
LOADS_PROGRAM = True


class LoadArgs(Protocol):
    """What ``load`` reads of its parsed options."""

    program: str
    timeout: float
    json: bool
    while_loading: Callable[[], object] | None


def add_arguments(parser) -> None:
    """Options of ``load``."""
    parser.add_argument(
        "program", type=program_path, help="a .py file, a .mlir file or example:NAME"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=DEFAULT_TIMEOUT,
        help="seconds allowed to import and lower",
    )


def describe(program: Program) -> dict:
    """The JSON-able summary ``load --json`` prints."""
    graph = program.graph
    scopes: dict[str, int] = {}
    for op in graph.walk_ops(graph.main):
        top = op.scope.split("/", 1)[0] if op.scope else ""
        scopes[top] = scopes.get(top, 0) + 1
    return {
        "name": program.name,
        "kind": program.kind,
        "source": program.source,
        "annotations": program.annotation_kind,
        "framework": program.framework,
        "partitioner": program.partitioner,
        "mesh": program.mesh,
        "device_order": list(program.device_order) if program.device_order else None,
        "specs": program.specs,
        "ops": len(graph.ops),
        "functions": list(graph.functions),
        # in natural order, as the window lists them: layer_2 before layer_10
        "scopes": dict(sorted(scopes.items(), key=lambda item: natural_key(item[0]))),
        "values": [
            {
                "id": v.id,
                "name": v.name,
                "display_name": v.display_name,
                "role": v.role,
                "shape": list(v.shape) if v.shape is not None else None,
                "dtype": v.dtype,
                "code_sharding": v.code_sharding,
                "sharded_by": program.sharded_by.get(v.name or ""),
            }
            for v in graph.values
            if v.role != "intermediate" or v.code_sharding
        ],
        "sources": graph.source_files(),
    }


def _torch_forms(program, value: dict) -> dict[str, str | None]:
    """The ``torch_xla`` and ``dtensor`` forms of a torch_xla program's code sharding of
    ``value`` as its script wrote it (``torch_forms``: the mark_sharding spec and DTensor's
    placements over the program's mesh), None where it has none or a form cannot say it."""
    from shardscope.backend.errors import ShardscopeError
    from shardscope.backend.sharding.hlo_text import spec_from_hlo_sharding
    from shardscope.backend.sharding.mesh import Mesh

    none = {"torch_xla": None, "dtensor": None}
    if not value["code_sharding"]:
        return none
    mesh = Mesh.from_dict(program.mesh)
    mesh = Mesh(mesh.axes, program.device_order or ())
    rank = len(value["shape"] or ())
    try:
        spec = spec_from_hlo_sharding(value["code_sharding"], mesh, rank)
    except ShardscopeError:
        return none
    return torch_forms(mesh, [d.axes for d in spec.padded(rank).dims])


def run(args: LoadArgs) -> int:
    """Load and print."""
    program = load_program(args.program, timeout=args.timeout, while_waiting=args.while_loading)
    info = describe(program)
    if program.framework == "torch_xla":
        for v in info["values"]:
            v.update(_torch_forms(program, v))
    if args.json:
        print(json.dumps(info, indent=1))
        return 0
    print(f"{info['name']} ({info['kind']}, {info['ops']} ops, annotations: {info['annotations']})")
    if info["framework"] != "jax":
        print(f"a {info['framework']} graph, partitioned by {info['partitioner'].upper()}")
    if info["mesh"]:
        order = info["device_order"]
        over = f" over devices {','.join(map(str, order))}" if order else ""
        print("mesh: " + ", ".join(f"{k}={v}" for k, v in info["mesh"].items()) + over)
    print("tensors:")
    key = program.graph.listing_key()
    for v in sorted(info["values"], key=lambda v: key(v["id"])):
        shape = "x".join(map(str, v["shape"])) if v["shape"] else "scalar"
        extra = f"  code sharding {v['code_sharding']}" if v["code_sharding"] else ""
        forms = "  ".join(t for t in (v.get("torch_xla"), v.get("dtensor")) if t)
        if forms:
            extra += f" = {forms}"
        if v["sharded_by"]:
            extra += f"  by {v['sharded_by']}"
        print(f"  {v['role']:<12} {v['display_name']:<40} {v['dtype']}[{shape}]{extra}")
    print("scopes: " + ", ".join(f"{k or '(top)'}: {n}" for k, n in info["scopes"].items()))
    return 0
