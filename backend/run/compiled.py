"""What XLA emits for a propagated program: its compiled collectives and memory.

``propagate_compiled`` runs Shardy's propagation (``propagation.propagate``) and, beside
it, compiles the annotated module (the program with the session's mesh and specs written
on it) with XLA in a worker (``run.compile``) on as many fake CPU devices as the mesh
has; the worker starts first and imports JAX while the program is annotated. The result
lists each compiled collective instruction (``CompiledCollective``, as ``run --json``
does), matched with Shardy's prediction (``match``), and XLA's memory analysis of its
CPU buffer assignment. One process holds at most ``MAX_CPU_DEVICES`` CPU devices; a
larger mesh gets a note instead.
"""

from __future__ import annotations

import itertools
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.hlo.frames import is_library_file
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.isolation.start import NICE_ENV
from shardscope.backend.propagation.predicted_collectives import bytes_per_device
from shardscope.backend.propagation.propagate import own_mesh, start_propagation
from shardscope.backend.run.cancel import Cancel, RunCancelled
from shardscope.backend.run.early_stop import early_job, request_stop
from shardscope.backend.run.explain import USER_OPS, explain
from shardscope.backend.run.match import match, operand_sources, predicted_refs
from shardscope.backend.run.op_index import OpIndex
from shardscope.backend.run.result import (
    CollectiveTensor,
    Compiled,
    CompiledCollective,
    CompileOutcome,
    NotCompiled,
    OpWarning,
    PredictedRef,
    group_size,
)
from shardscope.backend.run.xla_log import instruction_op_names, read_warnings
from shardscope.backend.sharding.device_groups import device_groups, spanned_axes

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.annotate import SpecLike
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.sharding.mesh import Mesh

WORKER = "shardscope.backend.run.compile"
WHAT = "the XLA compile"
COMPILE_CANCELLED = "the XLA compile was cancelled"
# The most CPU devices one process of jaxlib 0.10.2 holds.
MAX_CPU_DEVICES = 2048
MEMORY_SOURCE = "XLA's CPU buffer assignment (compiled.memory_analysis()), bytes per device"
EARLY_STOPPED = (
    "the compile was stopped early, once XLA had partitioned the module: its collectives "
    "are listed, its memory is missing (it needs the finished compile; propagate again "
    "(F5) and let the compile finish to see it)"
)
# The compile reports what this compile did: no compile may be taken from the cache.
_NO_CACHE = {"JAX_ENABLE_COMPILATION_CACHE": "false"}
_KIND_NAMES = {
    "all-gather": "all_gather",
    "all-reduce": "all_reduce",
    "reduce-scatter": "reduce_scatter",
    "all-to-all": "all_to_all",
    "collective-permute": "collective_permute",
}


def compiled_collective(c: dict) -> CompiledCollective:
    """A ``CompiledCollective`` of one ``hlo.hlo_collectives`` record."""
    groups = c["groups"]
    group = group_size(c["kind"], groups)
    kind = _KIND_NAMES.get(c["kind"], c["kind"])
    return CompiledCollective(
        kind=c["kind"],
        device_groups=tuple(tuple(g) for g in groups) if groups is not None else None,
        shape=tuple(c["shapes"][0]) if c["shapes"] else (),
        bytes=bytes_per_device(kind, c["result_bytes"], group),
        source=c["op_name"],
        line=c["line"],
        predicted=(),
        file=c["file"],
        name=c["name"],
        operands=c["operands"],
        shapes=tuple(tuple(s) for s in c["shapes"]),
        result_bytes=c["result_bytes"],
        groups_text=c["groups_text"],
        computation=c["computation"],
        sources=tuple(operand_sources(c["op_name"])),
        tensors=tuple(
            CollectiveTensor(t["op_name"], None, t["file"], t["line"]) for t in c.get("tensors", [])
        ),
    )


