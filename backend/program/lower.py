"""Worker process: import a user's program, trace and lower it, report as JSON.

Run as ``python -m shardscope.backend.program.lower PATH PARAMS_JSON OUT_JSON``. The result file
holds either ``{"ok": true, "mlir_text": ..., "mesh": ..., "specs": ...}`` or
``{"ok": false, "error": "<one line naming file, line and fix>"}``. A crash or a hang
leaves no file; the parent turns that into its own message.
"""

from __future__ import annotations

import json
import runpy
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import jax
from jax.sharding import AbstractMesh, AxisType, PartitionSpec

from shardscope.backend.isolation.jobs import (
    exception_text,
    is_out_of_memory,
    memory_limit,
    memory_message,
)


class _UserError(Exception):
    pass


def load_python_namespace(path: str, params: dict[str, str] | None = None) -> dict[str, Any]:
    """Execute a program file and return its globals (``PROGRAM``, ``EXAMPLE_ARGS``...).

    ``params`` become the global ``SHARDSCOPE_PARAMS``. Only for worker processes: this
    runs arbitrary user code.
    """
    return runpy.run_path(
        path, init_globals={"SHARDSCOPE_PARAMS": dict(params or {})}, run_name="__shardscope__"
    )


def _user_line(path: str, exc: BaseException) -> int | None:
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename) == Path(path):
        return exc.lineno
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if Path(frame.f_code.co_filename) == Path(path):
            line = lineno
    return line


def _describe(path: str, exc: BaseException, stage: str) -> str:
    line = _user_line(path, exc)
    where = f"{path}:{line}" if line else path
    if is_out_of_memory(exc):
        return f"{where}: {memory_message('the program', memory_limit())}"
    # The whole message: libraries such as Equinox name the offending argument on a later
    # line. A one-line message keeps the stage on its line.
    detail = exception_text(exc)
    sep = "\n" if "\n" in detail else " "
    return f"{where}: {detail}{sep}(raised while {stage}); fix the program and load it again"


def _spec_entries(spec: Any) -> list:
    if isinstance(spec, PartitionSpec | tuple | list):
        entries = []
        for entry in spec:
            if entry is None:
                entries.append(None)
            elif isinstance(entry, str):
                entries.append(entry)
            elif isinstance(entry, tuple | list):
                entries.append([str(e) for e in entry])
            else:
                entries.append(str(entry))
        return entries
    raise _UserError(
        f"SPECS values must be jax.sharding.PartitionSpec (P('data', None)), not {type(spec).__name__}"
    )


def _read_defaults(path: str, ns: dict[str, Any]) -> tuple[dict[str, int] | None, dict[str, list]]:
    mesh = ns.get("MESH")
    if mesh is not None:
        if not isinstance(mesh, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 1
            for k, v in mesh.items()
        ):
            raise _UserError(
                f"{path}: MESH must be a dict of axis name -> size >= 1, like {{'data': 4, 'model': 2}}"
            )
        mesh = dict(mesh)
    specs = ns.get("SPECS") or {}
    if not isinstance(specs, dict):
        raise _UserError(f"{path}: SPECS must be a dict of argument name -> PartitionSpec")
    try:
        return mesh, {str(k): _spec_entries(v) for k, v in specs.items()}
    except _UserError as exc:
        raise _UserError(f"{path}: {exc}") from None


def lower_program(path: str, params: dict[str, str]) -> dict[str, Any]:
    """Import, trace and lower the program at ``path``; the worker's whole job."""
    started = time.perf_counter()
    try:
        ns = load_python_namespace(path, params)
    except SystemExit as exc:
        raise _UserError(
            f"{path}: the program called exit({exc.code}) while being imported; remove the call"
        ) from None
    except BaseException as exc:  # noqa: BLE001 - any failure of user code is reported
        raise _UserError(_describe(path, exc, "importing the program")) from None
    program = ns.get("PROGRAM")
    if program is None:
        raise _UserError(
            f"{path}: defines no PROGRAM; add `PROGRAM = <your function>` and "
            f"`EXAMPLE_ARGS = (...)` at module level"
        )
    if not callable(program):
        raise _UserError(
            f"{path}: PROGRAM is a {type(program).__name__}, not a function; set it to the function to shard"
        )
    args = ns.get("EXAMPLE_ARGS")
    if args is None:
        raise _UserError(
            f"{path}: defines no EXAMPLE_ARGS; add a tuple of arrays or jax.ShapeDtypeStruct, "
            f"one per argument of PROGRAM"
        )
    if not isinstance(args, tuple):
        args = (args,) if not isinstance(args, list) else tuple(args)
    kwargs = ns.get("EXAMPLE_KWARGS") or {}
    if not isinstance(kwargs, dict):
        raise _UserError(f"{path}: EXAMPLE_KWARGS must be a dict of keyword -> array")
    mesh, specs = _read_defaults(path, ns)
    jitted = program if hasattr(program, "trace") else jax.jit(program)
    try:
        if mesh:
            abstract = AbstractMesh(
                tuple(mesh.values()), tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh)
            )
            with jax.sharding.use_abstract_mesh(abstract):
                lowered = jitted.trace(*args, **kwargs).lower(lowering_platforms=("cpu",))
        else:
            lowered = jitted.trace(*args, **kwargs).lower(lowering_platforms=("cpu",))
        text = lowered.as_text(debug_info=True)
    except BaseException as exc:  # noqa: BLE001 - tracing runs user code
        raise _UserError(
            _describe(path, exc, "tracing and lowering PROGRAM with EXAMPLE_ARGS")
        ) from None
    return {
        "ok": True,
        "mlir_text": text,
        "mesh": mesh,
        "specs": specs,
        "seconds": time.perf_counter() - started,
    }


def main(argv: list[str]) -> int:
    """Worker entry point; always writes the result file unless the process dies."""
    path, params_json, out = argv
    try:
        result = lower_program(path, json.loads(params_json))
    except _UserError as exc:
        result = {"ok": False, "error": str(exc)}
    Path(out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
