"""Worker process: import a user's program, trace and lower it, report as JSON.

Run as ``python -m shardscope.backend.program.lower PATH PARAMS_JSON OUT_JSON [DEVICES]``.
The result file holds either ``{"ok": true, "mlir_text": ..., "mesh": ..., "specs": ...}``
or ``{"ok": false, "error": "<message naming file, line and fix>"}`` (plus ``"devices": N``
when the program needs N fake devices to import). A crash or a hang leaves no file; the
parent turns that into its own message.
"""

from __future__ import annotations

import json
import math
import os
import re
import runpy
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from shardscope.backend.isolation.json_worker import exception_text
from shardscope.backend.isolation.limits import is_out_of_memory, memory_limit, memory_message
from shardscope.backend.program.trace import (
    MeshTooLarge,
    TraceError,
    abstract_mesh,
    lower_function,
    shard_map_axis_types,
)


class UserError(Exception):
    """The program cannot be loaded as written; the message is the user's one line."""

    # Set when the program built a mesh larger than the worker's devices: a worker with
    # this many can import it.
    devices: int | None = None


# The worker's fake CPU devices unless the loader asks for more: enough for the meshes
# programs usually build at import (``jax.make_mesh((2, 4), ...)``); a program that builds
# a larger one is loaded again with as many as its error names.
DEFAULT_DEVICES = 8
_TOO_FEW_DEVICES = re.compile(
    r"Number of devices \d+ must be >= the product of mesh_shape (\([\d, ]*\))"
)


def load_python_namespace(path: str, params: dict[str, str] | None = None) -> dict[str, Any]:
    """Execute a program file and return its globals (``PROGRAM``, ``EXAMPLE_ARGS``...).

    ``params`` become the global ``SHARDSCOPE_PARAMS``. Only for worker processes: this
    runs arbitrary user code.
    """
    return runpy.run_path(
        path, init_globals={"SHARDSCOPE_PARAMS": dict(params or {})}, run_name="__shardscope__"
    )


def program_line(path: str, exc: BaseException) -> int | None:
    """The innermost line of the program file at ``path`` in ``exc``'s traceback (a
    syntax error's own line); None where the traceback never passes through it."""
    here = os.path.abspath(path)
    if isinstance(exc, SyntaxError) and exc.filename and os.path.abspath(exc.filename) == here:
        return exc.lineno
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if os.path.abspath(frame.f_code.co_filename) == here:
            line = lineno
    return line


def _describe(path: str, exc: BaseException, stage: str) -> str:
    line = program_line(path, exc)
    where = f"{path}:{line}" if line else path
    if is_out_of_memory(exc):
        return f"{where}: {memory_message('the program', memory_limit())}"
    # The whole message: libraries such as Equinox name the offending argument on a later
    # line. A one-line message keeps the stage on its line.
    detail = exception_text(exc)
    sep = "\n" if "\n" in detail else " "
    return f"{where}: {detail}{sep}(raised while {stage}); fix the program and load it again"


def _read_defaults(path: str, ns: dict[str, Any]) -> tuple[Any, Any]:
    mesh = ns.get("MESH")
    try:
        abstract_mesh(mesh)
    except MeshTooLarge as exc:
        raise UserError(f"{path}: MESH: {exc}") from None
    except TraceError:
        raise UserError(
            f"{path}: MESH must be a dict of axis name -> size >= 1, like {{'data': 4, 'model': 2}}, "
            f"a jax.sharding.Mesh or an AbstractMesh"
        ) from None
    specs = ns.get("SPECS")
    if specs is not None and not isinstance(
        specs, dict | tuple | list | PartitionSpec | NamedSharding
    ):
        raise UserError(
            f"{path}: SPECS must be a dict of argument name -> PartitionSpec, or a tuple with "
            f"one PartitionSpec (or pytree of them) per argument as jax.jit's in_shardings"
        )
    return mesh, specs


def devices_needed(exc: BaseException) -> int | None:
    """The device count a ``jax.make_mesh`` that found too few devices asked for."""
    match = _TOO_FEW_DEVICES.search(str(exc))
    if match is None:
        return None
    return math.prod(int(n) for n in re.findall(r"\d+", match.group(1)))


def _typed(mesh: Any, types: dict[str, str]) -> jax.sharding.Mesh | None:
    """A ``MESH`` dict's axes with ``types``, over this worker's devices, where it has
    exactly those axes and the worker enough devices: a shard_map given a mesh of its own
    compares it with the context's, device kind included, which a dict's abstract mesh
    does not have."""
    if not isinstance(mesh, dict) or list(mesh) != list(types):
        return None
    kinds = tuple(getattr(AxisType, types[name]) for name in mesh)
    try:
        return jax.make_mesh(tuple(mesh.values()), tuple(mesh), axis_types=kinds)
    except ValueError:  # too few devices
        return None


