"""The compile worker: the annotated module compiled with XLA, its collectives and memory.

Run as ``python -m shardscope.backend.run.compile JOB OUT`` (a JSON worker, see
``isolation.json_worker``) on as many fake CPU devices as the mesh has. The job's ``module`` is
the program with the session's mesh and specs written on it (``propagation.annotate``);
XLA runs Shardy's propagation and its SPMD partitioner on it as ``jax.jit`` would, so no
Python runs. The report holds the compiled module's text, its collectives
(``hlo.hlo_collectives``, device ids in the executable's assignment) and XLA's memory
analysis of its CPU buffer assignment. The worker starts its CPU client before the job
comes, its threads' stacks sized for the device count (``isolation.thread_stacks``): a
2,048-device client fits the memory limit.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax._src import compiler, xla_bridge
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import xla_client as xc
from jaxlib.mlir import ir

from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.isolation.json_worker import json_worker_main
from shardscope.backend.isolation.thread_stacks import size_thread_stacks
from shardscope.backend.propagation import sdyread
from shardscope.backend.run import early_stop

# The fields of ``compiled.memory_analysis()`` (a ``CompiledMemoryStats``) reported, by
# the name they are given (``peak`` is ``peak_memory_in_bytes``, the others
# ``NAME_size_in_bytes``); jaxlib 0.10.2 on CPU fills these device-side ones, its host_*
# fields stay 0.
MEMORY_FIELDS = ("argument", "output", "alias", "temp", "generated_code", "peak")


# XLA's debug options for this compile: LLVM generates the machine code at -O0 (XLA's
# default level is 2). The report reads the optimized module and its buffer assignment,
# never the machine code, and those come out the same: as_text() byte for byte and every
# memory_analysis() field (generated_code is 0 at either level in jaxlib 0.10.2's CPU
# executables), checked against jax.jit on several programs in
# tests/backend/run/test_compile.py. The CPU compile of example:transformer?layers=24 on
# 8 devices takes 23 s of CPU time here instead of 56 s.
CODEGEN_OPTIONS: dict[str, Any] = {"xla_backend_optimization_level": 0}
# Where the report goes (the worker's OUT argument), and who writes it: the compile once
# finished, or the early stop (``early_stop``) once the final module is dumped.
_OUT: list[str] = []
_REPORTING = threading.Lock()


def main(argv: list[str]) -> int:
    """Worker entry point: ``JOB OUT``. The CPU client starts while the parent prepares
    the job, on the device count the worker was started with, its threads' stacks sized
    for it first (``isolation.thread_stacks``)."""
    if size_thread_stacks():
        xla_bridge.get_backend("cpu")
    _OUT[:] = argv[1:2]
    return json_worker_main(argv, compile_job, failure="the XLA compile failed")


def compile_job(job: dict, scratch: Path) -> dict:
    """Compile the job's ``module`` on ``devices`` CPU devices; the report for the parent."""
    del scratch
    jax.config.update("jax_enable_compilation_cache", False)
    n = int(job["devices"])
    started = time.perf_counter()
    early = job.get("early")
    watching, finished = None, threading.Event()
    if early:
        order = [int(i) for i in job.get("device_order") or range(n)]
        watching = early_stop.watch(
            early,
            lambda text: _report_early(text, order, n, time.perf_counter() - started, finished),
        )
    try:
        executable = compile_module(
            job["module"], n, job.get("device_order"), Path(early["dump"]) if early else None
        )
    finally:
        with _REPORTING:  # an early report being written ends the process meanwhile
            finished.set()
        if watching is not None:
            watching.set()
    compile_s = time.perf_counter() - started
    text = executable.get_hlo_text()  # what ``compiled.as_text()`` returns
    assignment = [int(d.id) for d in executable.local_devices()]
    return {
        "ok": True,
        "hlo_text": text,
        "collectives": read_collectives(text, assignment, n),
        "memory": memory(executable),
        "compile_s": compile_s,
        "device_assignment": assignment,
    }


