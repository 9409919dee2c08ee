"""The run worker: compile a program with ``jax.jit`` on a real mesh, run it, read it back.

Run as ``python -m shardscope.backend.run.worker JOB OUT`` (a JSON worker, see
``isolation.jobs``). The job names the program file, its parameters, the mesh, the spec
text of each named argument and result, the flat argument names, the seed and how many
timed runs. The worker:

- builds a ``jax.sharding.Mesh`` over the attached devices (an accelerator's when JAX
  finds one, else the fake CPU devices the runner asked for) and refuses a mesh larger
  than them;
- traces and compiles ``PROGRAM`` as the load lowered it (``trace.program_call``: an
  ``nnx.jit`` program on its split state, an ``eqx.filter_jit`` one as Equinox splits
  it) with each named argument's ``NamedSharding`` (unnamed arguments unspecified, so
  the compiler chooses, as ``jax.jit`` does) and each named result constrained to its
  spec;
- runs it on seeded random inputs (or the arrays the program file gives) placed as the
  executable wants them: once to warm up, then ``runs`` timed runs;
- runs the same function unsharded, on one device, for the error of each output;
- reports each device's shard of every argument and output, the compiled collectives
  (``hlo.collectives``), the executable's per-device memory, the HLO text and the
  seconds each stage took (``stages``).

A ``source`` job (``run.source``, the CLI's ``run``) names only the program file, the
mesh and specs the user gave: the worker loads the program itself first (as the load
worker does) and predicts its collectives (``propagation``), so one process imports JAX.

A job with a ``distributed`` entry is one host of a run on several (``run --hosts``,
``hosts_run`` starts them): it joins JAX's distributed runtime before the program's
import, lays the mesh out over every host's devices by device number, places inputs
from its own copy of them, waits for the other hosts before its runs, and reports the
shards it holds (``run.distributed``); host 0 alone reads the collectives and predicts
them. Each stage's name goes to the job's ``stage_file`` as it ends, for the parent to
watch.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding

from shardscope.backend.errors import MeshError, ShardscopeError
from shardscope.backend.hlo.collectives import read_collectives
from shardscope.backend.isolation.json_worker import json_worker_main
from shardscope.backend.isolation.limits import is_out_of_memory
from shardscope.backend.isolation.thread_stacks import size_thread_stacks
from shardscope.backend.program.load import lowered_program
from shardscope.backend.program.lower import (
    DEFAULT_DEVICES,
    UserError,
    import_program,
    load_python_namespace,
    lower_namespace,
)
from shardscope.backend.program.trace import abstract_mesh, constrain_results
from shardscope.backend.run import distributed
from shardscope.backend.run.distributed import HostJob
from shardscope.backend.run.inputs import SEED, device_array, is_concrete
from shardscope.backend.run.lowering import lower_on
from shardscope.backend.run.reference import (
    REFERENCE_SHARE,
    ProgramInputs,
    ReferenceFailed,
    ReferenceProcess,
    ReferenceThread,
    own_mesh,
    program_inputs,
    shape_dtype,
)
from shardscope.backend.run.shards import MAX_TOTAL_VALUES, ValueBudget, tensor_report
from shardscope.backend.sharding.mesh import AxisType as MeshAxisType
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec, parse_spec


class RunRefused(Exception):
    """The job cannot run here; the message is the user's one line."""


# Where this worker writes its report (``main``'s ``OUT``), for ``CallbackFailure``.
_REPORT: list[Path] = []


def main(argv: list[str]) -> int:
    """Worker entry point: ``JOB OUT``; on fake CPU devices, the CPU client's thread
    stacks sized for their count first (``isolation.thread_stacks``)."""
    size_thread_stacks()
    _REPORT[:] = [Path(argv[1])] if len(argv) > 1 else []
    return json_worker_main(argv, run_job, failure="the run failed")


# What JAX logs, with the exception, when a host callback of the program raises.
_CALLBACK_FAILED = (
    "jax.pure_callback failed",
    "jax.io_callback failed",
    "jax.debug.callback failed",
)
_CALLBACK_LOGGERS = ("jax._src.callback", "jax._src.debugging")


