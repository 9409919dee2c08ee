"""The unsharded run a sharded run is checked against: the program on one device, every
mesh axis of size 1 (so the specs and constraints in its code still name known axes).

Two ways to make it, with one interface (``outputs``, ``stop``):

- ``ReferenceProcess``, on the CPU: a child forked from the run worker before JAX starts
  its backend. It imports the program itself while the worker does, and traces, lowers
  and compiles it (cheaply: ``REFERENCE_CPU_OPTIONS``) as soon as it knows the mesh's
  axis names (the job's mesh, else the program's own ``MESH``); it runs it once the
  worker sends the inputs (``start``). In a process of its own it takes no share of the
  worker's interpreter lock, so its compile runs on the core the worker's own
  single-threaded work (loading, lowering) leaves idle.
- ``ReferenceThread``, on an accelerator: a thread in the worker, started beside the
  sharded compile, so that one process holds the device.

Both keep their outputs (``reference_cache``): a program run again with other specs
skips its unsharded compile and run.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import pickle
import signal
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType

from shardscope.backend.isolation.jobs import wait_pid
from shardscope.backend.isolation.limits import (
    become_worker,
    is_out_of_memory,
    memory_limit,
    memory_message,
)
from shardscope.backend.isolation.worker_job import how_it_ended, last_line
from shardscope.backend.program.lower import load_python_namespace
from shardscope.backend.program.trace import abstract_mesh, mesh_dict, program_call
from shardscope.backend.run.inputs import (
    device_array,
    host_array,
    host_form,
    input_data,
    is_concrete,
)
from shardscope.backend.run.reference_cache import ReferenceCache
from shardscope.backend.run.worker_failures import reference_words
from shardscope.backend.sharding.mesh import Mesh

# How the unsharded reference compiles on the CPU: LLVM at -O1, without fusion emitters
# or parallel codegen. On this machine (jaxlib 0.10.2) it then took 0.73 s of CPU on one
# core for example:transformer instead of 1.18 s on two, and gave the same bits as the
# default compile on every built-in example. Level 0 was cheaper still (0.15 s) but is
# not used: its float32 rounding differed (2.6e-7 on the transformer), and the scan
# example's recurrence grew that to a 3.7e-2 error the sharded run did not have.
REFERENCE_CPU_OPTIONS: dict[str, Any] = {
    "xla_backend_optimization_level": 1,
    "xla_cpu_use_fusion_emitters": False,
    "xla_cpu_parallel_codegen_split_count": 1,
}


@dataclass
class ProgramInputs:
    """The program's function, the flat arguments it compiles to (``trace.program_call``:
    an ``nnx.jit`` program's split state, an ``eqx.filter_jit`` program's arrays) and the
    tree they came from, and the data each run gets (``inputs.input_data``)."""

    program: Any
    leaves: list
    treedef: Any
    host: list
    # How the program is traced (``trace.program_call``); made from the others if None.
    call: Any = None

    def __post_init__(self) -> None:
        if self.call is None:
            args, kwargs = jax.tree.unflatten(self.treedef, self.leaves)
            self.call = program_call(self.program, tuple(args), dict(kwargs))[0]

    @property
    def structs(self) -> list:
        """Each flat argument's shape and dtype, without sharding."""
        return [jax.ShapeDtypeStruct(*shape_dtype(leaf)) for leaf in self.leaves]

    def concrete(self) -> dict[int, np.ndarray]:
        """The data of the arguments the program file gives (the rest are seeded)."""
        return {i: self.host[i] for i, leaf in enumerate(self.leaves) if is_concrete(leaf)}


def program_inputs(ns: dict, seed: int | None) -> ProgramInputs:
    """The inputs of the program whose globals are ``ns``: ``EXAMPLE_ARGS`` (and
    ``EXAMPLE_KWARGS``), with data seeded by ``seed`` where they give none (None: no
    data, ``host`` empty)."""
    program = ns["PROGRAM"]
    args = ns.get("EXAMPLE_ARGS")
    if not isinstance(args, tuple):
        args = (args,) if not isinstance(args, list) else tuple(args)
    kwargs = ns.get("EXAMPLE_KWARGS") or {}
    # The arguments as the load lowered them: the same leaves, in the same order.
    call = program_call(program, args, dict(kwargs))[0]
    leaves, treedef = call.flat()
    host = [] if seed is None else [input_data(leaf, i, seed) for i, leaf in enumerate(leaves)]
    return ProgramInputs(program, leaves, treedef, host, call)


def shape_dtype(leaf: Any) -> tuple[tuple[int, ...], Any]:
    """A flat argument's shape and dtype."""
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        return tuple(leaf.shape), leaf.dtype
    arr = np.asarray(leaf)
    return arr.shape, arr.dtype


