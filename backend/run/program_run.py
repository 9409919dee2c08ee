"""Compile, run and read back a loaded Python program in the run worker
(``worker``): ``run_loaded(job, ...)``, as named stages.

The stages: the devices the mesh lays out over (``_devices_for``), the program traced and
lowered on the job's shardings (``_lower``), the unsharded reference beside it
(``_unsharded``), the compile, the inputs placed (``_place``), the timed runs
(``_timed_runs``), the reference's outputs (``worker_reference.reference_outputs``), each tensor's shards
(``_Tensors``) and the compiled collectives (``_collectives``). Each stage's time goes to
``Laps``.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding

from shardscope.backend.errors import MeshError
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.program.lower import load_python_namespace, shard_map_axis_types
from shardscope.backend.program.trace import abstract_mesh, constrain_results
from shardscope.backend.program.traced_call import trace_on_mesh
from shardscope.backend.run import distributed
from shardscope.backend.run.distributed import HostJob
from shardscope.backend.run.inputs import device_array, is_concrete
from shardscope.backend.run.lowering import lower_on
from shardscope.backend.run.reference import (
    REFERENCE_CPU_OPTIONS,
    ProgramInputs,
    ReferenceProcess,
    ReferenceThread,
    program_inputs,
    shape_dtype,
)
from shardscope.backend.run.shards import MAX_TOTAL_VALUES, ValueBudget, tensor_report
from shardscope.backend.run.worker_failures import CallbackFailure, shard_map_kept_mesh
from shardscope.backend.run.worker_reference import OwnReference, reference_outputs
from shardscope.backend.sharding.mesh import AxisType as MeshAxisType
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec, parse_spec


class RunRefused(Exception):
    """The job cannot run here; the message is the user's one line."""


class Laps:
    """Seconds each stage of the worker took, one after the other, in order. With a
    ``stage_file`` each stage's name is added to it, a line each, as it ends (a run on
    several hosts watches them: ``hosts_run``)."""

    def __init__(self, stage_file: str | None = None) -> None:
        # Wall-clock time (``time.time``) when the job began, for the parent to put the
        # worker's start-up (interpreter, imports) before it.
        self.started = time.time()
        self._last = time.perf_counter()
        self.seconds: dict[str, float] = {}
        self._stages = Path(stage_file) if stage_file else None

    def lap(self, name: str) -> None:
        """Close stage ``name``: the time since the previous stage ended."""
        now = time.perf_counter()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - self._last
        self._last = now
        if self._stages is not None:
            with self._stages.open("a") as f:
                f.write(name + "\n")


def too_many_devices(mesh: Mesh, attached: int, platform: str) -> str:
    """The one-line refusal of a mesh larger than the attached devices."""
    devices = "devices are" if attached != 1 else "device is"
    most = f"{attached} devices" if attached != 1 else "1 device"
    return (
        f"the mesh {mesh.describe()} needs {mesh.size} devices but {attached} "
        f"{platform.upper()} {devices} attached: use a mesh of at most {most} (--mesh), or "
        f"run where {mesh.size} are attached"
    )


def _leaf_names(job: dict, call: Any, leaves: list) -> list[str | None]:
    """The load's name of each flat argument, None for one the program does not use:
    ``jax.jit`` leaves an unused argument out of the lowered module (and so out of the
    load's names) but still takes it."""
    names = job["arg_names"]
    if len(names) == len(leaves):
        return list(names)
    plain = [jax.ShapeDtypeStruct(*shape_dtype(leaf)) for leaf in leaves]
    # The arguments the lowering kept, by flat index (``Lowered._lowering.compile_args``
    # in jax 0.10.2).
    lowering = getattr(call.trace(leaves=plain).lower(), "_lowering", None)
    kept = sorted(getattr(lowering, "compile_args", {}).get("kept_var_idx", ()))
    if len(kept) != len(names):
        raise RunRefused(
            f"{job['path']}: EXAMPLE_ARGS has {len(leaves)} arrays but the program has "
            f"{len(names)} arguments; load the program again"
        )
    out: list[str | None] = [None] * len(leaves)
    for index, name in zip(kept, names, strict=True):
        out[index] = name
    return out


