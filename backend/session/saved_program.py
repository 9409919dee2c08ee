"""A program kept as data in a session file, so opening the session runs no code.

The ``"program"`` entry of a saved session holds what loading the source gave: the
lowered module's text, the program's own mesh, specs and parameters, and the source
lines around its ops (``snippets``), and for a capture what its framework recorded
(the mesh's device order, the framework and its partitioner, its own compiled module,
the processes its script ran as: ``hosts``, 1 where a file leaves it out)::

    {"name": "mlp", "kind": "example", "path": "/…/mlp.py", "mlir": "module @jit_mlp …",
     "mesh": {"data": 4, "model": 2}, "device_order": null, "framework": "jax",
     "partitioner": "shardy", "compiled_hlo": null, "hosts": 1,
     "specs": {"x": ["data", null]}, "params": {},
     "sources": {"/…/mlp.py": {"12": "    h = x @ w1", …}}}

``check_program`` checks its form when the file is read; ``unpack_program`` parses the
module (in this process, as a ``.mlir`` file is parsed: the module's nesting is checked
first) and is meant to run off the GUI thread. The program room is imported only when
a program is checked or unpacked, so importing the session stays cheap.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program

KINDS = ("python", "example", "mlir", "capture", "api")
# The partitioners a program's framework compiles it with (``Program.partitioner``).
PARTITIONERS = ("shardy", "gspmd")

JsonDict = dict[str, object]


def pack_program(program: Program) -> JsonDict:
    """The ``"program"`` entry of a session for ``program``."""
    return {
        "name": program.name,
        "kind": program.kind,
        "path": program.path,
        "mlir": program.mlir_text,
        "mesh": dict(program.mesh) if program.mesh is not None else None,
        "device_order": list(program.device_order) if program.device_order else None,
        "framework": program.framework,
        "partitioner": program.partitioner,
        "compiled_hlo": program.compiled_hlo,
        "hosts": program.hosts,
        "def_site": list(program.def_site) if program.def_site else None,
        "specs": {name: list(entries) for name, entries in (program.specs or {}).items()},
        "params": dict(program.params),
        "sources": {
            path: {str(n): text for n, text in lines.items()}
            for path, lines in program.snippets.items()
        },
    }


def check_program(data: object) -> str | None:
    """The first problem with a ``"program"`` entry's form, or None if it has none (the
    module itself is only parsed by ``unpack_program``)."""
    if not isinstance(data, dict):
        return "a program entry that is not an object"
    for check in (_module_problem, _mesh_problem, _compiled_problem, _extras_problem):
        problem = check(data)
        if problem is not None:
            return problem
    return None


def _module_problem(data: dict) -> str | None:
    """The first problem with the program's name, kind, path and module text."""
    from shardscope.backend.program.load import MAX_MLIR_BYTES
    from shardscope.backend.program.mlir import has_utf8, text_problem

    for key in ("name", "kind", "mlir"):
        if not isinstance(data.get(key), str):
            return f"a program entry whose {key} is not text"
    if data["kind"] not in KINDS:
        return f"a program of unknown kind {data['kind']!r}"
    if len(data["mlir"]) > MAX_MLIR_BYTES:
        return f"a program larger than the {MAX_MLIR_BYTES // 2**20} MiB shardscope reads"
    problem = text_problem(data["mlir"])
    if problem is not None:
        return f"a program whose module text holds {problem}, which MLIR does not read"
    if data.get("path") is not None and not isinstance(data["path"], str):
        return "a program path that is not text"
    if not all(has_utf8(data.get(key)) for key in ("name", "path")):
        return "a program whose name or path is not UTF-8 text (a lone surrogate)"
    return None


def _mesh_problem(data: dict) -> str | None:
    """The first problem with the program's mesh, device order, framework and
    partitioner."""
    from shardscope.backend.program.capture_file import FRAMEWORKS

    mesh = data.get("mesh")
    if mesh is not None and not (
        isinstance(mesh, dict)
        and all(isinstance(k, str) and type(v) is int and v > 0 for k, v in mesh.items())
    ):
        return "a program mesh that is not axis names with positive sizes"
    problem = _order_problem(data.get("device_order"), mesh)
    if problem is not None:
        return problem
    if data.get("framework", "jax") not in FRAMEWORKS:
        return f"a program of unknown framework {_shown(data.get('framework'))}"
    if data.get("partitioner", "shardy") not in PARTITIONERS:
        return f"a program of unknown partitioner {_shown(data.get('partitioner'))}"
    return _hosts_problem(data.get("hosts", 1), mesh)