class _Unsharded:
    """The program lowered for ``device`` alone, on a mesh of ``axes`` all of size 1, and
    compiled, unless ``cache`` keeps outputs of the same module: then it compiles only if
    the inputs turn out to be new."""

    def __init__(
        self,
        axes: tuple[str, ...],
        device: Any,
        inputs: ProgramInputs,
        cache: ReferenceCache | None,
    ) -> None:
        mesh = jax.sharding.Mesh(
            np.array([device]).reshape((1,) * len(axes)),
            axes,
            axis_types=(AxisType.Auto,) * len(axes),
        )
        # ``jax.set_mesh`` holds for the calling thread only (checked: the main thread saw
        # no mesh meanwhile).
        with jax.set_mesh(mesh):
            self.lowered = inputs.call.trace(leaves=inputs.structs).lower()
        self.device, self.cache = device, cache
        self.options = REFERENCE_CPU_OPTIONS if device.platform == "cpu" else None
        self.key = None
        if cache is not None:
            self.key = cache.program_key(self.lowered.as_text(), device, self.options)
        self.compiled: Any = None
        # Whether ``outputs`` gave kept outputs.
        self.kept = False
        # Why a kept entry was refused (``ReferenceCache.lookup``), or None.
        self.refused: str | None = None
        if self.key is None or not cache.knows(self.key):
            self.compiled = self.lowered.compile(self.options)

    def outputs(self, inputs: ProgramInputs) -> list[np.ndarray]:
        """The flat outputs on ``inputs``: kept ones, or from a run."""
        if self.key is not None:
            expected = [host_form(o) for o in jax.tree.leaves(self.lowered.out_info)]
            kept, self.refused = self.cache.lookup(self.key, inputs.host, expected)
            if kept is not None:
                self.kept = True
                return kept
        if self.compiled is None:
            self.compiled = self.lowered.compile(self.options)
        placed = [
            jax.device_put(device_array(h, leaf), self.device)
            for h, leaf in zip(inputs.host, inputs.leaves, strict=True)
        ]
        args, kwargs = jax.tree.unflatten(self.lowered.in_tree, placed)
        out = jax.block_until_ready(self.compiled(*args, **kwargs))
        outputs = [host_array(x) for x in jax.tree.leaves(out)]
        if self.key is not None:
            self.cache.store(self.key, inputs.host, outputs)
        return outputs


def _failure(exc: BaseException, path: str | None = None) -> str:
    if isinstance(exc, Exception):
        return reference_words(exc, path)
    # SystemExit and the like: user code that exits.
    return (
        f"the program ended the process ({type(exc).__name__}) while tracing it unsharded; "
        f"let it return, or run with --no-reference"
    )


class ReferenceFailed(Exception):
    """The unsharded run failed; the message says how, in one line. ``raised``: the
    program raised while tracing or running unsharded (not a crash, a timeout or a lack
    of memory), so the worker may make the reference from its own lowering instead."""

    def __init__(self, message: str, *, raised: bool = False) -> None:
        super().__init__(message)
        self.raised = raised


class ReferenceThread:
    """The unsharded reference traced, lowered and compiled in a thread of this process
    from the moment it is made; run by ``outputs``."""

    def __init__(self, inputs: ProgramInputs, axes: tuple[str, ...], device: Any) -> None:
        self.inputs, self.device = inputs, device
        self.unsharded: _Unsharded | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._compile, args=(axes,), daemon=True)
        self.thread.start()

    def _compile(self, axes: tuple[str, ...]) -> None:
        try:
            cache = ReferenceCache.here()
            self.unsharded = _Unsharded(axes, self.device, self.inputs, cache)
        except BaseException as exc:  # noqa: BLE001 - user code runs again here
            self.error = exc

    def outputs(self, deadline: float | None = None) -> list[np.ndarray]:
        """The flat outputs; ``ReferenceFailed`` for what tracing, compiling or running
        raised. (``deadline`` is not kept: a thread cannot be stopped; the run's own time
        limit holds.)"""
        self.thread.join()
        if self.error is not None:
            raise ReferenceFailed(_failure(self.error), raised=True)
        try:
            return self.unsharded.outputs(self.inputs)
        except Exception as exc:  # noqa: BLE001 - user code runs here
            raise ReferenceFailed(_failure(exc), raised=True) from None

    @property
    def kept(self) -> bool:
        """Whether ``outputs`` were kept ones (``reference_cache``)."""
        return self.unsharded is not None and self.unsharded.kept

    @property
    def refused(self) -> str | None:
        """Why kept outputs were refused (``ReferenceCache.lookup``), or None."""
        return None if self.unsharded is None else self.unsharded.refused

    def stop(self) -> None:
        """Nothing to stop: the thread ends with its compile (it is a daemon)."""