def describe(
    collectives: list[CompiledCollective],
    graph: ProgramGraph,
    mesh: Mesh,
    find: Callable[[str, int | None], int | None] | None = None,
) -> list[CompiledCollective]:
    """``collectives`` with each operand's program op (``find(op_name, line)``, by
    default ``OpIndex(graph).find``), the mesh axes of their device groups and whether
    the user wrote them."""
    find = find or OpIndex(graph).find
    spans = _AxesOf(mesh)
    out = []
    for c in collectives:
        tensors = tuple(
            CollectiveTensor(t.op_name, find(t.op_name, t.line), t.file, t.line) for t in c.tensors
        )
        # Told only where every operand's op is found (a module without locations names
        # none of them).
        found = bool(tensors) and all(t.op is not None for t in tensors)
        user = found and all(graph.ops[t.op].name in USER_OPS for t in tensors)
        # A compile whose metadata names no user line (torch_xla's names torch's own
        # frames) takes the line of the program op its first operand came from.
        first = graph.ops[tensors[0].op] if tensors and tensors[0].op is not None else None
        line, file = c.line, c.file
        if (
            line is None
            and first is not None
            and first.source_line is not None
            and not is_library_file(first.source_file or "<none>")
        ):
            line, file = first.source_line, first.source_file
        out.append(
            replace(
                c,
                tensors=tensors,
                axes=spans.axes(c.kind, c.device_groups),
                origin=("user" if user else "partitioner") if found else "",
                line=line,
                file=file,
            )
        )
    return out


class _AxesOf:
    """The mesh axes (whole ones) whose collectives run over exactly some device groups."""

    def __init__(self, mesh: Mesh) -> None:
        self._mesh = mesh
        self._known: dict[frozenset, tuple[str, ...]] = {}
        names = mesh.axis_names
        for n in range(1, len(names) + 1):
            for axes in itertools.combinations(names, n):
                key = frozenset(frozenset(g) for g in device_groups(mesh, axes))
                self._known.setdefault(key, axes)

    def axes(self, kind: str, groups: tuple[tuple[int, ...], ...] | None) -> tuple[str, ...] | None:
        if not groups:
            return None
        if kind == "collective-permute":
            return self._permute_axes(groups)
        return self._known.get(frozenset(frozenset(g) for g in groups))

    def _permute_axes(self, pairs: tuple[tuple[int, ...], ...]) -> tuple[str, ...] | None:
        """The axes along which a permute's sources and targets differ; None where a pair
        is not two of the mesh's devices."""
        devices = set(self._mesh.device_order or range(self._mesh.size))
        if any(len(pair) != 2 or not devices.issuperset(pair) for pair in pairs):
            return None
        return spanned_axes(self._mesh, pairs)