class CallbackFailure(logging.Handler):
    """Ends the worker at the first host callback of the program that raises, with the
    program's own error as its report.

    JAX logs the callback's exception and hands XLA an error on that device; on the CPU
    the other devices then wait for it at their next collective until XLA's rendezvous
    gives up and aborts the process (60 s on this machine, for a 2-device all-reduce)."""

    def __init__(self, path: str, stop: Callable[[], None]) -> None:
        super().__init__(logging.ERROR)
        self.path, self.stop = path, stop

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() not in _CALLBACK_FAILED or not record.exc_info:
            return
        exc = record.exc_info[1]
        if exc is None or not _REPORT:
            return
        report = {"ok": False, "error": failure_line(self.path, exc)}
        part = _REPORT[0].with_suffix(".part")
        part.write_text(json.dumps(report))
        os.replace(part, _REPORT[0])
        with contextlib.suppress(Exception):
            self.stop()
        sys.stderr.flush()
        os._exit(0)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """While the block runs, the callbacks' loggers report here."""
        loggers = [logging.getLogger(name) for name in _CALLBACK_LOGGERS]
        for logger in loggers:
            logger.addHandler(self)
        try:
            yield
        finally:
            for logger in loggers:
                logger.removeHandler(self)


def run_job(job: dict, scratch: Path) -> dict:
    """Compile and run the job's program; the report for the parent."""
    laps = Laps(job.get("stage_file"))
    if job.get("pid_file"):
        # For ``runner.Cancel``: it kills this worker's process group (led by its relay,
        # ``relay.split_off_worker``), or, if it asked before this line, leaves
        # ``cancel_file`` for the check below.
        Path(job["pid_file"]).write_text(str(os.getpgrp()))
        if Path(job["cancel_file"]).exists():
            return {"ok": False, "error": "the run was cancelled"}
    jax.config.update("jax_enable_compilation_cache", False)
    # The worker may have started before its program was loaded (``runner.execute``):
    # the CPU device count and the program's folder come with the job. JAX reads the
    # count when it first asks for devices, which nothing has done yet.
    source = job.get("kind") == "source"
    devices = job.get("cpu_devices") or (DEFAULT_DEVICES if source else None)
    host = HostJob.from_job(job)
    # One host of several: its share of the devices (a guess until a source job's
    # program names its mesh, ``_from_source``), set as it joins the runtime below.
    per_host = max(1, int(devices) // host.count) if host is not None else None
    if host is None:
        jax.config.update("jax_num_cpu_devices", int(devices))
    os.chdir(job["cwd"])
    sys.path[0] = job["cwd"]
    if job.get("kind") == "reshard":
        return _reshard(job)
    reference = None
    on_cpu = os.environ.get("JAX_PLATFORMS") == "cpu"
    if job.get("reference", True) and on_cpu and hasattr(os, "fork"):
        # Forked now, before anything here starts JAX's backend (``reference``); elsewhere
        # the reference is a thread (``ReferenceThread``).
        given = Mesh.from_json(job["mesh"]).axis_names if job.get("mesh") else None
        reference = ReferenceProcess.fork(job["path"], job["params"], given, scratch)
    try:
        if host is not None:
            # After the fork (the runtime starts threads) and before the program's import,
            # which may ask for devices.
            distributed.join(host, per_host)
            laps.lap("initialize")
        if source:
            report = _from_source(job, laps, reference)
        else:
            report = _run(job, laps=laps, reference=reference, deadline=_deadline(job))
    except (RunRefused, ShardscopeError) as exc:
        # Bad input (a mesh, a spec): every host of a run on several refuses it alike,
        # which the stage ``refused`` tells the parent (``hosts_run``).
        laps.lap("refused")
        return {"ok": False, "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - user code and the compiler both run here
        if is_out_of_memory(exc):
            raise  # json_worker_main names the memory limit
        return {"ok": False, "error": failure_line(job["path"], exc)}
    finally:
        if reference is not None:
            reference.stop()
    report["stages"] = {"started": laps.started, **laps.seconds}
    return report


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


def _from_source(job: dict, laps: Laps, reference: ReferenceProcess | None = None) -> dict:
    """The CLI's ``run`` in one worker: load the program file as the load worker does
    (import, trace, lower), check the run, predict its collectives, then compile and run.

    The parent's time limit for loading ends when the file ``job["loaded"]`` appears. A
    program that needs more fake CPU devices than this worker has gets
    ``{"ok": true, "needs_devices": N, "error": ...}``: the parent starts another worker
    with N.
    """
    # Only this job propagates and plans: the worker's other jobs do not import them.
    from shardscope.backend.propagation.propagate import own_mesh as own_mesh_in_order
    from shardscope.backend.propagation.propagate import start_propagation
    from shardscope.backend.run.match import predicted_refs
    from shardscope.backend.run.runner import plan_run
    from shardscope.backend.run.worker_setup import cpu_device_limit

    path = job["path"]
    started = time.perf_counter()
    try:
        ns = import_program(path, job["params"])
    except UserError as exc:
        return _load_failed(job, str(exc), exc.devices)
    laps.lap("import_program")
    given = Mesh.from_json(job["mesh"]) if job.get("mesh") else None
    axes = given if given is not None else own_mesh(ns)
    host = HostJob.from_job(job)
    if not job.get("cpu_devices") and axes is not None and axes.size <= cpu_device_limit():
        # Before anything starts JAX's backend: as many CPU devices as the run's mesh has
        # (a host of several: its share of them).
        if host is None:
            with contextlib.suppress(RuntimeError):  # the program's import already started it
                jax.config.update("jax_num_cpu_devices", axes.size)
        elif axes.size % host.count == 0:
            distributed.set_devices_per_host(axes.size // host.count)
    try:
        result = lower_namespace(path, ns, started)
    except UserError as exc:
        return _load_failed(job, str(exc), exc.devices)
    program = lowered_program(Path(path), job["params"], result)
    program.name, program.source, program.kind = job["name"], job["source"], job["program_kind"]
    if given is None and job.get("device_order"):
        given = own_mesh_in_order(program, job["device_order"])
    Path(job["loaded"]).write_text("")
    deadline = _deadline(job)  # the run's time limit starts now
    laps.lap("lower")
    specs = job.get("specs")
    plan = plan_run(
        program,
        given,
        specs,
        runs=job["runs"],
        seed=SEED if job["seed"] is None else job["seed"],
        reference=job["reference"],
        values=job["values"],
        hosts=host.count if host is not None else None,
        dcn=job.get("dcn"),
    )
    attached = len(jax.devices())
    # A host of several needs exactly the mesh's devices in all: device number d is the
    # d-th of them, and host k owns numbers k*N/H to (k+1)*N/H - 1.
    short = attached < plan.mesh.size or (host is not None and attached != plan.mesh.size)
    if short and jax.devices()[0].platform == "cpu":
        return {
            "ok": True,
            "needs_devices": plan.mesh.size,
            "error": too_many_devices(plan.mesh, attached, "cpu"),
        }
    inputs = program_inputs(ns, plan.job["seed"])
    if reference is not None and plan.job.get("reference", True):
        reference.start(plan.mesh.axis_names, plan.job["seed"], inputs.concrete())
    laps.lap("plan")

    # Shardy runs in a forked child (``propagation.guard``) beside the compile and the
    # run; no thread of this process is at work when it forks.
    pending, why = None, None
    try:
        if host is None or host.index == 0:  # one prediction for all hosts
            pending = start_propagation(program, plan.mesh, specs)
    except ShardscopeError as exc:
        why = str(exc)
    laps.lap("propagate")
    try:
        # A host of several runs the plan as one host of the same runtime.
        hosted = {k: job[k] for k in ("distributed", "timeout") if k in job}
        report = _run(
            {**plan.job, **hosted},
            ns=ns,
            laps=laps,
            inputs=inputs,
            reference=reference,
            deadline=deadline,
        )
    except BaseException:
        if pending is not None:
            pending.cancel()
        raise
    predicted_json = None
    if pending is not None:
        try:
            predicted = pending.result()
            refs = predicted_refs(predicted.collectives, predicted.graph)
            predicted_json = [r.to_json() for r in refs]
        except ShardscopeError as exc:
            why = str(exc)
    laps.lap("predicted_collectives")
    report.update(
        predicted=predicted_json,
        predicted_error=why,
        plan_notes=plan.notes,
        program={"name": program.name, "mesh": program.mesh},
        mesh=plan.mesh.to_json(),
    )
    return report


def _deadline(job: dict) -> float | None:
    """When (``time.monotonic``) the run's reference is given up: its share of the time
    limit (``reference.REFERENCE_SHARE``) from now, the run's start."""
    timeout = job.get("timeout")
    return None if timeout is None else time.monotonic() + REFERENCE_SHARE * float(timeout)


def _load_failed(job: dict, error: str, devices: int | None) -> dict:
    """The load's error, or a request for a worker with the ``devices`` the program's
    import asked for where this one had fewer."""
    if devices is not None and devices > int(job.get("cpu_devices") or DEFAULT_DEVICES):
        return {"ok": True, "needs_devices": devices, "error": error}
    return {"ok": False, "error": error, "stage": "load"}


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_LAST = re.compile(r"^(?:[\w.]+\.)?(?P<type>\w*(?:Error|Exception|Interrupt))\b:?\s*(?P<msg>.*)$")


def failure_line(path: str, exc: BaseException) -> str:
    """One line for an exception raised while compiling or running the program at
    ``path``: where in the program (the last frame in its file, from the traceback or
    from a traceback quoted in the message, as JAX quotes a failed host callback), and
    the innermost error."""
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == path:
            line = lineno
    text = str(exc).strip()
    for m in _FRAME.finditer(text):
        if m["file"] == path:
            line = int(m["line"])
    detail = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")
    lines = [raw.strip() for raw in text.splitlines() if raw.strip()]
    if len(lines) > 1:
        m = _LAST.match(lines[-1])
        if m:
            detail = lines[-1]
    where = f"{path}:{line}" if line else path
    if len(detail) > 300:
        detail = detail[:300] + "..."
    return f"{where}: the run failed: {detail}; fix the program and run it again"


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


def _run(
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
        inputs = program_inputs(ns, job["seed"])
        if reference is not None and job.get("reference", True):
            reference.start(mesh.axis_names, job["seed"], inputs.concrete())
    host = HostJob.from_job(job)
    devices = jax.devices() if host is None else distributed.global_devices()
    platform = devices[0].platform
    if len(devices) < mesh.size:
        raise RunRefused(too_many_devices(mesh, len(devices), platform))
    numbers = distributed.device_numbers(devices) if host is not None else {}
    if host is not None:
        if len(devices) != mesh.size:
            raise RunRefused(
                f"the mesh {mesh.describe()} needs {mesh.size} devices but the "
                f"{host.count} hosts have {len(devices)} in all: give each host "
                f"{mesh.size // host.count} (the job's cpu_devices is the mesh's size)"
            )
    jmesh = _jax_mesh(mesh, devices, _own_axis_types(ns), numbered=host is not None)
    explicit = AxisType.Explicit in jmesh.axis_types
    call, leaves, data = inputs.call, inputs.leaves, inputs.host
    names = _leaf_names(job, call, leaves)
    structs = []
    for leaf, name in zip(leaves, names, strict=True):
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

    notes: list[str] = []
    # Traced as the load traced it (``trace.program_call``), on these shardings: the
    # load's own trace reused where that gives the same module (``run.lowering``).
    own = {"program": ns.get("PROGRAM"), "own_mesh": ns.get("MESH")}
    lowered = lower_on(call, structs, jmesh, wrap=wrap, **own)
    manual = "sdy.manual_computation" in lowered.as_text()
    laps.lap("trace_and_lower")
    # On an accelerator the unsharded reference is traced, lowered and compiled in a
    # thread beside the sharded compile. It starts after anything forks this process
    # (``_from_source``'s propagation): a fork beside a compile hung. ``compile_s`` is
    # the sharded compile's wall time with the reference compiling beside it.
    unsharded: ReferenceProcess | ReferenceThread | None = reference
    if manual and reference is not None:
        reference.stop()
        unsharded = None
    elif reference is None and job.get("reference", True) and not manual:
        unsharded = ReferenceThread(inputs, mesh.axis_names, jax.local_devices()[0])
    with jax.set_mesh(jmesh):
        started = time.perf_counter()
        compiled = lowered.compile()
        compile_s = time.perf_counter() - started
    laps.lap("compile")

    # An argument the program does not use has no sharding (None): it is placed replicated.
    in_shardings = [
        NamedSharding(jmesh, jax.sharding.PartitionSpec()) if s is None else s
        for s in compiled.in_tree.flatten_up_to(compiled.input_shardings)
    ]
    if host is None:
        placed = [
            jax.device_put(device_array(h, leaf), s)
            for h, leaf, s in zip(data, leaves, in_shardings, strict=True)
        ]
    else:
        # Every host holds the same seeded data; each fills its own devices' pieces.
        placed = [
            distributed.place(h, leaf, s)
            for h, leaf, s in zip(data, leaves, in_shardings, strict=True)
        ]
        # Every host starts its runs together: one behind waits here, not in a collective.
        distributed.barrier("compiled", float(job.get("timeout") or 300.0))
    p_args, p_kwargs = jax.tree.unflatten(compiled.in_tree, placed)
    stop = unsharded.stop if unsharded is not None else (lambda: None)
    with CallbackFailure(job["path"], stop).installed():
        out = jax.block_until_ready(compiled(*p_args, **p_kwargs))
        times = []
        for _ in range(max(1, int(job["runs"]))):
            started = time.perf_counter()
            jax.block_until_ready(compiled(*p_args, **p_kwargs))
            times.append(time.perf_counter() - started)
    laps.lap("run")
    flat = jax.tree_util.tree_flatten_with_path(out)[0]
    out_leaves = [leaf for _, leaf in flat]
    # JAX's own name of each output (its ``jax.result_info``): ``result[0]['w']``.
    paths = ["result" + jax.tree_util.keystr(path) for path, _ in flat]
    values = None
    if job.get("values", True):
        # The hosts' shards share one run's budget of values.
        values = ValueBudget() if host is None else ValueBudget(MAX_TOTAL_VALUES // host.count)

    expected, kept = None, False
    if manual:
        notes.append(
            "no unsharded reference: the program uses shard_map, whose result depends on "
            "the mesh it runs on"
        )
    elif unsharded is None:
        notes.append("no unsharded reference: not asked for")
    else:
        try:
            expected = unsharded.outputs(deadline)
        except ReferenceFailed as exc:
            notes.append(f"no unsharded reference: {exc}")
        kept = unsharded.kept
        if unsharded.refused is not None:
            notes.append(
                f"the unsharded outputs kept from an earlier run were refused "
                f"({unsharded.refused}) and computed afresh"
            )
    laps.lap("reference_run")
    out_shardings = jax.tree.leaves(
        compiled.output_shardings, is_leaf=lambda x: isinstance(x, jax.sharding.Sharding)
    )
    outputs = [
        {
            **_tensor(
                f"result[{i}]",
                arr,
                sharding,
                None if expected is None else expected[i],
                values,
                host,
                numbers,
            ),
            "path": paths[i],
        }
        for i, (arr, sharding) in enumerate(zip(out_leaves, out_shardings, strict=True))
    ]
    arguments = [
        _tensor(name, arr, sharding, h, values, host, numbers)
        for name, arr, sharding, h in zip(names, placed, in_shardings, data, strict=True)
        if name is not None  # an argument the program does not use is not in it
    ]
    laps.lap("shards")
    text = compiled.as_text()
    if host is None:
        assignment = [int(d.id) for d in compiled.runtime_executable().local_devices()]
        collectives = read_collectives(text, assignment, mesh.size)
    elif host.index == 0:
        # One host reads the program's collectives for all, in device numbers.
        assignment = distributed.partition_numbers(compiled, jmesh, numbers)
        collectives = read_collectives(text, assignment, mesh.size)
    else:
        collectives, text = [], ""
    memory = _memory(compiled)
    laps.lap("hlo_and_memory")
    return {
        "ok": True,
        "host": 0 if host is None else host.index,
        "platform": platform,
        "device_count": mesh.size,
        "devices_attached": len(devices),
        "outputs": outputs,
        "arguments": arguments,
        "collectives": collectives,
        "compile_s": compile_s,
        "run_s": statistics.median(times),
        "reference_kept": kept,
        "run_times": times,
        "memory": memory,
        "notes": notes,
        "concrete_inputs": [
            name
            for name, leaf in zip(names, leaves, strict=True)
            if name is not None and is_concrete(leaf)
        ],
        "hlo_text": text,
    }


def _reshard(job: dict) -> dict:
    """``jax.device_put`` a tensor of known values from one sharding to another; each
    device's new index and whether its data are that slice of the tensor."""
    mesh = Mesh.from_json(job["mesh"])
    jmesh = _jax_mesh(mesh, jax.devices())
    shape = tuple(job["shape"])
    data = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape).astype(job["dtype"])
    rank = len(shape)
    source = NamedSharding(jmesh, parse_spec(job["source"]).padded(rank).to_jax())
    target = NamedSharding(jmesh, parse_spec(job["target"]).padded(rank).to_jax())
    moved = jax.block_until_ready(jax.device_put(jax.device_put(data, source), target))
    devices = {}
    for shard in moved.addressable_shards:
        index = tuple(s.indices(n)[:2] for s, n in zip(shard.index, shape, strict=True))
        piece = data[tuple(slice(a, b) for a, b in index)]
        devices[str(shard.device.id)] = {
            "index": [list(r) for r in index],
            "data_ok": bool(np.array_equal(np.asarray(shard.data), piece)),
        }
    return {"ok": True, "devices": devices}


def _own_axis_types(ns: dict) -> dict[str, str]:
    """Axis name -> type (``Explicit``...) of the program's own ``MESH`` (a ``Mesh`` or an
    ``AbstractMesh``; a dict's axes are Auto)."""
    try:
        own = abstract_mesh(ns.get("MESH"))
    except Exception:  # noqa: BLE001 - a malformed MESH is the lowering's error
        return {}
    if own is None:
        return {}
    return {
        name: str(t).split(".")[-1] for name, t in zip(own.axis_names, own.axis_types, strict=True)
    }


def _jax_mesh(
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


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is written: tearing down JAX's runtime and the interpreter (a fifth of a
    # second after a small run) would only keep the parent waiting.
    os._exit(code)