@dataclass
class _Devices:
    """The devices a run's mesh lays out over: all of them (every host's, on several), and
    on several hosts, this host and each device's number (``distributed``)."""

    devices: list
    host: HostJob | None
    numbers: dict

    @property
    def platform(self) -> str:
        """The devices' platform: ``cpu``, ``gpu``, ``tpu``."""
        return self.devices[0].platform


def run_loaded(
    job: dict,
    ns: dict | None = None,
    laps: Laps | None = None,
    inputs: ProgramInputs | None = None,
    reference: ReferenceProcess | None = None,
    deadline: float | None = None,
) -> dict:
    """Compile, run and read back a loaded program (``job``: ``runner.plan_run``'s).
    ``reference``: the unsharded run forked at the job's start, not yet started unless
    ``inputs`` are given (``_from_source`` started it); it is given up at ``deadline``
    (``_deadline``)."""
    laps = laps or Laps()
    if ns is None:
        ns = load_python_namespace(job["path"], job["params"])
        laps.lap("import_program")
    mesh = Mesh.from_json(job["mesh"])
    if inputs is None:
        inputs = _inputs_started(job, ns, mesh, reference)
    on = _devices_for(mesh, HostJob.from_job(job))
    jmesh = jax_mesh(mesh, on.devices, _own_axis_types(ns), numbered=on.host is not None)
    names = _leaf_names(job, inputs.call, inputs.leaves)
    lowered, jmesh = _lower(job, ns, inputs, names, jmesh)
    manual = "sdy.manual_computation" in lowered.as_text()
    laps.lap("trace_and_lower")
    unsharded = _unsharded(job, reference, manual, inputs, mesh)
    compiled, compile_s = _compile(lowered, jmesh)
    laps.lap("compile")
    placed, in_shardings = _place(job, compiled, jmesh, inputs, on.host)
    out, times = _timed_runs(job, compiled, placed, unsharded)
    laps.lap("run")
    notes: list[str] = []
    device = jax.local_devices()[0]
    options = REFERENCE_CPU_OPTIONS if device.platform == "cpu" else None
    own = OwnReference(lowered, inputs, in_shardings, jmesh, device, options)
    expected, kept = reference_outputs(job, manual, unsharded, deadline, notes, own)
    laps.lap("reference_run")
    tensors = _Tensors(on, job.get("values", True))
    outputs = tensors.outputs(compiled, out, expected)
    arguments = tensors.arguments(names, placed, in_shardings, inputs.host)
    laps.lap("shards")
    collectives, text = _collectives(compiled, jmesh, mesh, on)
    memory = _memory(compiled)
    laps.lap("hlo_and_memory")
    return {
        "ok": True,
        "host": 0 if on.host is None else on.host.index,
        "platform": on.platform,
        "device_count": mesh.size,
        "devices_attached": len(on.devices),
        "outputs": outputs,
        "arguments": arguments,
        "collectives": collectives,
        "compile_s": compile_s,
        "run_s": statistics.median(times),
        "reference_kept": kept,
        "run_times": times,
        "memory": memory,
        "notes": notes,
        "concrete_inputs": _concrete_names(names, inputs.leaves),
        "hlo_text": text,
    }


def _concrete_names(names: list[str | None], leaves: list) -> list[str]:
    """The arguments whose data the program file gave (not shapes to seed)."""
    return [
        name
        for name, leaf in zip(names, leaves, strict=True)
        if name is not None and is_concrete(leaf)
    ]


def _inputs_started(
    job: dict, ns: dict, mesh: Mesh, reference: ReferenceProcess | None
) -> ProgramInputs:
    """The program's inputs for the job's seed, the forked reference started on them."""
    inputs = program_inputs(ns, job["seed"])
    if reference is not None and job.get("reference", True):
        reference.start(mesh.axis_names, job["seed"], inputs.concrete())
    return inputs


def _compile(lowered: Any, jmesh: jax.sharding.Mesh) -> tuple[Any, float]:
    """The lowered program compiled on ``jmesh``, and the compile's wall time."""
    with jax.set_mesh(jmesh):
        started = time.perf_counter()
        compiled = lowered.compile()
        return compiled, time.perf_counter() - started