class PendingCompile:
    """The compile worker running in a thread; ``report`` waits for it."""

    def __init__(
        self,
        devices: int,
        timeout: float,
        device_order: Sequence[int] | None = None,
        *,
        background: bool = False,
        timeout_fix: str = "allow more with --timeout",
    ) -> None:
        """Start the worker for ``devices`` CPU devices; ``device_order`` is the device id at
        each row-major mesh position (``Mesh.device_order``; None: 0, 1, 2...).
        ``background``: the worker yields the processors to the rest (a niceness of 10).
        ``timeout_fix``: how the user allows more time, said when the compile runs out."""
        self._timeout_fix = timeout_fix
        self.devices = devices
        self._order = [int(d) for d in device_order] if device_order else None
        self._env = {NICE_ENV: "10"} if background else {}
        self._text: str | None = None
        self._stoppable = False
        self._early: dict[str, str] | None = None  # the job's, once given
        self._stop_asked = False
        self._scratch: Path | None = None
        self._given = threading.Event()
        self._report: dict | None = None
        self._error: BaseException | None = None
        self._cancel = Cancel()
        self._thread = threading.Thread(
            target=self._work, args=(devices, timeout), name="xla-compile", daemon=True
        )
        self._thread.start()

    def give(
        self,
        module_text: str | None,
        device_order: Sequence[int] | None = None,
        *,
        stoppable: bool = False,
    ) -> None:
        """The module to compile (None: nothing to compile; the worker is ended), and the
        mesh's device order where it was not known when the worker started.
        ``stoppable``: XLA dumps the module as it compiles (which makes the compile
        slower), so that ``stop_early`` can end it once the partitioned module is final."""
        if device_order:
            self._order = [int(d) for d in device_order]
        self._stoppable = stoppable
        self._text = None if self._cancel.cancelled else module_text
        self._given.set()

    def _job(self, devices: int) -> dict:
        self._given.wait()
        if self._text is None:
            raise _NotWanted
        job: dict = {"module": self._text, "devices": devices}
        if self._order is not None and self._order != list(range(devices)):
            job["device_order"] = self._order
        if self._stoppable and self._scratch is not None:
            job["early"] = self._early = early_job(self._scratch)
            if self._stop_asked:
                request_stop(self._early)
        return job

    @property
    def stoppable(self) -> bool:
        """Whether ``stop_early`` can end this compile (its module was given so)."""
        return self._stoppable and not self._cancel.cancelled

    def stop_early(self) -> bool:
        """End the compile once XLA's partitioned module is final (at once if it is): its
        report then has the collectives and no memory (``early_stopped``). False where
        the compile was not given ``stoppable``."""
        if not self.stoppable:
            return False
        self._stop_asked = True
        early = self._early
        if early is not None:
            request_stop(early)
        return True

    def _work(self, devices: int, timeout: float) -> None:
        try:
            # XLA logs its warnings to the worker's file descriptor 2: kept in a file.
            with tempfile.TemporaryDirectory(prefix="shardscope-compile-") as tmp:
                self._scratch = Path(tmp)
                log = Path(tmp) / "stderr.txt"
                report = run_json_worker(
                    WORKER,
                    lambda: self._job(devices),
                    what=WHAT,
                    cwd=Path.cwd(),
                    timeout=timeout,
                    devices=devices,
                    env={**_NO_CACHE, **self._env, **self._cancel.worker_env(Path(tmp))},
                    log=log,
                    timeout_fix=self._timeout_fix,
                )
                log_text = log.read_text(errors="replace") if log.exists() else ""
            warnings = read_warnings(log_text)
            if warnings:  # joined to their ops (a scan of the whole module's text)
                op_names = instruction_op_names(report["hlo_text"].splitlines())
                warnings = read_warnings(log_text, op_names)
            report["xla_warnings"] = warnings
            self._report = report
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            self._error = RunCancelled(COMPILE_CANCELLED) if self._cancel.cancelled else exc

    def cancel(self) -> None:
        """End the compile now (a newer edit made it moot): its worker is killed at once,
        whether it is still importing, waiting for the module or compiling; ``report``
        raises ``RunCancelled``."""
        self._cancel.cancel()
        self.give(None)

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the worker to be done (reaped); whether it is."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def report(self) -> dict:
        """The worker's report, with ``xla_warnings``: what XLA logged as warnings or errors
        while compiling (``xla_log.read_warnings``); ``ShardscopeError`` if the compile
        failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._report is not None
        return self._report


class _NotWanted(Exception):
    """The propagation failed: the compile's job is never given."""


def start_compile(mesh: Mesh | None, timeout: float) -> PendingCompile | None:
    """The compile worker started for ``mesh``'s devices (in its device order), or None
    where there is no mesh or it has more than ``MAX_CPU_DEVICES``."""
    if mesh is None or not 0 < mesh.size <= MAX_CPU_DEVICES:
        return None
    return PendingCompile(mesh.size, timeout, mesh.device_order)


def propagate_compiled(
    program: Program,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, SpecLike] | None = None,
    *,
    timeout: float = 300.0,
    started: PendingCompile | None = None,
) -> tuple[PropagationResult, CompileOutcome]:
    """``propagate``, and what XLA compiled of the propagated program (``Compiled``: its
    collectives, each of Shardy's predicted ones told whether one matched it, and memory),
    or why it was not compiled (a mesh over ``MAX_CPU_DEVICES``).

    ``started``: a compile worker started before the program loaded (``start_compile`` of
    the mesh asked for), used where it has the mesh's device count; else it is ended."""
    try:
        target = _as_mesh(mesh) or own_mesh(program)
        size = target.size if target is not None else 0
        own = framework_report(program, target, specs)
    except BaseException:
        if started is not None:
            started.cancel()
        raise
    if started is not None and (own is not None or started.devices != size):
        started.cancel()
        started = None
    if own is not None:
        result = start_propagation(program, mesh, specs).result()
        return result, read_compile(result, own)
    # Started first: the worker imports JAX while the program is annotated.
    compile_ = started or start_compile(target, timeout)
    try:
        pending = start_propagation(program, mesh, specs, keep_annotated=compile_ is not None)
    except BaseException:
        if compile_ is not None:
            compile_.give(None)
        raise
    if compile_ is not None:
        assert target is not None
        compile_.give(pending.annotated_text, target.device_order)
    result = pending.result()
    if compile_ is None:
        return result, NotCompiled(too_many_devices(result.mesh.size), failed=False)
    return result, read_compile(result, compile_.report())


