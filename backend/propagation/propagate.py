"""Run Shardy's propagation as the compiler does and explain what it did.

``prepare`` parses the program, tags its ops, annotates it and inlines its calls;
``propagate`` runs the registered pipeline (``pipeline``) on that module and reads it back
onto the program graph, both in a forked copy of the calling process (``guard``), so a
compiler crash cannot take the window or the CLI down. It needs no devices, so any mesh
size works, and it costs a fraction of a compile.

The module is read twice: right after propagation for the steps, and at the end of the
pipeline (after ``sdy-close-shardings``, the point where XLA writes ``after_propagation``)
for the final shardings the compiler hands on. The steps are read from the
``sdy.data_flow_edge`` ops themselves, before they are sunk: sinking keeps only the
non-empty edge lists of a loop or call, so their positions no longer say which result or
argument they belong to, and exporting named computations back into calls drops them.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from jaxlib.mlir import ir

from shardscope.backend.errors import MeshError, ProgramError, ShardscopeError, SpecError
from shardscope.backend.program.graph import ProgramGraph, build_graph
from shardscope.backend.program.mlir import ModuleView, detached_copy, new_context, run_passes
from shardscope.backend.propagation import sdyread
from shardscope.backend.propagation.annotate import (
    Annotation,
    SpecLike,
    annotate,
    name_constraints,
    origin_describer,
)
from shardscope.backend.propagation.conflicts import find_conflicts, read_rules
from shardscope.backend.propagation.guard import ChildCrashed, run_forked, start_forked
from shardscope.backend.propagation.pipeline import pipeline_stages, route
from shardscope.backend.propagation.predicted_collectives import predict_collectives
from shardscope.backend.propagation.program_index import ProgramIndex, inline_calls
from shardscope.backend.propagation.readback import read_state
from shardscope.backend.propagation.result import PropagationResult, final_dims, value_infos
from shardscope.backend.propagation.sdywrite import MESH_NAME
from shardscope.backend.propagation.timeline import Timeline, complete
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.sdy_text import axes_in
from shardscope.backend.sharding.values import ValueSharding

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.conflicts import Conflict
    from shardscope.backend.propagation.predicted_collectives import Collective


def _as_mesh(mesh: Mesh | Mapping[str, int] | None) -> Mesh | None:
    if mesh is None or isinstance(mesh, Mesh):
        return mesh
    return Mesh.from_dict(dict(mesh))


def own_mesh(program: object, device_order: Sequence[int] | None = None) -> Mesh | None:
    """A loaded program's own mesh (``Program.mesh``) in ``device_order`` where given, else
    in its own (``Program.device_order``; 0, 1, 2... where it has none); None without a
    mesh, a ``MeshError`` naming the fix where a device order was given for none."""
    mesh = getattr(program, "mesh", None)
    if not mesh:
        if device_order:
            raise MeshError(
                "a device order needs a mesh and the program has none: give one with --mesh, "
                "e.g. --mesh data=4,model=2"
            )
        return None
    return Mesh.from_dict(dict(mesh), device_order or getattr(program, "device_order", None))


def _program_text(program: Program | str) -> tuple[str, str]:
    if isinstance(program, str):
        return "module", program
    return getattr(program, "name", "program"), program.mlir_text


@dataclass
class Prepared:
    """An annotated module ready for Shardy: tags set, user specs applied, calls inlined."""

    name: str
    module: ir.Module | ModuleView
    graph: ProgramGraph
    index: ProgramIndex
    mesh: Mesh
    annotations: list[Annotation]
    # The module as annotated, before its calls were inlined, with its locations: what
    # XLA compiles for the session (kept only when asked for).
    annotated_text: str | None = None
    # ``Program.framework`` and ``Program.partitioner`` of the program.
    framework: str = "jax"
    partitioner: str = "shardy"


@dataclass
class Parsed:
    """A program's module parsed and tagged, before any sharding is written on it.

    ``prepare`` annotates it in place; ``annotated_copy`` annotates a copy, so one parse
    serves every propagation of the same program (the window's edits).
    """

    name: str
    text: str
    module: ir.Module
    graph: ProgramGraph
    index: ProgramIndex
    mesh: Mesh | None  # the program's own, if it has one
    framework: str = "jax"
    partitioner: str = "shardy"

    @functools.cached_property
    def own_axes(self) -> list[str]:
        """Mesh axes the program's own shardings name."""
        return _own_axes(self.text)


def parse(program: Program | str, *, threads: bool = True) -> Parsed:
    """Parse ``program``'s StableHLO in a fresh context and tag its ops (``ProgramIndex``).

    ``threads=False`` keeps the context's work (parsing included) on the calling thread:
    what a forked child needs, whose copy of the shared thread pool has no threads.
    """
    name, text = _program_text(program)
    ctx = new_context()
    if not threads:
        ctx.enable_multithreading(False)
    sdyread.clear_cache()
    try:
        module = ir.Module.parse(text, context=ctx)
    except ir.MLIRError as exc:
        raise ProgramError(
            f"cannot parse the program's StableHLO: {str(exc).splitlines()[0]}"
        ) from None
    graph = program.__dict__.get("graph") if not isinstance(program, str) else None
    if graph is None:
        graph = build_graph(module)
        if not isinstance(program, str):
            # Each edit re-propagates the same program: its graph (built from the same
            # text, so with the same ids) is built once.
            program.__dict__["graph"] = graph
    own = own_mesh(program) or _as_mesh(graph.meshes.get(MESH_NAME))
    return Parsed(
        name,
        text,
        module,
        graph,
        ProgramIndex(module, graph),
        own,
        getattr(program, "framework", "jax"),
        getattr(program, "partitioner", "shardy"),
    )


def prepare(
    program: Program | str,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, SpecLike] | None = None,
    *,
    strict: bool | None = None,
    keep_annotated: bool = False,
) -> Prepared:
    """Parse ``program``, tag its ops, apply ``mesh`` and ``specs`` and inline its calls.

    Arguments as for ``propagate``; the returned module is what Shardy's pipeline runs on.
    ``keep_annotated`` keeps the annotated module's text (``Prepared.annotated_text``).
    """
    user_specs = specs is not None
    if specs is None:
        specs = getattr(program, "specs", None) or {}
    strict = user_specs if strict is None else strict
    parsed = parse(program)
    return _annotate(parsed, parsed.module, parsed.index, mesh, specs, strict, keep_annotated)