def _devices_for(mesh: Mesh, host: HostJob | None) -> _Devices:
    """The devices the run's mesh lays out over; ``RunRefused`` where there are too few
    (or, on several hosts, other than the mesh's size)."""
    devices = jax.devices() if host is None else distributed.global_devices()
    if len(devices) < mesh.size:
        raise RunRefused(too_many_devices(mesh, len(devices), devices[0].platform))
    if host is not None and len(devices) != mesh.size:
        raise RunRefused(
            f"the mesh {mesh.describe()} needs {mesh.size} devices but the "
            f"{host.count} hosts have {len(devices)} in all: give each host "
            f"{mesh.size // host.count} (the job's cpu_devices is the mesh's size)"
        )
    numbers = distributed.device_numbers(devices) if host is not None else {}
    return _Devices(devices, host, numbers)


def _lower(
    job: dict, ns: dict, inputs: ProgramInputs, names: list[str | None], jmesh: jax.sharding.Mesh
) -> tuple[Any, jax.sharding.Mesh]:
    """The program traced and lowered on the job's argument and result shardings, as the
    load traced it (``trace.program_call``): the load's own trace reused where that gives
    the same module (``run.lowering``); and the mesh it is lowered on. A shard_map given a
    mesh of its own with the run's axes of other types (``jax.make_mesh``'s Explicit
    beside a ``MESH`` dict's Auto) has the run's mesh take its types, as the load did."""
    try:
        return _lower_on(job, ns, inputs, names, jmesh), jmesh
    except ValueError as exc:
        # A reused trace runs under the run's abstract mesh, which a shard_map given a
        # mesh of its own (device kind and all) refuses: trace afresh on the run's mesh,
        # its axes of the shard_map mesh's types.
        types = shard_map_axis_types(exc)
        if types is None or set(types) != set(jmesh.axis_names):
            kept = shard_map_kept_mesh(job["path"], exc, Mesh.from_json(job["mesh"]).describe())
            raise exc if kept is None else RunRefused(kept) from None
    kinds = tuple(getattr(AxisType, types[name]) for name in jmesh.axis_names)
    jmesh = jax.sharding.Mesh(jmesh.devices, jmesh.axis_names, axis_types=kinds)
    return _lower_on(job, ns, inputs, names, jmesh, fresh=True), jmesh


def _lower_on(
    job: dict,
    ns: dict,
    inputs: ProgramInputs,
    names: list[str | None],
    jmesh: jax.sharding.Mesh,
    *,
    fresh: bool = False,
) -> Any:
    """``_lower`` on ``jmesh`` (``fresh``: traced afresh under it)."""
    explicit = AxisType.Explicit in jmesh.axis_types
    structs = []
    for leaf, name in zip(inputs.leaves, names, strict=True):
        shape, dtype = shape_dtype(leaf)
        sharding = None
        if name is not None and name in job["specs"]:
            spec = parse_spec(job["specs"][name]).padded(len(shape))
            sharding = NamedSharding(jmesh, spec.to_jax())
        elif explicit and isinstance(getattr(leaf, "sharding", None), NamedSharding):
            # On Explicit axes an argument's sharding is part of its type, as the load
            # traced it: its own, moved onto the run's mesh.
            sharding = NamedSharding(jmesh, leaf.sharding.spec)
        structs.append(jax.ShapeDtypeStruct(shape, dtype, sharding=sharding))
    result_specs = {int(k): v for k, v in job.get("result_specs", {}).items()}
    wrap = None
    if result_specs:
        wrap = lambda jitted: constrain_results(jitted, result_specs, jmesh)  # noqa: E731
    if fresh:
        traced = trace_on_mesh(inputs.call, jmesh, leaves=structs, wrap=wrap)
        with jax.set_mesh(jmesh):
            return traced.lower()
    own = {"program": ns.get("PROGRAM"), "own_mesh": ns.get("MESH")}
    return lower_on(inputs.call, structs, jmesh, wrap=wrap, **own)