def _lower_on_program_mesh(program: Any, args: tuple, kwargs: dict, mesh: Any, specs: Any) -> Any:
    """``lower_function`` on ``mesh``; where a shard_map's own mesh has the axes of a
    ``MESH`` dict with other types, on those types (the program's mesh, as it runs)."""
    try:
        return lower_function(program, args, kwargs, mesh=mesh, specs=specs)
    except ValueError as exc:
        typed = _typed(mesh, shard_map_axis_types(exc) or {})
        if typed is None:
            raise
    return lower_function(program, args, kwargs, mesh=typed, specs=specs)


def lower_program(path: str, params: dict[str, str]) -> dict[str, Any]:
    """Import, trace and lower the program at ``path``; the worker's whole job."""
    started = time.perf_counter()
    return lower_namespace(path, import_program(path, params), started)


def import_program(path: str, params: dict[str, str]) -> dict[str, Any]:
    """The globals of the program at ``path``, imported with ``params``; ``UserError``
    (one line naming the file) for a program that raises or exits while importing."""
    try:
        return load_python_namespace(path, params)
    except SystemExit as exc:
        raise UserError(
            f"{path}: the program called exit({exc.code}) while being imported; remove the call"
        ) from None
    except BaseException as exc:  # noqa: BLE001 - any failure of user code is reported
        error = UserError(_describe(path, exc, "importing the program"))
        error.devices = devices_needed(exc)
        raise error from None


def lower_namespace(path: str, ns: dict[str, Any], started: float) -> dict[str, Any]:
    """Trace and lower the ``PROGRAM`` of an imported program's globals ``ns`` on its
    ``EXAMPLE_ARGS``, ``MESH`` and ``SPECS``; the load's result (``seconds`` counted from
    ``started``, a ``time.perf_counter`` reading). ``UserError`` for what does not fit."""
    program = ns.get("PROGRAM")
    if program is None:
        raise UserError(
            f"{path}: defines no PROGRAM; add `PROGRAM = <your function>` and "
            f"`EXAMPLE_ARGS = (...)` at module level"
        )
    if not callable(program):
        raise UserError(
            f"{path}: PROGRAM is a {type(program).__name__}, not a function; set it to the function to shard"
        )
    args = ns.get("EXAMPLE_ARGS")
    if args is None:
        raise UserError(
            f"{path}: defines no EXAMPLE_ARGS; add a tuple of arrays or jax.ShapeDtypeStruct, "
            f"one per argument of PROGRAM"
        )
    if not isinstance(args, tuple):
        args = (args,) if not isinstance(args, list) else tuple(args)
    kwargs = ns.get("EXAMPLE_KWARGS") or {}
    if not isinstance(kwargs, dict):
        raise UserError(f"{path}: EXAMPLE_KWARGS must be a dict of keyword -> array")
    mesh, specs = _read_defaults(path, ns)
    try:
        traced = _lower_on_program_mesh(program, args, kwargs, mesh, specs)
    except TraceError as exc:
        # The mesh was checked above: the problem is in SPECS.
        raise UserError(
            f"{path}: SPECS must be a dict of argument name -> PartitionSpec, or one entry "
            f"per argument as jax.jit's in_shardings: {exc}"
        ) from None
    except BaseException as exc:  # noqa: BLE001 - tracing runs user code
        raise UserError(
            _describe(path, exc, "tracing and lowering PROGRAM with EXAMPLE_ARGS")
        ) from None
    return {
        "ok": True,
        "mlir_text": traced.mlir_text,
        "mesh": traced.mesh,
        "specs": traced.specs,
        "warnings": list(traced.warnings),
        "seconds": time.perf_counter() - started,
    }


def main(argv: list[str]) -> int:
    """Worker entry point; always writes the result file unless the process dies.

    ``argv`` is ``PATH PARAMS_JSON OUT [DEVICES]``: the program sees DEVICES fake CPU
    devices (``DEFAULT_DEVICES`` without it). A program that builds a larger mesh at import
    gets ``"devices": N`` in its error result, N being what its mesh needs.
    """
    path, params_json, out = argv[:3]
    devices = int(argv[3]) if len(argv) > 3 else DEFAULT_DEVICES
    try:
        # Before anything initialises a backend; overrides a device count in XLA_FLAGS.
        jax.config.update("jax_num_cpu_devices", devices)
    except RuntimeError:
        pass  # raised once a backend is up (main called in-process): its devices stay
    try:
        result = lower_program(path, json.loads(params_json))
    except UserError as exc:
        result = {"ok": False, "error": str(exc)}
        if exc.devices is not None and exc.devices > devices:
            result["devices"] = exc.devices
    Path(out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
