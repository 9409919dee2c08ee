"""The GSPMD compile worker: compile with ``use_shardy_partitioner`` off, report shardings.

Run as ``python -m shardscope.backend.gspmd.compile JOB OUT`` (a JSON worker, see
``isolation.jobs``) on as many fake CPU devices as the mesh has. A ``module`` job compiles
the GSPMD-annotated module ``gspmd.rewrite`` wrote; a ``python`` job traces the user's
program again with JAX's GSPMD lowering, its arguments and results sharded by their specs.
Either way the HLO is dumped after the ``sharding-propagation`` pass, and the report holds
the executable's input and output shardings, every sharded instruction of that dump and
the collectives of the partitioned, optimized module (``hlo.hlo_collectives``, device ids in
the executable's assignment).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import jax
import numpy as np
from jax._src import compiler, xla_bridge
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import xla_client as xc
from jax.sharding import AxisType, NamedSharding
from jaxlib.mlir import ir

from shardscope.backend.hlo.dump import dump_options, dumped_after
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.hlo.instructions import HloInstruction, read_hlo_instructions
from shardscope.backend.isolation.json_worker import json_worker_main
from shardscope.backend.isolation.thread_stacks import size_thread_stacks
from shardscope.backend.program.lower import load_python_namespace
from shardscope.backend.program.trace import constrain_results
from shardscope.backend.propagation import sdyread
from shardscope.backend.sharding.spec import parse_spec

_PASS = "sharding-propagation"


def main(argv: list[str]) -> int:
    """Worker entry point: ``JOB OUT``; the CPU client's thread stacks sized for its
    device count first (``isolation.thread_stacks``)."""
    size_thread_stacks()
    return json_worker_main(argv, compile_job, failure="GSPMD compile failed")


def compile_job(job: dict, scratch: Path) -> dict:
    """Compile the job's module or program with GSPMD; the report for the parent."""
    jax.config.update("jax_enable_compilation_cache", False)
    jax.config.update("jax_use_shardy_partitioner", False)
    dump = scratch / "dump"
    if job.get("kind") == "module":
        return _compile_module(job["module"], dump, job.get("device_order"))
    return _compile_python(job, dump)


def _compile_module(text: str, dump: Path, device_order: list[int] | None) -> dict:
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        n = ir.IntegerAttr(module.operation.attributes["mhlo.num_partitions"]).value
        backend = xla_bridge.get_backend("cpu")
        # The mesh's devices in its order, as jax.jit assigns them: the module's device
        # numbers are positions in this assignment.
        by_id = {int(d.id): d for d in backend.devices()}
        order = [int(i) for i in device_order or range(n)]
        if len(order) != n or len(set(order)) != n or not set(order) <= set(by_id):
            raise RuntimeError(
                f"the worker has {len(by_id)} CPU devices, the mesh {n} in order {order}"
            )
        devices = [by_id[i] for i in order]
        options = compiler.get_compile_options(
            num_replicas=1,
            num_partitions=n,
            device_assignment=np.array(devices).reshape(1, n),
            env_options_overrides=dump_options(dump, _PASS),
            backend=backend,
        )
        # As jax.jit does: values without a sharding take what propagation gives them
        # (otherwise XLA would replicate every unannotated argument and result).
        main = next(
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main"
        )
        build = options.executable_build_options
        build.allow_spmd_sharding_propagation_to_parameters = _unannotated(main, "arg_attrs")
        build.allow_spmd_sharding_propagation_to_output = _unannotated(main, "res_attrs")
        executable = compiler.backend_compile_and_load(
            backend, module, xc.DeviceList(tuple(devices)), options, []
        )
    assignment = [int(d.id) for d in executable.local_devices()]
    return {
        "ok": True,
        "inputs": [str(xc.HloSharding.from_proto(s)) for s in executable.get_parameter_shardings()],
        "outputs": [str(xc.HloSharding.from_proto(s)) for s in executable.get_output_shardings()],
        "instructions": _dumped_instructions(dump),
        # ``get_hlo_text`` is what ``compiled.as_text()`` returns.
        "collectives": read_collectives(executable.get_hlo_text(), assignment, n),
    }


def _unannotated(func: ir.Operation, key: str) -> list[bool]:
    """For each argument (``arg_attrs``) or result (``res_attrs``): has it no sharding?"""
    func_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    count = len(func_type.inputs if key == "arg_attrs" else func_type.results)
    shardings = sdyread.arg_attr(func, key, "mhlo.sharding")
    return [i >= len(shardings) or shardings[i] is None for i in range(count)]


def _dumped_instructions(dump: Path) -> list[HloInstruction]:
    return read_hlo_instructions(dumped_after(dump, _PASS))


def _jax_mesh(
    mesh: dict[str, int], own: object, device_order: list[int] | None = None
) -> jax.sharding.Mesh:
    """The program's own concrete ``MESH`` where it is the session's, devices in the same
    order (its ``shard_map`` calls name it and must see it as the context mesh), else one
    of Auto axes over the devices in ``device_order`` (None: 0, 1, 2...)."""
    n = math.prod(mesh.values())
    order = list(device_order or range(n))
    if (
        isinstance(own, jax.sharding.Mesh)
        and dict(own.shape) == dict(mesh)
        and [int(d.id) for d in own.devices.flat] == order
    ):
        return own
    by_id = {int(d.id): d for d in jax.devices()}
    devices = np.array([by_id[i] for i in order], dtype=object).reshape(tuple(mesh.values()))
    return jax.sharding.Mesh(devices, tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh))


def _compile_python(job: dict, dump: Path) -> dict:
    ns = load_python_namespace(job["path"], job["params"])
    own = ns.get("MESH")
    jmesh = _jax_mesh(job["mesh"], own, job.get("device_order"))
    leaves, treedef = jax.tree.flatten(ns["EXAMPLE_ARGS"])
    new = []
    for leaf, name in zip(leaves, job["arg_names"], strict=True):
        # On the program's own mesh an argument keeps the sharding its example carries.
        sharding = getattr(leaf, "sharding", None) if jmesh is own else None
        if name in job["specs"]:
            spec = parse_spec(job["specs"][name]).padded(len(leaf.shape))
            sharding = NamedSharding(jmesh, spec.to_jax())
        new.append(jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding))
    args = jax.tree.unflatten(treedef, new)
    kwargs = ns.get("EXAMPLE_KWARGS") or {}
    program = ns["PROGRAM"]
    result_specs = {int(k): v for k, v in job.get("result_specs", {}).items()}
    if result_specs:
        program = constrain_results(program, result_specs, jmesh)
    with jax.set_mesh(jmesh):
        compiled = (
            jax.jit(program)
            .lower(*args, **kwargs)
            .compile(compiler_options=dump_options(dump, _PASS))
        )
    instructions = _dumped_instructions(dump)
    assignment = [int(d.id) for d in compiled.runtime_executable().local_devices()]
    devices = len(assignment)
    in_leaves = jax.tree.leaves(compiled.input_shardings[0])
    out_leaves = jax.tree.leaves(compiled.output_shardings)
    out_shapes = [o.shape for o in jax.tree.leaves(compiled.out_info)]
    return {
        "ok": True,
        "inputs": [
            str(s._to_xla_hlo_sharding(len(leaf.shape)))
            for s, leaf in zip(in_leaves, leaves, strict=True)
        ],
        "outputs": [
            str(s._to_xla_hlo_sharding(len(shape)))
            for s, shape in zip(out_leaves, out_shapes, strict=True)
        ],
        "instructions": instructions,
        "collectives": read_collectives(compiled.as_text(), assignment, devices),
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