def _unsharded(
    job: dict,
    reference: ReferenceProcess | None,
    manual: bool,
    inputs: ProgramInputs,
    mesh: Mesh,
) -> ReferenceProcess | ReferenceThread | None:
    """The unsharded reference run: the forked one, none for a program that uses
    shard_map, or on an accelerator a thread that traces, lowers and compiles it beside
    the sharded compile. It starts after anything forks this process (``_from_source``'s
    propagation): a fork beside a compile hung. ``compile_s`` is the sharded compile's
    wall time with the reference compiling beside it."""
    if manual and reference is not None:
        reference.stop()
        return None
    if reference is None and job.get("reference", True) and not manual:
        return ReferenceThread(inputs, mesh.axis_names, jax.local_devices()[0])
    return reference


def _place(
    job: dict, compiled: Any, jmesh: jax.sharding.Mesh, inputs: ProgramInputs, host: HostJob | None
) -> tuple[list, list]:
    """The inputs placed on the devices as the compiled program takes them, and their
    shardings; on several hosts, once every host is ready to run."""
    # An argument the program does not use has no sharding (None): it is placed replicated.
    in_shardings = [
        NamedSharding(jmesh, jax.sharding.PartitionSpec()) if s is None else s
        for s in compiled.in_tree.flatten_up_to(compiled.input_shardings)
    ]
    pieces = zip(inputs.host, inputs.leaves, in_shardings, strict=True)
    if host is None:
        return [jax.device_put(device_array(h, leaf), s) for h, leaf, s in pieces], in_shardings
    # Every host holds the same seeded data; each fills its own devices' pieces.
    placed = [distributed.place(h, leaf, s) for h, leaf, s in pieces]
    # Every host starts its runs together: one behind waits here, not in a collective.
    distributed.barrier("compiled", float(job.get("timeout") or 300.0))
    return placed, in_shardings


def _timed_runs(
    job: dict,
    compiled: Any,
    placed: list,
    unsharded: ReferenceProcess | ReferenceThread | None,
) -> tuple[Any, list[float]]:
    """The program's outputs, and the seconds each of the job's timed runs took after
    the first; a host callback that raises ends the worker (``CallbackFailure``)."""
    p_args, p_kwargs = jax.tree.unflatten(compiled.in_tree, placed)
    stop = unsharded.stop if unsharded is not None else (lambda: None)
    with CallbackFailure(job["path"], stop).installed():
        out = jax.block_until_ready(compiled(*p_args, **p_kwargs))
        times = []
        for _ in range(max(1, int(job["runs"]))):
            started = time.perf_counter()
            jax.block_until_ready(compiled(*p_args, **p_kwargs))
            times.append(time.perf_counter() - started)
    return out, times