def annotated_copy(
    parsed: Parsed,
    mesh: Mesh | Mapping[str, int] | None,
    specs: Mapping[str | int, SpecLike],
    *,
    strict: bool,
    keep_annotated: bool = False,
) -> Prepared:
    """A copy of ``parsed``'s module annotated with ``mesh`` and ``specs``, calls inlined;
    ``parsed`` stays as it was, ready for the next copy. ``keep_annotated`` as for
    ``prepare``."""
    module, index = detached_copy(parsed.module), parsed.index.copy()
    return _annotate(parsed, module, index, mesh, specs, strict, keep_annotated)


def _annotate(
    parsed: Parsed,
    module: ir.Module | ModuleView,
    index: ProgramIndex,
    mesh: Mesh | Mapping[str, int] | None,
    specs: Mapping[str | int, SpecLike],
    strict: bool,
    keep_annotated: bool = False,
) -> Prepared:
    mesh = _as_mesh(mesh) or parsed.mesh
    if mesh is None:
        raise SpecError("the program has no mesh: give one with --mesh, e.g. --mesh data=4,model=2")
    _check_own_axes(parsed.own_axes, parsed.graph, mesh)
    graph = parsed.graph
    annotations = annotate(module, graph, index, mesh, specs, strict)
    text = module.operation.get_asm(enable_debug_info=True) if keep_annotated else None
    inline_calls(module, index)
    index.alias_calls()
    return Prepared(
        parsed.name,
        module,
        graph,
        index,
        mesh,
        annotations,
        text,
        parsed.framework,
        parsed.partitioner,
    )


# A sharding on the mesh the session's replaces, up to its closing ``>``; and the axes a
# shard_map body is manual over.
_ON_MESH = re.compile(r"<@" + MESH_NAME + r",\s*\[[^>]*>")
_MANUAL = re.compile(r"manual_axes=\{([^}]*)\}")


def _own_axes(text: str) -> list[str]:
    """The mesh axes the program's own shardings and shard_map bodies name."""
    used: dict[str, None] = {}
    for m in _ON_MESH.finditer(text):
        used.update(dict.fromkeys(a.split(":")[0] for a in axes_in(m.group(0))))
    for m in _MANUAL.finditer(text):
        used.update(dict.fromkeys(a.split(":")[0] for a in axes_in(m.group(1))))
    return list(used)


def _check_own_axes(used: list[str], graph: ProgramGraph, mesh: Mesh) -> None:
    """Refuse a mesh that lacks axes the program's own shardings name.

    The session's mesh replaces the module's ``@mesh``; Shardy aborts the process (an LLVM
    fatal error, "unknown axis name") on a sharding whose axis that mesh lacks.
    """
    missing = [a for a in used if a not in mesh.shape]
    if not missing:
        return
    own = graph.meshes.get(MESH_NAME) or {}
    wanted = {**mesh.shape, **{a: own.get(a, 2) for a in missing}}
    example = ",".join(f"{a}={n}" for a, n in wanted.items())
    axes, them = ("axes", "them") if len(missing) > 1 else ("axis", "it")
    raise SpecError(
        f"the program's own shardings use mesh {axes} {', '.join(missing)}, which the "
        f"mesh {', '.join(f'{a}={n}' for a, n in mesh.shape.items())} lacks; add {them} to "
        f"the mesh (--mesh {example}, or the program's MESH)"
    )