def _report_early(
    text: str, assignment: list[int], n: int, seconds: float, finished: threading.Event
) -> None:
    """Report the dumped final module ``text`` and end the worker, its compile unfinished
    (unless the compile ``finished`` first and reports itself)."""
    with _REPORTING:
        if finished.is_set() or not _OUT:
            return
        _write_early(text, assignment, n, seconds)


def _write_early(text: str, assignment: list[int], n: int, seconds: float) -> None:
    report = {
        "ok": True,
        "hlo_text": text,
        "collectives": read_collectives(text, assignment, n),
        "memory": None,
        "compile_s": seconds,
        "device_assignment": assignment,
        "early_stopped": True,
    }
    Path(_OUT[0]).write_text(json.dumps(report))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def compile_module(
    text: str, n: int, device_order: Sequence[int] | None = None, dump: Path | None = None
) -> Any:
    """The module ``text`` compiled and loaded by XLA for ``n`` CPU devices, the mesh's
    devices laid out in ``device_order`` (device id at each row-major mesh position;
    None: 0, 1, 2...); its ``local_devices()`` are that assignment. ``dump``: a folder
    XLA dumps its modules into as text (``early_stop``)."""
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, n)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        backend = xla_bridge.get_backend("cpu")
        # The mesh's devices in its order, as jax.jit assigns a Mesh's devices: XLA's
        # replica groups count positions in this assignment, which the report turns into
        # device ids (checked here: a mesh over devices 0,2,4,6,1,3,5,7 lowers to the same
        # sdy.mesh as 0..7, and only the executable's device assignment differs).
        by_id = {int(d.id): d for d in backend.devices()}
        order = [int(i) for i in device_order or range(n)]
        devices = [by_id[i] for i in order if i in by_id]
        if len(devices) != n or len(set(order)) != n:
            raise RuntimeError(
                f"the worker has {len(by_id)} CPU devices, the mesh {n} in order {order}"
            )
        options = compiler.get_compile_options(
            num_replicas=1,
            num_partitions=n,
            device_assignment=np.array(devices).reshape(1, n),
            backend=backend,
        )
        # As jax.jit does: arguments and results without a sharding take what
        # propagation gives them (otherwise XLA would replicate them).
        main_func = _main(module)
        build = options.executable_build_options
        build.allow_spmd_sharding_propagation_to_parameters = _unannotated(main_func, "arg_attrs")
        build.allow_spmd_sharding_propagation_to_output = _unannotated(main_func, "res_attrs")
        for key, value in CODEGEN_OPTIONS.items():
            setattr(build.debug_options, key, value)
        if dump is not None:
            early_stop.set_dump(build.debug_options, dump)
        return compiler.backend_compile_and_load(
            backend, module, xc.DeviceList(tuple(devices)), options, []
        )


def _main(module: ir.Module) -> ir.Operation:
    return next(
        op.operation
        for op in module.body.operations
        if op.operation.name == "func.func"
        and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main"
    )


def _unannotated(func: ir.Operation, key: str) -> list[bool]:
    """For each argument (``arg_attrs``) or result (``res_attrs``): has it no sharding?"""
    func_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    count = len(func_type.inputs if key == "arg_attrs" else func_type.results)
    shardy = sdyread.arg_attr(func, key, "sdy.sharding")
    gspmd = sdyread.arg_attr(func, key, "mhlo.sharding")

    def given(found: list, i: int) -> bool:
        return i < len(found) and found[i] is not None

    return [not (given(shardy, i) or given(gspmd, i)) for i in range(count)]


def memory(executable: Any) -> dict[str, int]:
    """Bytes per device of XLA's buffer assignment (``get_compiled_memory_stats``, what
    ``compiled.memory_analysis()`` returns), by ``MEMORY_FIELDS`` name."""
    stats = executable.get_compiled_memory_stats()
    return {
        key: int(
            getattr(stats, "peak_memory_in_bytes" if key == "peak" else f"{key}_size_in_bytes")
        )
        for key in MEMORY_FIELDS
    }


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is written: tearing JAX's runtime down would only keep the parent waiting.
    os._exit(code)
