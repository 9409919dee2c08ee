"""HLO modules as StableHLO text: the import worker for torch_xla captures.

Run as ``python -m shardscope.backend.program.hlo_import JOB OUT`` (a JSON worker, see
``isolation.json_worker``). The job lists ``.hlo.pb`` files XLA dumped (``--xla_dump_hlo_as_proto``);
each holds an ``HloProto`` whose field 1 is the ``HloModuleProto``. jaxlib's
``hlo_to_stablehlo`` turns that into a StableHLO module (MLIR bytecode) with the shardings
as ``mhlo.sharding`` on arguments and results and ``custom_call @Sharding`` on marked
values, and each op's metadata as its location: the op name, then the call stack XLA kept
(``XLA_HLO_DEBUG=1``) as call sites, innermost first. The report holds each module's text
with those locations, as ``jax.jit(f).lower(...).as_text(debug_info=True)`` prints them.
It runs apart from the caller because the dumps are the script's, and a converter that
crashes on one must not take the command down.
"""

from __future__ import annotations

import sys
from pathlib import Path

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import MAX_MODULE_BYTES, read_bytes
from shardscope.backend.isolation.json_worker import json_worker_main
from shardscope.backend.program.capture_file import FOLDER_FIX


def module_proto(data: bytes) -> bytes:
    """The ``HloModuleProto`` in a dumped ``HloProto`` (field 1, length-delimited); the
    bytes themselves where they are a module already (no field 1 holds one)."""
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 2:
            length, pos = _varint(data, pos)
            if field == 1:
                return data[pos : pos + length]
            pos += length
        elif wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"not an HLO proto (wire type {wire} at byte {pos})")
    raise ValueError("not an HLO proto (no module in field 1)")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("not an HLO proto (it ends inside a number)")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("not an HLO proto (a number of over 64 bits)")


def stablehlo_text(data: bytes) -> str:
    """The StableHLO text, with locations, of a dumped ``HloProto`` (or module proto).

    Only jaxlib is imported, not jax: the context registers the dialects jax's own
    ``make_ir_context`` registers (jaxlib's upstream ones, Shardy's, MHLO's and CHLO's),
    and the worker starts in a fifth of the time."""
    from jaxlib import _jax
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import chlo, mhlo, sdy

    bytecode = _jax.mlir.hlo_to_stablehlo(module_proto(data))
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    sdy.register_dialect(context)
    mhlo.register_mhlo_dialect(context)
    chlo.register_dialect(context)
    with context:
        module = ir.Module.parse(bytecode)
        return module.operation.get_asm(enable_debug_info=True)


def import_job(job: dict, scratch: Path) -> dict:
    """Convert each of the job's ``protos`` (paths); ``modules`` holds a text or an error
    per path."""
    del scratch
    out = []
    for path in job["protos"]:
        try:
            data = read_bytes(path, MAX_MODULE_BYTES, FOLDER_FIX, what="torch_xla's graph")
            out.append({"text": stablehlo_text(data)})
        except ShardscopeError as exc:  # its own line names the file and the fix
            out.append({"error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - each dump is converted or says why not
            out.append({"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"})
    return {"ok": True, "modules": out}


if __name__ == "__main__":
    sys.exit(json_worker_main(sys.argv[1:], import_job, failure="the HLO import failed"))