# The share of a run's time limit its reference may take from the run's start: past it
# the run reports without it rather than fail at the limit.
REFERENCE_SHARE = 0.8
_STATUS = "reference.json"
_OUTPUTS = "reference-outputs.npz"
_INPUTS = "reference-inputs.npz"
_LOG = "reference-log.txt"
_RETRY = "reference-retry.txt"
# Why a program's reference failed where its code shards on the devices of a mesh it
# built at import with more than one device.
PINNED_DEVICES = (
    "the program's code shards on the devices of the mesh it builds at import, which one "
    "device cannot hold: build that mesh from jax.devices() (jax.make_mesh"
    "((len(jax.devices()),), ...)), or shard with PartitionSpecs under jax.set_mesh, and "
    "each output gets its error"
)
_MESSAGE = "reference-message.pkl"


class ReferenceProcess:
    """The unsharded reference in a child forked from this process (``fork``), which
    must not have started JAX's backend yet: the child starts its own."""

    def __init__(self, pid: int, pipe: int, scratch: Path) -> None:
        self.pid, self._pipe, self.scratch = pid, pipe, scratch
        self._status: int | None = None
        # Whether ``outputs`` were kept ones (``reference_cache``).
        self.kept = False
        # Why kept outputs were refused (``ReferenceCache.lookup``), or None.
        self.refused: str | None = None

    @classmethod
    def fork(
        cls, path: str, params: dict[str, str], axes: tuple[str, ...] | None, scratch: Path
    ) -> ReferenceProcess:
        """Fork the child: it imports the program at ``path`` with ``params`` at once and
        compiles it on a mesh of ``axes`` (None: the program's own ``MESH``'s), then
        waits for ``start`` to run it. It dies with this process's calling thread."""
        parent = os.getpid()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's lines run in the child
            code = 1
            try:
                os.close(write)
                _child(parent, path, params, axes, read, scratch)
                code = 0
            finally:
                os._exit(code)
        os.close(read)
        return cls(pid, write, scratch)

    def start(self, axes: tuple[str, ...], seed: int, concrete: dict[int, np.ndarray]) -> None:
        """Let the child run: the mesh's axis names (it compiles again if they are not
        the ones it guessed), the seed of the random inputs and the arrays the program
        file gave this process (``ProgramInputs.concrete``: a program may make other data
        each time it is imported)."""
        inputs = None
        if concrete:
            inputs = str(self.scratch / _INPUTS)
            np.savez(inputs, **{str(i): a for i, a in concrete.items()})
        message = pickle.dumps({"axes": tuple(axes), "seed": seed, "inputs": inputs})
        self._send(message)

    def _send(self, message: bytes) -> None:
        """Send ``message`` (empty: stop), its length first: the child reads that many
        bytes, not to the pipe's end, which never comes while a process the program
        forked at import holds this end open."""
        if self._pipe < 0:
            return
        with contextlib.suppress(OSError):  # a child that has already ended
            os.write(self._pipe, struct.pack("<Q", len(message)) + message)
        os.close(self._pipe)
        self._pipe = -1

    def _wait(self, timeout: float | None = None) -> int | None:
        if self._status is None:
            self._status = wait_pid(self.pid, timeout)
        return self._status

    def outputs(self, deadline: float | None = None) -> list[np.ndarray]:
        """Wait for the child (until ``deadline``, a ``time.monotonic`` reading, at the
        most: then it is stopped); its flat outputs, or ``ReferenceFailed``."""
        self._send(b"")  # a child never started ends
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        status = self._wait(left)
        if status is None:
            self.stop()
            raise ReferenceFailed(
                f"it did not finish within {REFERENCE_SHARE:.0%} of the run's time limit; "
                f"allow more time (--timeout) or run without it (--no-reference)"
            )
        path = self.scratch / _STATUS
        if not path.exists():
            log = self.scratch / _LOG
            text = log.read_text(errors="replace") if log.exists() else ""
            ended = how_it_ended(status)
            line = last_line(text)
            raise ReferenceFailed(f"its process {ended}" + (f" ({line})" if line else ""))
        report = json.loads(path.read_text())
        if not report["ok"]:
            raise ReferenceFailed(report["error"], raised=report.get("raised", False))
        self.kept = report["kept"]
        self.refused = report.get("refused")
        with np.load(self.scratch / _OUTPUTS) as data:
            return [data[f"arr_{i}"] for i in range(len(data.files))]

    def stop(self) -> None:
        """End the child now if it has not ended, and reap it."""
        self._send(b"")
        if self._status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._wait()


