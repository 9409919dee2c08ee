"""References the run worker makes from its own lowering of the program, where the
unsharded run beside it (``reference``) could not trace the program on one device.

- ``stripped_outputs``: the sharded run's lowered module with every sharding taken off
  (``unsharded.unsharded_module``), compiled for one device and run. The module is the
  program as it traced on the run's mesh, so a program that enters a mesh of its own, or
  shards on the devices of a mesh it built at import, still gets its unsharded outputs:
  only the shardings, which do not change what it computes, are gone.
- ``same_mesh_outputs``: for a program that uses shard_map (per-device code, whose
  result depends on the mesh's shape), the program compiled on the run's own mesh
  without the run's specs on its arguments (on Explicit axes moved to the run's
  shardings inside the program, where their types ask for them), and run on the same
  inputs.

``reference_outputs`` picks the reference a run compares with, and notes why there is
none where none could be made.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax._src import compiler
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import xla_client as xc
from jax.sharding import AxisType, NamedSharding, PartitionSpec
from jaxlib.mlir import ir

from shardscope.backend.program.traced_call import trace_on_mesh
from shardscope.backend.run.inputs import device_array, host_array
from shardscope.backend.run.reference import ReferenceFailed, ReferenceProcess, ReferenceThread
from shardscope.backend.run.unsharded import unsharded_module
from shardscope.backend.run.worker_failures import reference_words


def kept_arguments(lowered: Any, count: int) -> list[int]:
    """The flat arguments the lowered module takes, by index: ``jax.jit`` leaves one the
    program does not read out of it (``Lowered._lowering.compile_args['kept_var_idx']``
    in jax 0.10.2)."""
    lowering = getattr(lowered, "_lowering", None)
    kept = getattr(lowering, "compile_args", {}).get("kept_var_idx")
    return list(range(count)) if kept is None else sorted(kept)


def compile_alone(text: str, device: Any, options: dict[str, Any] | None = None) -> Any:
    """The module ``text`` compiled and loaded by XLA for ``device`` alone."""
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, 1)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        backend = device.client
        built = compiler.get_compile_options(
            num_replicas=1,
            num_partitions=1,
            device_assignment=np.array([device]).reshape(1, 1),
            env_options_overrides=dict(options) if options else None,
            backend=backend,
        )
        return compiler.backend_compile_and_load(
            backend, module, xc.DeviceList((device,)), built, []
        )


def stripped_outputs(
    lowered: Any, host: list[np.ndarray], device: Any, options: dict[str, Any] | None = None
) -> list[np.ndarray]:
    """The flat outputs of ``lowered`` without its shardings, on ``device`` alone, given
    ``host`` (every flat argument's data; a key array's as its key data, which is what
    the module takes); ``unsharded.ManualModule`` for a program that uses shard_map."""
    text = unsharded_module(lowered.as_text())
    executable = compile_alone(text, device, options)
    single = jax.sharding.SingleDeviceSharding(device)
    args = [jax.device_put(host[i], single) for i in kept_arguments(lowered, len(host))]
    pieces = executable.execute_sharded(args).disassemble_into_single_device_arrays()
    return [np.asarray(jax.block_until_ready(p[0])) for p in pieces]


def same_mesh_outputs(
    call: Any,
    leaves: list,
    host: list[np.ndarray],
    shardings: list,
    jmesh: jax.sharding.Mesh,
) -> list[np.ndarray]:
    """The flat outputs of the program (``call``: ``trace.program_call``'s) compiled on
    ``jmesh`` without the run's specs on its arguments (each placed as that compile takes
    it), run on ``host``. Where the run gives an
    argument a sharding on Explicit axes (``shardings``: the run's, None for none), the
    program takes it unsharded and moves it there first: on Explicit axes a sharding is
    part of the argument's type, which its shard_map's in_specs may ask for."""
    explicit = AxisType.Explicit in jmesh.axis_types
    moves = [s.spec if explicit and isinstance(s, NamedSharding) else None for s in shardings]
    plain = [jax.ShapeDtypeStruct(*_shape_dtype(leaf)) for leaf in leaves]

    def wrap(fn: Any) -> Any:
        if not any(m is not None for m in moves):
            return fn

        def moved(*args: Any, **kwargs: Any) -> Any:
            flat, tree = jax.tree.flatten((args, kwargs))
            flat = [
                x if m is None else jax.sharding.reshard(x, m)
                for x, m in zip(flat, moves, strict=True)
            ]
            args, kwargs = jax.tree.unflatten(tree, flat)
            return fn(*args, **kwargs)

        return moved

    traced = trace_on_mesh(call, jmesh, leaves=plain, wrap=wrap)
    with jax.set_mesh(jmesh):
        compiled = traced.lower().compile()
        replicated = NamedSharding(jmesh, PartitionSpec())
        taken = [
            replicated if s is None else s
            for s in compiled.in_tree.flatten_up_to(compiled.input_shardings)
        ]
        placed = [
            jax.device_put(device_array(h, leaf), s)
            for h, leaf, s in zip(host, leaves, taken, strict=True)
        ]
        args, kwargs = jax.tree.unflatten(compiled.in_tree, placed)
        out = jax.block_until_ready(compiled(*args, **kwargs))
    return [host_array(x) for x in jax.tree.leaves(out)]


def _shape_dtype(leaf: Any) -> tuple[tuple[int, ...], Any]:
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        return tuple(leaf.shape), leaf.dtype
    arr = np.asarray(leaf)
    return arr.shape, arr.dtype


# The note of a shard_map program's reference (``OwnReference.same_mesh``).
SAME_MESH = (
    "the reference ran the program on the same mesh without the run's specs on its "
    "arguments: its shard_map runs code per device, whose result depends on the mesh's shape"
)


def _has_host_callbacks(lowered: Any) -> bool:
    """Whether the module calls back into Python (``jax.debug.print``, ``pure_callback``):
    its calls name callbacks only ``jax.jit``'s own compile keeps alive."""
    lowering = getattr(lowered, "_lowering", None)
    if getattr(lowering, "compile_args", {}).get("host_callbacks"):
        return True
    return "callback" in lowered.as_text()


class OwnReference:
    """The references the worker can make from the sharded run's own lowering: the
    program's ``call`` and flat ``leaves``, their ``host`` data, the run's argument
    ``shardings``, its mesh and the ``lowered`` module; ``device`` runs the unsharded
    one, compiled with ``options``."""

    def __init__(
        self,
        lowered: Any,
        inputs: Any,
        shardings: list,
        jmesh: jax.sharding.Mesh,
        device: Any,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.lowered, self.inputs, self.shardings = lowered, inputs, shardings
        self.jmesh, self.device, self.options = jmesh, device, options

    def unsharded(self) -> list[np.ndarray]:
        """``stripped_outputs`` of the lowered module; ``ValueError`` for one that calls
        back into Python."""
        if _has_host_callbacks(self.lowered):
            raise ValueError("it calls back into Python, which only jax.jit's compile can run")
        return stripped_outputs(self.lowered, self.inputs.host, self.device, self.options)

    def same_mesh(self) -> list[np.ndarray]:
        """``same_mesh_outputs`` of the program on the run's mesh."""
        inputs = self.inputs
        return same_mesh_outputs(
            inputs.call, inputs.leaves, inputs.host, self.shardings, self.jmesh
        )


def reference_outputs(
    job: dict,
    manual: bool,
    unsharded: ReferenceProcess | ReferenceThread | None,
    deadline: float | None,
    notes: list[str],
    own: OwnReference,
) -> tuple[list | None, bool]:
    """The unsharded outputs to compare with (None: none) and whether they were kept from
    an earlier run; ``notes`` gets why there are none, or were computed afresh. A
    shard_map program's come from ``own.same_mesh``; where the unsharded run could not
    trace the program (it enters or pins a mesh of its own), from ``own.unsharded``."""
    if not job.get("reference", True):
        notes.append("no unsharded reference: not asked for")
        return None, False
    if manual:
        try:
            expected = own.same_mesh()
        except Exception as exc:  # noqa: BLE001 - user code runs here
            notes.append(f"no unsharded reference: {reference_words(exc, job.get('path'))}")
            return None, False
        notes.append(SAME_MESH)
        return expected, False
    expected = None
    try:
        expected = unsharded.outputs(deadline)
    except ReferenceFailed as exc:
        expected = _own_unsharded(own, exc, notes)
    if unsharded.refused is not None:
        notes.append(
            f"the unsharded outputs kept from an earlier run were refused "
            f"({unsharded.refused}) and computed afresh"
        )
    return expected, unsharded.kept


def _own_unsharded(own: OwnReference, failed: ReferenceFailed, notes: list[str]) -> list | None:
    """The unsharded outputs from the run's own lowering where the unsharded run raised
    (``failed``); None, with the note of why not, where that fails too."""
    if failed.raised:
        try:
            return own.unsharded()
        except Exception:  # noqa: BLE001 - the first failure says more
            pass
    notes.append(f"no unsharded reference: {failed}")
    return None
