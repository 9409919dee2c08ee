"""The module run worker: an annotated module compiled, run on seeded inputs, read back.

Run as ``python -m shardscope.backend.run.module_worker JOB OUT`` (a JSON worker, see
``isolation.jobs``) on as many fake CPU devices as the mesh has. The job's ``module`` is
the program with the session's mesh and specs written on it (``propagation.annotate``),
so no Python of the program's runs. The worker:

- compiles it with XLA as the compile worker does (``compile.compile_module``: the mesh's
  devices in its device order, unsharded arguments and results left to propagation);
- makes seeded inputs of each argument's shape and dtype (``inputs.random_array``: the
  same seed gives the same inputs), puts each argument's shards on the devices by the
  sharding the executable gives its parameter, runs it once to warm up, then ``runs``
  timed runs;
- compiles the module without its shardings (``unsharded.unsharded_module``) for one
  device and runs it on the same inputs, for the error of each output;
- reports each device's shard of every argument and output, the compiled collectives
  (``hlo.collectives``), XLA's memory analysis and the HLO text, in the form the run
  worker reports a Python program's run (``report.report_result`` reads both).
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax._src import sharding_impls
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import xla_client as xc
from jaxlib.mlir import ir

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.hlo.collectives import read_collectives
from shardscope.backend.isolation.json_worker import json_worker_main
from shardscope.backend.isolation.thread_stacks import thread_stack_size
from shardscope.backend.run.compile import compile_module, memory
from shardscope.backend.run.inputs import SEED, random_array
from shardscope.backend.run.shards import ValueBudget, tensor_report
from shardscope.backend.run.unsharded import ManualModule, unsharded_module
from shardscope.backend.sharding.hlo_text import spec_from_hlo_sharding
from shardscope.backend.sharding.mesh import Mesh

FAILURE = "the module run failed"

# StableHLO element types whose NumPy dtype is named otherwise.
_FLOATS = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16"}
_COMPLEX = {"complex<f32>": "complex64", "complex<f64>": "complex128"}
_INT = re.compile(r"(?P<unsigned>u?)i(?P<bits>8|16|32|64)")


def main(argv: list[str]) -> int:
    """Worker entry point: ``JOB OUT``. The worker starts (and imports JAX) before its
    program is loaded: the CPU device count comes with the job's mesh."""
    return json_worker_main(argv, run_module_job, failure=FAILURE)


# The JAX settings a module run changes, put back after it (a caller may run it in its
# own process).
_SETTINGS = ("jax_enable_compilation_cache", "jax_enable_x64", "jax_use_shardy_partitioner")


def run_module_job(job: dict, scratch: Path) -> dict:
    """Compile and run the job's module; the report for the parent."""
    del scratch
    saved = {key: getattr(jax.config, key) for key in _SETTINGS}
    try:
        return _run_module_job(job)
    finally:
        for key, value in saved.items():
            jax.config.update(key, value)


def _run_module_job(job: dict) -> dict:
    jax.config.update("jax_enable_compilation_cache", False)
    # A module's 64-bit arguments (torch_xla's scalars are f64) are put on the devices as
    # they are: without x64, jax.device_put makes an f64 array f32, which the executable
    # refuses.
    jax.config.update("jax_enable_x64", True)
    n = Mesh.from_json(job["mesh"]).size
    # Before anything starts JAX's CPU client: as many devices as the mesh has, their
    # threads' stacks sized for that count (``isolation.thread_stacks``).
    with contextlib.suppress(RuntimeError):  # started already (a caller in-process)
        jax.config.update("jax_num_cpu_devices", n)
        thread_stack_size(n)
    stages: dict[str, float] = {}
    last = [time.perf_counter()]

    def lap(name: str) -> None:
        now = time.perf_counter()
        stages[name] = now - last[0]
        last[0] = now

    mesh = Mesh.from_json(job["mesh"])
    n = mesh.size
    attached = len(jax.devices("cpu"))
    if attached < n:
        return {
            "ok": False,
            "error": f"the mesh {mesh.describe()} needs {n} devices but the worker has "
            f"{attached} CPU devices: use a mesh of at most {attached} devices (--mesh)",
        }
    text = job["module"]
    if job.get("partitioner") == "gspmd":
        jax.config.update("jax_use_shardy_partitioner", False)
    arg_types, res_types, infos = _signature(text)
    started = time.perf_counter()
    executable = compile_module(text, n, list(mesh.device_order))
    compile_s = time.perf_counter() - started
    lap("compile")
    devices = list(executable.local_devices())
    device_list = xc.DeviceList(tuple(devices))
    in_shardings = _shardings(executable.get_parameter_shardings(), len(arg_types), device_list)
    out_shardings = _shardings(executable.get_output_shardings(), len(res_types), device_list)
    seed = int(job.get("seed", SEED))
    host = [random_array(shape, dtype, i, seed) for i, (shape, dtype) in enumerate(arg_types)]
    lap("inputs")

    def place() -> list:
        return [jax.device_put(h, s) for h, s in zip(host, in_shardings, strict=True)]

    def execute(args: list) -> list:
        pieces = executable.execute_sharded(args).disassemble_into_single_device_arrays()
        return jax.block_until_ready(pieces)

    # Each run gets freshly placed inputs: a module may donate its arguments' buffers
    # (torch_xla's in-place updates alias them to outputs).
    pieces = execute(place())
    times = []
    for _ in range(max(1, int(job.get("runs", 1)))):
        args = place()
        jax.block_until_ready(args)
        started = time.perf_counter()
        execute(args)
        times.append(time.perf_counter() - started)
    lap("run")
    outputs = [
        jax.make_array_from_single_device_arrays(tuple(shape), sharding, list(arrays))
        for (shape, _), sharding, arrays in zip(res_types, out_shardings, pieces, strict=True)
    ]

    notes: list[str] = []
    expected: list[np.ndarray] | None = None
    if not job.get("reference", True):
        notes.append("no unsharded reference: not asked for")
    else:
        try:
            expected = _unsharded_outputs(text, host, devices[0])
        except ManualModule as exc:
            notes.append(f"no unsharded reference: {exc}, whose result depends on the mesh")
    lap("reference_run")

    values = ValueBudget() if job.get("values", True) else None
    names = list(job.get("arg_names") or [])
    names += [f"%arg{i}" for i in range(len(names), len(arg_types))]
    out = [
        {
            **_tensor(
                f"result[{i}]",
                array,
                sharding,
                mesh,
                None if expected is None else expected[i],
                values,
            ),
            "path": infos[i],
        }
        for i, (array, sharding) in enumerate(zip(outputs, out_shardings, strict=True))
    ]
    arguments = [
        _tensor(name, array, sharding, mesh, data, values)
        for name, array, sharding, data in zip(names, place(), in_shardings, host, strict=True)
    ]
    lap("shards")
    hlo = executable.get_hlo_text()
    assignment = [int(d.id) for d in devices]
    collectives = read_collectives(hlo, assignment, n)
    lap("hlo_and_memory")
    return {
        "ok": True,
        "platform": "cpu",
        "device_count": n,
        "devices_attached": attached,
        "outputs": out,
        "arguments": arguments,
        "collectives": collectives,
        "compile_s": compile_s,
        "run_s": statistics.median(times),
        "run_times": times,
        "reference_kept": False,
        "memory": memory(executable),
        "notes": notes,
        "concrete_inputs": [],
        "hlo_text": hlo,
        "stages": stages,
        "device_assignment": assignment,
    }