def as_captured(program: Program, mesh: Mesh, specs: Mapping[str | int, SpecLike] | None) -> bool:
    """Whether ``program`` is asked for as it was captured: on its own mesh, in its own
    device order, with no specs of the user's."""
    own = getattr(program, "mesh", None)
    if specs or not own:
        return False
    order = tuple(getattr(program, "device_order", None) or range(mesh.size))
    return dict(mesh.shape) == dict(own) and tuple(mesh.device_order) == order


def framework_report(
    program: Program, mesh: Mesh | None, specs: Mapping[str | int, SpecLike] | None
) -> dict | None:
    """A compile report of the program's own framework's compile (torch_xla's, which a
    torch_xla capture records), where it applies: the program as captured, on its own
    mesh in its own device order, with no specs of the user's. None otherwise (the
    compile is shardscope's own, ``PendingCompile``).

    torch_xla's executables assign the devices 0, 1, 2... in order, so its replica groups
    are device ids already."""
    text = getattr(program, "compiled_hlo", None)
    if not text or mesh is None or not as_captured(program, mesh, specs):
        return None
    from shardscope.backend.hlo.hlo_collectives import read_collectives

    return {
        "ok": True,
        "hlo_text": text,
        "collectives": read_collectives(text, list(range(mesh.size)), mesh.size),
        "memory": None,
        "compiled_by": program.framework,
        "partitioned_by": program.partitioner,
    }


def too_many_devices(size: int) -> str:
    """The note for a mesh of ``size`` devices, over ``MAX_CPU_DEVICES``: not compiled."""
    return (
        f"the compiled collectives and memory are not listed: the mesh has {size} devices "
        f"and one process compiles for at most {MAX_CPU_DEVICES}; propagate on a smaller "
        f"mesh (--mesh) to see them"
    )


def _as_mesh(mesh: Mesh | Mapping[str, int] | None) -> Mesh | None:
    from shardscope.backend.sharding.mesh import Mesh as MeshType

    if mesh is None or isinstance(mesh, MeshType):
        return mesh
    return MeshType.from_dict(dict(mesh))


def explained_collectives(
    result: PropagationResult, report: dict
) -> tuple[list[CompiledCollective], list[PredictedRef], list[OpWarning]]:
    """The collectives of a compile's or a run's ``report`` (``hlo_collectives`` records)
    as ``propagate --json`` gives them: each operand on its program op, the mesh axes of
    the device groups and who wrote them (``describe``), matched with ``result``'s
    predicted collectives and explained (cause, holder, runs per call); with the predicted
    ones no compiled one matched, and XLA's warnings of the compile on their ops."""
    compiled = [compiled_collective(c) for c in report["collectives"]]
    compiled = describe(compiled, result.graph, result.mesh)
    refs = predicted_refs(result.collectives, result.graph)
    compiled, unmatched = match(compiled, refs)
    explained, xla_warnings = explain(result, compiled, report)
    return explained, unmatched, xla_warnings


def read_compile(result: PropagationResult, report: dict) -> Compiled:
    """What the compile worker's ``report`` says XLA compiled of ``result``'s program:
    its collectives (each explained and matched with Shardy's predicted ones) and memory.
    ``ShardscopeError`` where the compile failed."""
    if not report.get("ok"):
        raise ShardscopeError(report.get("error", "the XLA compile failed"))
    explained, unmatched, xla_warnings = explained_collectives(result, report)
    left = {r.index for r in unmatched}
    matched = tuple(
        None if c.kind == "all_slice" else i not in left for i, c in enumerate(result.collectives)
    )
    memory = report.get("memory")
    by = report.get("compiled_by")
    warnings: tuple[str, ...] = ()
    early = bool(report.get("early_stopped"))
    if early:
        warnings = (EARLY_STOPPED,)
    if by:
        warnings = (
            f"the collectives are {by}'s own compile of this graph, as the script ran it "
            f"(partitioned by {report['partitioned_by'].upper()}); its memory is not recorded",
        )
    return Compiled(
        collectives=tuple(explained),
        predicted_matched=matched,
        memory=None if memory is None else {"source": MEMORY_SOURCE, **memory},
        xla_warnings=tuple(xla_warnings),
        compiled_by=by or "shardscope",
        warnings=warnings,
        early_stopped=early,
    )