def _child(
    parent: int,
    path: str,
    params: dict[str, str],
    axes: tuple[str, ...] | None,
    pipe: int,
    scratch: Path,
) -> None:
    """The forked child's work: report to ``scratch`` (``_STATUS``, ``_OUTPUTS``).

    It compiles as soon as it knows the mesh's axis names (``axes``, else the program's
    own ``MESH``), before the worker's message comes: the names in the message win if
    they differ."""
    # Half the worker's memory limit: the two share what one worker may use.
    limit = memory_limit()
    become_worker(parent, None if limit is None else limit // 2)
    log = os.open(scratch / _LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 2)  # the compiler's warnings are not the sharded program's
    faulthandler.disable()  # a crash is reported from the wait status, not dumped
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    args = (path, params, axes, pipe, scratch, limit)
    if os.environ.get("JAX_PLATFORMS") == "cpu" and _one_device_first(*args):
        return
    _reference(*args)


def _one_device_first(
    path: str,
    params: dict[str, str],
    axes: tuple[str, ...] | None,
    pipe: int,
    scratch: Path,
    limit: int | None,
) -> bool:
    """Make the reference in a grandchild whose JAX has one CPU device, so that a mesh
    the program builds from ``jax.devices()`` at import is one device too, and so are the
    shardings on it in its code. False when the grandchild asks for the program's devices
    (it failed on one): then this child makes it with the devices the worker has."""
    child = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the grandchild's lines run in the grandchild
        code = 1
        try:
            become_worker(child, None)  # the memory limit is inherited
            jax.config.update("jax_num_cpu_devices", 1)
            code = 0
        finally:
            if code:
                os._exit(code)
        try:
            _reference(path, params, axes, pipe, scratch, limit, one_device=True)
        finally:
            os._exit(0)
    status = wait_pid(pid, None)
    if (scratch / _RETRY).exists():
        return False
    if not (scratch / _STATUS).exists():
        ended = how_it_ended(status)
        error = f"its process {ended}"
        (scratch / _STATUS).write_text(json.dumps({"ok": False, "error": error}))
    return True


def _reference(
    path: str,
    params: dict[str, str],
    axes: tuple[str, ...] | None,
    pipe: int,
    scratch: Path,
    limit: int | None,
    *,
    one_device: bool = False,
) -> None:
    """Make the reference and report it (``_child``). ``one_device``: a failure asks the
    child to try again with the program's devices (``_RETRY``) instead of being reported;
    the worker's message, if read, is left for it in ``_MESSAGE``."""
    data: bytes | None = None
    try:
        ns = load_python_namespace(path, params)
        inputs = program_inputs(ns, None)
        device = jax.devices()[0]
        if axes is None:
            own = own_mesh(ns)
            axes = own.axis_names if own is not None else None
        cache = ReferenceCache.here()
        unsharded: _Unsharded | None = None
        early: BaseException | None = None
        if axes is not None:
            try:
                unsharded = _Unsharded(axes, device, inputs, cache)
            except BaseException as exc:  # noqa: BLE001 - raised again below if it holds
                early = exc
        data = _message(pipe, scratch)
        if not data:
            return  # stopped
        message = pickle.loads(data)
        if message["axes"] != axes:
            unsharded = _Unsharded(message["axes"], device, inputs, cache)
        elif early is not None:
            raise early
        inputs = program_inputs(ns, message["seed"])
        if message["inputs"] is not None:
            with np.load(message["inputs"]) as given:
                for key in given.files:
                    inputs.host[int(key)] = given[key]
        outputs = unsharded.outputs(inputs)
        np.savez(scratch / _OUTPUTS, *outputs)
        report: dict[str, Any] = {"ok": True, "kept": unsharded.kept, "refused": unsharded.refused}
    except BaseException as exc:  # noqa: BLE001 - user code runs here
        if one_device:
            if data:
                (scratch / _MESSAGE).write_bytes(data)
            (scratch / _RETRY).write_text(_failure(exc, path))
            return
        error, raised = _failure(exc, path), True
        if "incompatible devices" in str(exc):
            error = PINNED_DEVICES
        if is_out_of_memory(exc):
            error, raised = memory_message("it (given half the run's memory)", limit), False
        report = {"ok": False, "error": error, "raised": raised}
    (scratch / _STATUS).write_text(json.dumps(report))


def _message(pipe: int, scratch: Path) -> bytes:
    """The worker's message: from the pipe, or where a grandchild that read it left it."""
    left = scratch / _MESSAGE
    if left.exists():
        return left.read_bytes()
    with os.fdopen(pipe, "rb", closefd=False) as reader:
        head = reader.read(8)  # the length ``ReferenceProcess._send`` puts first
        size = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
        return reader.read(size) if size else b""


def own_mesh(ns: dict) -> Mesh | None:
    """The axes of the program's own ``MESH`` (None without one, or with one that is not
    a mesh: the lowering reports that)."""
    try:
        own = abstract_mesh(ns.get("MESH"))
    except Exception:  # noqa: BLE001 - a malformed MESH is the lowering's error
        return None
    return Mesh.from_dict(mesh_dict(own)) if own is not None else None
