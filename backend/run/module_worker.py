"""The module run worker: an annotated module compiled, run on seeded inputs, read back.

Run as ``python -m shardscope.backend.run.module_worker JOB OUT`` (a JSON worker, see
``isolation.json_worker``) on as many fake CPU devices as the mesh has. The job's ``module`` is
the program with the session's mesh and specs written on it (``propagation.annotate``),
so no Python of the program's runs. The worker:

- compiles it with XLA as the compile worker does (``compile.compile_module``: the mesh's
  devices in its device order, unsharded arguments and results left to propagation);
- makes seeded inputs of each argument's shape and dtype (``inputs.random_array``: the
  same seed gives the same inputs), puts each argument's shards on the devices by the
  sharding the executable gives its parameter, runs it once to warm up, then ``runs``
  timed runs. An argument or result whose sharding does not divide a dimension is held
  padded (``padding``): its inputs go in with zeros after them, its shards are read
  back without the padding;
- compiles the module without its shardings (``unsharded.unsharded_module``) for one
  device and runs it on the same inputs, for the error of each output;
- reports each device's shard of every argument and output, the compiled collectives
  (``hlo.hlo_collectives``), XLA's memory analysis and the HLO text, in the form the run
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
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.isolation.json_worker import json_worker_main
from shardscope.backend.isolation.thread_stacks import thread_stack_size
from shardscope.backend.run.compile import compile_module, memory
from shardscope.backend.run.inputs import SEED, random_array
from shardscope.backend.run.padding import pad, padded_shape, real_piece, tile_counts, unpad
from shardscope.backend.run.shards import ValueBudget, index_ranges, tensor_report
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
    """Compile the job's module on the mesh's CPU devices, run it on seeded inputs and
    read back each tensor's shards and the compiled collectives."""
    mesh = _set_up(job)
    laps = _Laps()
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
    laps.lap("compile")
    run = _SeededRun(executable, arg_types, int(job.get("seed", SEED)))
    out_shardings = _shardings(executable.get_output_shardings(), len(res_types), run.devices)
    laps.lap("inputs")
    pieces, times = run.timed(int(job.get("runs", 1)))
    laps.lap("run")
    outputs = [
        _assembled(shape, sharding, list(arrays))
        for (shape, _), sharding, arrays in zip(res_types, out_shardings, pieces, strict=True)
    ]
    notes: list[str] = []
    expected = _reference(job, text, run, notes)
    laps.lap("reference_run")
    tensors = _Tensors(mesh, job.get("values", True))
    out = tensors.outputs(outputs, [s for s, _ in res_types], out_shardings, expected, infos)
    arguments = tensors.arguments(_arg_names(job, len(arg_types)), run)
    laps.lap("shards")
    hlo = executable.get_hlo_text()
    assignment = [int(d.id) for d in run.local_devices]
    collectives = read_collectives(hlo, assignment, n)
    laps.lap("hlo_and_memory")
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
        "stages": laps.seconds,
        "device_assignment": assignment,
    }


def _set_up(job: dict) -> Mesh:
    """Set JAX up for the job's module, before anything starts its CPU client: as many
    devices as the mesh has, their threads' stacks sized for that count
    (``isolation.thread_stacks``); the job's mesh."""
    jax.config.update("jax_enable_compilation_cache", False)
    # A module's 64-bit arguments (torch_xla's scalars are f64) are put on the devices as
    # they are: without x64, jax.device_put makes an f64 array f32, which the executable
    # refuses.
    jax.config.update("jax_enable_x64", True)
    mesh = Mesh.from_json(job["mesh"])
    with contextlib.suppress(RuntimeError):  # started already (a caller in-process)
        jax.config.update("jax_num_cpu_devices", mesh.size)
        thread_stack_size(mesh.size)
    return mesh