def _signature(text: str) -> tuple[list[tuple[tuple, Any]], list[tuple[tuple, Any]], list[str]]:
    """The shape and dtype of each argument and result of the module's ``main``, and each
    result's name in the return value (its ``jax.result_info``; empty where none)."""
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        main = next(
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main"
        )
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        args = [_shape_dtype(t, f"argument {i}") for i, t in enumerate(ftype.inputs)]
        results = [_shape_dtype(t, f"result {i}") for i, t in enumerate(ftype.results)]
        infos = [""] * len(results)
        if "res_attrs" in main.attributes:
            for i, d in enumerate(ir.ArrayAttr(main.attributes["res_attrs"])):
                entries = ir.DictAttr(d)
                if "jax.result_info" in entries:
                    info = ir.StringAttr(entries["jax.result_info"]).value
                    infos[i] = info if info.startswith("result") else ""
    return args, results, infos


def _shape_dtype(t: ir.Type, what: str) -> tuple[tuple[int, ...], Any]:
    """The shape and NumPy dtype of a static tensor type; ``ShardscopeError`` otherwise."""
    if t.typeid != ir.RankedTensorType.static_typeid:
        raise ShardscopeError(
            f"the module's {what} is a {t}, not a tensor: a module run makes inputs for "
            f"tensor arguments only; run the program it came from instead"
        )
    tensor = ir.RankedTensorType(t)
    if not tensor.has_static_shape:
        raise ShardscopeError(
            f"the module's {what} has the dynamic shape {t}: export the module with "
            f"static shapes to run it"
        )
    element = str(tensor.element_type)
    m = _INT.fullmatch(element)
    if element == "i1":
        name = "bool"
    elif m:
        name = f"{'uint' if m['unsigned'] else 'int'}{m['bits']}"
    else:
        name = _FLOATS.get(element) or _COMPLEX.get(element) or element.lower()
    try:
        dtype = np.dtype(jax.numpy.dtype(name))
    except TypeError:
        raise ShardscopeError(
            f"the module's {what} has element type {element}, for which no seeded input "
            f"is made: run the program it came from instead"
        ) from None
    return tuple(tensor.shape), dtype


def _shardings(given: Any, count: int, devices: xc.DeviceList) -> list:
    """The executable's parameter (or output) shardings as JAX shardings over its devices;
    replicated where XLA gives none (one device)."""
    if not given:
        return [sharding_impls.GSPMDSharding.get_replicated(devices)] * count
    return [sharding_impls.GSPMDSharding(devices, s) for s in given]


def _unsharded_outputs(text: str, host: list[np.ndarray], device: Any) -> list[np.ndarray]:
    """The module without its shardings, compiled for ``device`` alone and run on the
    same inputs: its outputs."""
    executable = compile_module(unsharded_module(text), 1, [int(device.id)])
    args = [jax.device_put(h, jax.sharding.SingleDeviceSharding(device)) for h in host]
    pieces = executable.execute_sharded(args).disassemble_into_single_device_arrays()
    return [np.asarray(jax.block_until_ready(p[0])) for p in pieces]


def _tensor(
    name: str,
    array: Any,
    sharding: Any,
    mesh: Mesh,
    expected: np.ndarray | None,
    values: ValueBudget | None,
) -> dict:
    hlo = str(sharding._to_xla_hlo_sharding(array.ndim))
    try:
        spec = spec_from_hlo_sharding(hlo, mesh, array.ndim).format()
    except ShardscopeError:
        spec = ""  # a layout no spec over this mesh gives (a device order of its own)
    return tensor_report(name, array, spec, hlo, expected, values)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is written: tearing JAX's runtime down would only keep the parent waiting.
    os._exit(code)