def _hosts_problem(hosts: object, mesh: object) -> str | None:
    """What is wrong with a saved host count (``capture --hosts``), or None."""
    from shardscope.backend.session.host_layout import MAX_HOSTS

    if type(hosts) is not int or not 1 <= hosts <= MAX_HOSTS:
        return (
            f"a program host count {_shown(hosts)} that is not a whole number from 1 to {MAX_HOSTS}"
        )
    if isinstance(mesh, dict) and math.prod(mesh.values()) % hosts:
        return f"a program host count {hosts} that does not divide its mesh's devices"
    return None


def _compiled_problem(data: dict) -> str | None:
    """The problem with the compiled module a capture kept, if it kept one."""
    from shardscope.backend.program.load import MAX_MLIR_BYTES
    from shardscope.backend.program.mlir import text_problem

    compiled = data.get("compiled_hlo")
    if compiled is None:
        return None
    if not isinstance(compiled, str):
        return "a program whose compiled module is not text"
    if len(compiled) > MAX_MLIR_BYTES:
        return (
            f"a program whose compiled module is larger than the "
            f"{MAX_MLIR_BYTES // 2**20} MiB shardscope reads"
        )
    problem = text_problem(compiled)
    if problem is not None:
        return f"a program whose compiled module holds {problem}"
    from shardscope.backend.hlo.syntax import is_hlo_module

    if not is_hlo_module(compiled):
        return "a program whose compiled module is not XLA's HLO text (no HloModule)"
    return None


def _extras_problem(data: dict) -> str | None:
    """The first problem with the program's specs, parameters, definition site and
    source snippets."""
    from shardscope.backend.program.mlir import has_utf8
    from shardscope.backend.program.snippets import check_snippets

    specs = data.get("specs", {})
    if not isinstance(specs, dict) or not all(
        isinstance(entries, list)
        and all(
            e is None
            or isinstance(e, str)
            or (isinstance(e, list) and all(isinstance(a, str) for a in e))
            for e in entries
        )
        for entries in specs.values()
    ):
        return "program specs that are not lists of axes per name"
    params = data.get("params", {})
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        return "program parameters that are not text"
    site = data.get("def_site")
    if site is not None and not (
        isinstance(site, list)
        and len(site) == 2
        and isinstance(site[0], str)
        and has_utf8(site[0])
        and type(site[1]) is int
        and site[1] > 0
    ):
        return "a program definition site that is not [file, line]"
    try:
        check_snippets(data.get("sources", {}))
    except ValueError as exc:
        return f"a program with {exc}"
    return None


def _order_problem(order: object, mesh: object) -> str | None:
    """What is wrong with a saved device order (None, or a permutation of the ids of the
    program's mesh), or None."""
    if order is None:
        return None
    if not (isinstance(order, list) and all(type(d) is int for d in order)):
        return "a program device order that is not a list of device ids"
    if sorted(order) != list(range(len(order))):
        return "a program device order that is not each of the ids 0..N-1 once"
    if isinstance(mesh, dict) and len(order) != math.prod(mesh.values()):
        return "a program device order with another number of devices than its mesh"
    return None


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}..."


def unpack_program(data: JsonDict, source: str, where: str) -> Program:
    """The ``Program`` a checked ``"program"`` entry holds, its graph built; ProgramError
    (one line, naming ``where``) if its module does not parse."""
    from shardscope.backend.program.load import Program, parse_program_text
    from shardscope.backend.program.snippets import check_snippets

    program = Program(
        name=str(data["name"]),
        source=source,
        kind=str(data["kind"]),
        path=data.get("path"),  # type: ignore[arg-type]
        mlir_text=str(data["mlir"]),
        mesh=dict(data["mesh"]) if data.get("mesh") else None,  # type: ignore[arg-type]
        specs={k: list(v) for k, v in (data.get("specs") or {}).items()},  # type: ignore[union-attr]
        params=dict(data.get("params") or {}),  # type: ignore[arg-type]
        snippets=check_snippets(data.get("sources", {})),
        from_session=True,
        device_order=tuple(data["device_order"]) if data.get("device_order") else None,  # type: ignore[arg-type]
        framework=str(data.get("framework", "jax")),
        partitioner=str(data.get("partitioner", "shardy")),
        compiled_hlo=data.get("compiled_hlo"),  # type: ignore[arg-type]
        hosts=int(data.get("hosts", 1)),  # type: ignore[arg-type]
        def_site=tuple(data["def_site"]) if data.get("def_site") else None,  # type: ignore[arg-type]
    )
    parse_program_text(program, f"{where} (its saved program)")
    return program