class _Laps:
    """Seconds each stage of the job took, one after the other."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        """Close stage ``name``: the time since the previous stage ended."""
        now = time.perf_counter()
        self.seconds[name] = now - self._last
        self._last = now


class _SeededRun:
    """The compiled module's runs on seeded inputs of each argument's shape and dtype."""

    def __init__(self, executable: Any, arg_types: list[tuple[tuple, Any]], seed: int) -> None:
        self.executable = executable
        self.local_devices = list(executable.local_devices())
        self.devices = xc.DeviceList(tuple(self.local_devices))
        self.in_shardings = _shardings(
            executable.get_parameter_shardings(), len(arg_types), self.devices
        )
        self.host = [
            random_array(shape, dtype, i, seed) for i, (shape, dtype) in enumerate(arg_types)
        ]

    def place(self) -> list:
        """The inputs placed on the devices as the executable takes them: padded where
        the parameter's sharding does not divide them (``padding``)."""
        return [
            jax.device_put(pad(h, _padded(h.shape, s)), s)
            for h, s in zip(self.host, self.in_shardings, strict=True)
        ]

    def execute(self, args: list) -> list:
        """One run on placed ``args``: each output's pieces, one per device."""
        pieces = self.executable.execute_sharded(args).disassemble_into_single_device_arrays()
        return jax.block_until_ready(pieces)

    def timed(self, runs: int) -> tuple[list, list[float]]:
        """The first run's output pieces, and the seconds each of ``runs`` later runs
        took. Each run gets freshly placed inputs: a module may donate its arguments'
        buffers (torch_xla's in-place updates alias them to outputs)."""
        pieces = self.execute(self.place())
        times = []
        for _ in range(max(1, runs)):
            args = self.place()
            jax.block_until_ready(args)
            started = time.perf_counter()
            self.execute(args)
            times.append(time.perf_counter() - started)
        return pieces, times


def _reference(job: dict, text: str, run: _SeededRun, notes: list[str]) -> list | None:
    """The unsharded module's outputs on the same inputs, to compare with; None, with a
    note saying why, where there are none."""
    if not job.get("reference", True):
        notes.append("no unsharded reference: not asked for")
        return None
    try:
        return _unsharded_outputs(text, run.host, run.local_devices[0])
    except ManualModule as exc:
        notes.append(f"no unsharded reference: {exc}, whose result depends on the mesh")
        return None


class _Tensors:
    """The report of each tensor's shards over ``mesh``, sharing one budget of values
    (none without ``values``)."""

    def __init__(self, mesh: Mesh, values: bool) -> None:
        self.mesh = mesh
        self.values = ValueBudget() if values else None

    def outputs(
        self,
        arrays: list,
        shapes: list[tuple[int, ...]],
        shardings: list,
        expected: list | None,
        infos: list[str],
    ) -> list[dict]:
        """The report of each output (of its real ``shapes``: the arrays may be padded),
        with its name in the return value (``path``)."""
        wanted = expected if expected is not None else [None] * len(arrays)
        return [
            {
                **_tensor(f"result[{i}]", array, shape, sharding, self.mesh, want, self.values),
                "path": info,
            }
            for i, (array, shape, sharding, want, info) in enumerate(
                zip(arrays, shapes, shardings, wanted, infos, strict=True)
            )
        ]

    def arguments(self, names: list[str], run: _SeededRun) -> list[dict]:
        """The report of each argument, placed afresh, its seeded values to compare with."""
        pieces = zip(names, run.place(), run.in_shardings, run.host, strict=True)
        return [
            _tensor(name, array, data.shape, sharding, self.mesh, data, self.values)
            for name, array, sharding, data in pieces
        ]


def _arg_names(job: dict, count: int) -> list[str]:
    """Each argument's name: the job's, else its SSA name (``%arg3``)."""
    names = list(job.get("arg_names") or [])
    return names + [f"%arg{i}" for i in range(len(names), count)]


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


def _padded(shape: tuple[int, ...], sharding: Any) -> tuple[int, ...]:
    """The shape the executable holds an array of ``shape`` in under ``sharding``: each
    dimension the sharding does not divide padded to whole tiles."""
    return padded_shape(shape, tile_counts(sharding, len(shape)))


def _assembled(shape: tuple[int, ...], sharding: Any, pieces: list) -> Any:
    """One output as a jax.Array from its ``pieces``, one per device: of its padded shape
    (``_padded``) where ``sharding`` does not divide ``shape``, each piece put back as its
    whole tile, zeros after its real part."""
    padded = _padded(shape, sharding)
    if padded == tuple(shape):
        return jax.make_array_from_single_device_arrays(shape, sharding, pieces)
    # jaxlib 0.10.2 gives a piece whose tile holds padding the shape of its real part,
    # while NumPy reads it as the whole tile: each is cut to its real part and padded
    # again on the host.
    where = sharding.devices_indices_map(padded)
    tiles = []
    for piece in pieces:
        (device,) = piece.devices()
        ranges = index_ranges(where[device], padded)
        real, _ = real_piece(ranges, shape)
        data = unpad(np.asarray(piece), [b - a for a, b in real])
        tiles.append(jax.device_put(pad(data, [b - a for a, b in ranges]), device))
    return jax.make_array_from_single_device_arrays(padded, sharding, tiles)


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
    shape: tuple[int, ...],
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
    return tensor_report(name, array, spec, hlo, expected, values, tuple(shape))


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is written: tearing JAX's runtime down would only keep the parent waiting.
    os._exit(code)