def final_state(prep: Prepared) -> dict[int, ValueSharding]:
    """Shardings (by graph id) in ``prep.module`` as it stands (after whatever passes ran)."""
    return read_state(prep.module, prep.index, prep.graph, debug=False)[0]


def propagate(
    program: Program | str,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, SpecLike] | None = None,
    *,
    strict: bool | None = None,
    conflicts: bool = True,
    collectives: bool = True,
) -> PropagationResult:
    """Annotate ``program`` with ``mesh`` and ``specs``, run Shardy, and explain the result.

    ``program`` is a loaded ``Program`` (or StableHLO text). Without ``mesh`` / ``specs``
    the program's own ``MESH`` / ``SPECS`` apply. ``specs`` maps an argument name
    (``x``, ``params['w1']``), ``result[i]``, or an intermediate's graph value id or display
    name to a ``Spec``, JAX PartitionSpec, CLI text or JSON entries. ``strict`` (default:
    on for user specs, off for the program's) wants one spec entry per dimension.
    Raises ``SpecError`` / ``MeshError`` for bad input, ``ShardscopeError`` if Shardy fails.
    """
    return start_propagation(
        program, mesh, specs, strict=strict, conflicts=conflicts, collectives=collectives
    ).result()


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    # Tens of thousands of small acyclic objects are made here; the cyclic collector
    # would walk them many times over for nothing.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_enabled:
            gc.enable()


def start_propagation(
    program: Program | str,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, SpecLike] | None = None,
    *,
    strict: bool | None = None,
    conflicts: bool = True,
    collectives: bool = True,
    keep_annotated: bool = False,
) -> PendingPropagation:
    """``propagate``, with Shardy left running in its forked child: the caller goes on
    and asks ``result`` later. Bad input raises here, as ``propagate`` raises it.
    ``keep_annotated`` keeps the annotated module's text (``annotated_text``)."""
    with _no_cyclic_gc():
        prep = prepare(program, mesh, specs, strict=strict, keep_annotated=keep_annotated)
    return PendingPropagation(prep, conflicts, collectives)


class PendingPropagation:
    """Shardy running on a prepared module in a forked child (``guard``), where a crash
    cannot take the caller down; ``result`` waits for it."""

    def __init__(self, prep: Prepared, conflicts: bool, collectives: bool) -> None:
        self._prep, self._conflicts, self._collectives = prep, conflicts, collectives
        self._child = start_forked(lambda: _in_child(prep, True, conflicts, collectives))

    @property
    def annotated_text(self) -> str | None:
        """The annotated module's text, if ``start_propagation`` was asked to keep it."""
        return self._prep.annotated_text

    def result(self) -> PropagationResult:
        """The result; ``ShardscopeError`` if Shardy crashed or ran out of time."""
        prep, conflicts, collectives = self._prep, self._conflicts, self._collectives
        with _no_cyclic_gc():
            # Shardy has crashed with ``debug-sharding-origins`` on where it ran without it.
            try:
                result = self._child.result()
            except ChildCrashed:
                result = _without_records(prep, conflicts, collectives)
        return result.with_graph(prep.graph)

    def cancel(self) -> None:
        """Stop the child if it still runs (the result is no longer wanted)."""
        self._child.cancel()


def _without_records(prep: Prepared, conflicts: bool, collectives: bool) -> PropagationResult:
    """Shardy again, where it crashed recording where each axis came from: without that
    record, then, where it crashes recording its edges too, without those (its final
    shardings; the timeline marks each step not recorded). Each says what it left out."""
    try:
        result = run_forked(lambda: _in_child(prep, False, conflicts, collectives))
        return result.warned(
            "Shardy crashed recording where each axis came from; propagated without "
            "that record, so steps name no origins"
        )
    except ChildCrashed:
        pass
    try:
        result = run_forked(lambda: _in_child(prep, False, conflicts, collectives, edges=False))
    except ChildCrashed as crash:
        raise ShardscopeError(
            f"Shardy crashed on this program ({crash}); check the program's "
            f"shardings against the mesh, or report the module to Shardy"
        ) from None
    return result.warned(
        "Shardy crashed recording its propagation steps; propagated without that record: "
        "the shardings are Shardy's final ones, and the timeline's steps are not Shardy's "
        "record (each is marked not recorded)"
    )