class _Tensors:
    """The report of each tensor's shards, sharing one budget of values (the hosts' shards
    share one run's)."""

    def __init__(self, on: _Devices, values: bool) -> None:
        self.on = on
        self.values = None
        if values:
            host = on.host
            self.values = (
                ValueBudget() if host is None else ValueBudget(MAX_TOTAL_VALUES // host.count)
            )

    def one(self, name: str, arr: Any, sharding: Any, expected: Any) -> dict:
        """The report of one tensor."""
        return _tensor(name, arr, sharding, expected, self.values, self.on.host, self.on.numbers)

    def arguments(
        self, names: list[str | None], placed: list, shardings: list, data: list
    ) -> list[dict]:
        """The report of each argument the program uses (one it does not use is not in
        it), its own values to compare with."""
        return [
            self.one(name, arr, sharding, h)
            for name, arr, sharding, h in zip(names, placed, shardings, data, strict=True)
            if name is not None
        ]

    def outputs(self, compiled: Any, out: Any, expected: list | None) -> list[dict]:
        """The report of each output, with JAX's own name of it (its ``jax.result_info``:
        ``result[0]['w']``)."""
        flat = jax.tree_util.tree_flatten_with_path(out)[0]
        out_shardings = jax.tree.leaves(
            compiled.output_shardings, is_leaf=lambda x: isinstance(x, jax.sharding.Sharding)
        )
        return [
            {
                **self.one(
                    f"result[{i}]", arr, sharding, None if expected is None else expected[i]
                ),
                "path": "result" + jax.tree_util.keystr(path),
            }
            for i, ((path, arr), sharding) in enumerate(zip(flat, out_shardings, strict=True))
        ]


def _collectives(
    compiled: Any, jmesh: jax.sharding.Mesh, mesh: Mesh, on: _Devices
) -> tuple[list, str]:
    """The compiled program's collectives and its HLO text; on several hosts, host 0's
    read for all (in device numbers), none from the others."""
    text = compiled.as_text()
    host = on.host
    if host is None:
        assignment = [int(d.id) for d in compiled.runtime_executable().local_devices()]
    elif host.index == 0:
        assignment = distributed.partition_numbers(compiled, jmesh, on.numbers)
    else:
        return [], ""
    return read_collectives(text, assignment, mesh.size), text


def _own_axis_types(ns: dict) -> dict[str, str]:
    """Axis name -> type (``Explicit``...) of the program's own ``MESH`` (a ``Mesh`` or an
    ``AbstractMesh``; a dict's axes are Auto); without one, of the mesh the program set
    at import (``jax.set_mesh(mesh)`` as a global setter), as the load traced it."""
    try:
        own = abstract_mesh(ns.get("MESH"))
    except Exception:  # noqa: BLE001 - a malformed MESH is the lowering's error
        return {}
    if own is None and "MESH" not in ns:
        current = jax.sharding.get_abstract_mesh()
        own = current if current.axis_names else None
    if own is None:
        return {}
    return {
        name: str(t).split(".")[-1] for name, t in zip(own.axis_names, own.axis_types, strict=True)
    }


def jax_mesh(
    mesh: Mesh, devices: list, own_types: dict[str, str] | None = None, *, numbered: bool = False
) -> jax.sharding.Mesh:
    """The mesh over the first ``mesh.size`` attached devices (``numbered``: over
    ``devices`` by device number, as a run on several hosts numbers them). An axis the
    mesh leaves Auto takes its type in the program's own ``MESH`` (``own_types``), as the
    load traced it: shard_map and Explicit shardings in the code name a mesh of those
    types."""
    own_types = own_types or {}
    types = tuple(
        own_types.get(name, "Auto") if t is MeshAxisType.AUTO else t.value
        for name, t in zip(mesh.axis_names, mesh.axis_types, strict=True)
    )
    typed = Mesh(mesh.axes, mesh.device_order, types)
    if numbered:
        return distributed.jax_mesh(typed, devices)
    try:
        return typed.to_jax(devices[: mesh.size])
    except MeshError as exc:
        raise RunRefused(str(exc)) from None


def _spec_text(sharding: Any, ndim: int) -> tuple[str, str]:
    """The sharding as spec text (``data,_``) and as HloSharding text."""
    try:
        hlo = str(sharding._to_xla_hlo_sharding(ndim))
    except Exception:  # noqa: BLE001 - a sharding kind without an HLO form
        hlo = ""
    if isinstance(sharding, NamedSharding):
        return Spec.from_jax(sharding.spec).padded(ndim).format(), hlo
    return "", hlo


def _tensor(
    name: str,
    array: Any,
    sharding: Any,
    expected: np.ndarray | None,
    values: ValueBudget | None,
    host: HostJob | None = None,
    numbers: dict[int, int] | None = None,
) -> dict:
    """An argument's or output's report entry; on a host of several, of the shards it
    holds, by device number (``distributed.host_tensor``)."""
    spec, hlo = _spec_text(sharding, array.ndim)
    if host is None:
        return tensor_report(name, array, spec, hlo, expected, values)
    entry = tensor_report(name, array, spec, hlo, None, values)
    return distributed.host_tensor(entry, array, expected, numbers or {}, host.index)


def _memory(compiled: Any) -> dict[str, int]:
    """Bytes per device from XLA's memory analysis: arguments, outputs, temporaries..."""
    try:
        stats = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - a backend without the analysis
        return {}
    if stats is None:
        return {}
    out = {}
    for key in (
        "argument_size_in_bytes",
        "output_size_in_bytes",
        "alias_size_in_bytes",
        "temp_size_in_bytes",
        "generated_code_size_in_bytes",
    ):
        value = getattr(stats, key, None)
        if value is not None:
            out[key.removesuffix("_size_in_bytes")] = int(value)
    return out