def _in_child(
    prep: Prepared, origins: bool, conflicts: bool, collectives: bool, edges: bool = True
) -> PropagationResult:
    """``_run`` as the forked child does it: the result without the graph the caller has
    and without the module, which cannot be sent."""
    # The context's thread pool has no threads in a forked child: work queued on it
    # would wait forever.
    prep.module.context.enable_multithreading(False)
    return run_prepared(
        prep, origins, conflicts=conflicts, collectives=collectives, edges=edges
    ).without_module()


def run_prepared(
    prep: Prepared,
    origins: bool,
    *,
    conflicts: bool = True,
    collectives: bool = True,
    on_final: Callable[[dict[int, tuple[tuple[str, ...], ...]]], None] | None = None,
    checkpoint: Callable[[], None] | None = None,
    edges: bool = True,
) -> PropagationResult:
    """Run Shardy on a prepared module in this process and explain what it did.

    ``on_final`` gets the final shardings (``result.final_dims``) as soon as propagation
    has run, before the steps, conflicts and collectives are read. ``checkpoint`` is
    called between those later stages; an exception it raises abandons the run.
    Callers other than a forked child want ``propagate``, which runs this where a
    crash cannot reach them.
    """
    module, graph, index, mesh = prep.module, prep.graph, prep.index, prep.mesh
    check = checkpoint or (lambda: None)
    initial = read_state(module, index, graph, debug=False, scope="annotations")[0]

    propagate_passes, export = pipeline_stages(origins, edges)
    run_passes(module, propagate_passes)
    scan = sdyread.Scan(module.operation)
    if on_final is not None:
        # Function boundaries can still change in the export passes (see below): what
        # is sent first is the ops' final shardings and the boundaries as they stand.
        ops_final = read_state(module, index, graph, debug=False, scan=scan)[0]
        on_final(final_dims(graph, ops_final, mesh))
        check()
    after, origins_of, steps, origin_names = read_state(module, index, graph, debug=True, scan=scan)
    check()
    rules = read_rules(module, index, scan) if conflicts else []
    del scan
    check()
    run_passes(module, export)
    # The export passes after propagation change function boundaries (non-divisible
    # input/output shardings are cut, dims closed) but no op's sharding.
    final = dict(after)
    final.update(read_state(module, index, graph, debug=False, scope="io")[0])

    timeline = _timeline(prep, initial, after, steps, origins_of, origin_names)
    check()
    values = value_infos(graph, final, mesh)
    found, predicted = _explained(prep, rules, timeline, conflicts, collectives, check)
    return PropagationResult(
        prep.name,
        mesh,
        graph,
        prep.annotations,
        values,
        timeline,
        module,
        route(origins, edges),
        framework=prep.framework,
        partitioner=prep.partitioner,
        conflicts=found,
        collectives=predicted,
    )


def _timeline(
    prep: Prepared, initial: dict, after: dict, steps: list, origins_of: dict, origin_names: dict
) -> Timeline:
    """Propagation's steps from the state before it (``initial``) to the one after it,
    each axis's origin worded after the annotation it came from; a value Shardy changed
    without recording a step is completed from the program's return."""
    graph, annotations = prep.graph, prep.annotations
    name_constraints(annotations, origin_names, graph)
    describe_origin = origin_describer(annotations)
    timeline = Timeline(
        steps,
        {v: s for v, s in initial.items() if v in after},
        after,
        {v: {ax: describe_origin(o, v) for ax, o in d.items()} for v, d in origins_of.items()},
        prep.mesh.shape,
    )
    main_results = graph.functions[graph.main].results

    def describe(v: int) -> tuple[str, int | None]:
        if v in main_results:
            return "func.return", v
        return "(not recorded by Shardy)", None

    return complete(timeline, describe)


def _explained(
    prep: Prepared,
    rules: list,
    timeline: Timeline,
    conflicts: bool,
    collectives: bool,
    check: Callable[[], None],
) -> tuple[tuple[Conflict, ...], tuple[Collective, ...]]:
    """The conflicts propagation settled and the collectives Shardy predicts, each
    conflict holding the predicted collectives of its op (either skipped when not
    wanted)."""
    index, graph, mesh = prep.index, prep.graph, prep.mesh
    found = (
        find_conflicts(rules, index, graph, timeline, mesh, prep.annotations) if conflicts else []
    )
    check()
    predicted = predict_collectives(prep.module, index, graph, mesh) if collectives else []
    if collectives:
        found = [replace(c, collectives=[x for x in predicted if x.op == c.op]) for c in found]
    return tuple(found), tuple(predicted)
