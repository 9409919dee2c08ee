"""The session document: a program with the user's mesh, specs and view state.

One ``Session`` is the single source of truth of the GUI; views redraw from it. Each
field announces its changes on ``session.events`` (psygnal), and only on a real change.
Edits go through ``shardscope.backend.session.edits`` so they can be undone. After every
edit the session writes a recovery file (``persistence``), so a killed process loses no
edits; which sharding a view shows for a value is decided in ``display``. The hosts the
mesh lies over (``host_layout.HostLayout``) change with the mesh, in the same edits; a
program whose script ran on several hosts (``capture --hosts``) opens laid over them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, cast

from psygnal import Signal, SignalGroup

from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.errors import MeshError, ShardscopeError, SpecError
from shardscope.backend.session.display import (
    FinalSpecs,
    Origin,
    PropagatedSpecs,
    decided_spec,
    shown_origin,
    shown_spec,
)
from shardscope.backend.session.host_layout import HostLayout
from shardscope.backend.session.persistence import (
    JsonDict,
    SavedState,
    UnpackedState,
    build_state,
    read_state,
    unpack_hosts,
    unpack_state,
    write_json,
)
from shardscope.backend.session.saved_program import pack_program
from shardscope.backend.sharding.mesh import Mesh, MeshAxis
from shardscope.backend.sharding.spec import DimSpec, Spec, dims_text, validate_spec

if TYPE_CHECKING:
    from shardscope.backend.cost.price import Pricing
    from shardscope.backend.cost.traffic import HostTraffic
    from shardscope.backend.gspmd.compare import GspmdComparison
    from shardscope.backend.program.graph import ProgramGraph, Value
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.run.compiled import CompileOutcome
    from shardscope.backend.sharding.hosts import Hosts

DEFAULT_MESH = Mesh((MeshAxis("data", 4), MeshAxis("model", 2)))


def _program_mesh(program: Program) -> Mesh:
    """The program's own mesh in its own device order, else ``DEFAULT_MESH``."""
    if not program.mesh:
        return DEFAULT_MESH
    return Mesh.from_dict(program.mesh, getattr(program, "device_order", None))


def _program_hosts(program: Program, mesh: Mesh) -> HostLayout:
    """The hosts a program's script ran on (``capture --hosts``), where they split ``mesh``;
    else one."""
    layout = HostLayout(getattr(program, "hosts", 1))
    try:
        layout.check(mesh)
    except MeshError:
        return HostLayout()
    return layout


class SessionEvents(SignalGroup):
    """Change notifications of a Session; each fires only when its field really changed."""

    source = Signal(object)  # str | None
    program = Signal(object)  # Program | None
    mesh = Signal(object)  # Mesh | None
    hosts = Signal(object)  # HostLayout
    specs = Signal(tuple)  # ids of the values whose user spec changed
    view = Signal(dict)  # the whole view state after the change
    propagation = Signal(object)  # PropagationResult, or None when stale
    final_specs = Signal()  # a propagation's final shardings, ahead of its result
    # XLA's compile of the current propagation came (``Analysis.compiled``), or it failed
    # or was not made (``Analysis.compile_error``, a ``NotCompiled``): the session's
    # ``analysis``.
    compiled = Signal(object)
    # The current propagation and its compile were laid over the hosts and priced
    # (``Analysis.traffic``, ``Analysis.pricing``): the session's ``analysis``.
    priced = Signal(object)
    # GSPMD's compile of the current propagation was compared with it
    # (``Analysis.gspmd``): the session's ``analysis``.
    gspmd = Signal(object)


class Session:
    """A program with the user's mesh and specs.

    Specs are keyed by the program graph's value ids. Arguments and results are also
    saved by their user-visible names, so a session still opens after the program changed
    in ways that renumber intermediates.

    The view state (frame stack, expanded scopes, ...) is a JSON object that the views
    fill and read back; the session only keeps, announces and saves it.
    """

    def __init__(self, *, recovery: Path | str | None = None) -> None:
        self.events = SessionEvents()
        self._source: str | None = None
        self._program: Program | None = None
        self._mesh: Mesh | None = None
        self._hosts = HostLayout()
        self._specs: dict[int, Spec] = {}
        self._view: JsonDict = {}
        # The current propagation with the later steps' records of it; None when stale.
        self._analysis: Analysis | None = None
        self._propagated: PropagatedSpecs | None = None
        self._pending: SavedState | None = None
        self.recovery_file: Path | None = Path(recovery) if recovery is not None else None
        # the session file the document was opened from or saved to; the recovery file
        # keeps it, so restored edits save back to where they belong
        self.file: Path | None = None

    # -- fields -------------------------------------------------------------------------
    @property
    def source(self) -> str | None:
        """What ``load_program`` was (or will be) called with."""
        return self._source

    @property
    def program(self) -> Program | None:
        """The loaded ``Program``, or None before loading finished."""
        return self._program

    @property
    def graph(self) -> ProgramGraph | None:
        """The program graph, or None."""
        return self._program.graph if self._program is not None else None

    @property
    def mesh(self) -> Mesh | None:
        """The device mesh the specs refer to, or None before a program is set."""
        return self._mesh

    @property
    def hosts(self) -> HostLayout:
        """The hosts the mesh lies over (one, until the user says more)."""
        return self._hosts

    def mesh_hosts(self) -> Hosts | None:
        """The ``sharding.hosts.Hosts`` of the mesh, or None without a mesh."""
        return self._hosts.hosts(self._mesh) if self._mesh is not None else None

    @property
    def specs(self) -> Mapping[int, Spec]:
        """User specs by value id (read-only; edit through commands)."""
        return MappingProxyType(self._specs)

    @property
    def view(self) -> Mapping[str, object]:
        """View state (expanded scopes, entered function/region, selection...)."""
        return MappingProxyType(self._view)

    @property
    def propagation(self) -> PropagationResult | None:
        """The latest propagation result for the current mesh and specs, or None."""
        return None if self._analysis is None else self._analysis.propagation

    @property
    def analysis(self) -> Analysis | None:
        """The current propagation with the records of the steps after it (compile, host
        layout, pricing) that have come so far; None without a propagation."""
        return self._analysis

    def value(self, value_id: int) -> Value:
        """A graph value by id; SpecError if there is no program or no such value."""
        program = self._program
        if program is None:
            raise SpecError("no program is loaded: open a program first")
        graph = program.graph
        if not 0 <= int(value_id) < len(graph.values):
            raise SpecError(f"there is no tensor with id {value_id} in {program.name}")
        return graph.values[int(value_id)]

    def spec(self, value_id: int) -> Spec | None:
        """The user's spec on a value, or None."""
        return self._specs.get(int(value_id))

    # -- program ------------------------------------------------------------------------
    def set_source(self, source: str | None) -> None:
        """Record what is being loaded (before the program arrives)."""
        if source != self._source:
            self._source = source
            self.events.source.emit(source)

    def set_program(self, program: Program, *, state: SavedState | None = None) -> None:
        """Make ``program`` current with the mesh and specs of ``state`` (a ``to_json``
        dict) if given, else of a pending restored state, else the program's own defaults."""
        state = state if state is not None else self._pending
        hosts = HostLayout()
        if state is not None:
            mesh, specs, view = self.check_state(program, state)
            hosts = unpack_hosts(state, mesh)
        else:
            mesh = _program_mesh(program)
            hosts = _program_hosts(program, mesh)
            specs = {}
            for name, entries in (program.specs or {}).items():
                value = program.graph.value_by_name(name)
                if value is not None:
                    specs[value.id] = Spec.from_json(entries)
            view = {}
        self._pending = None
        self._program = program
        self.set_source(program.source)
        changed = set(self._specs) | set(specs)
        self._mesh = mesh
        self._hosts = hosts
        self._specs = specs
        self._view = view
        self._set_propagation(None)
        self.events.program.emit(program)
        self.events.mesh.emit(mesh)
        self.events.hosts.emit(hosts)
        self.events.specs.emit(tuple(sorted(changed)))
        self.events.view.emit(dict(view))
        self.events.propagation.emit(None)
        self.autosave()

    @staticmethod
    def check_state(program: Program, state: SavedState) -> UnpackedState:
        """The mesh, specs and view ``state`` gives ``program``; ShardscopeError (and no
        change anywhere) if they, or its hosts, do not fit it."""
        unpacked = unpack_state(state, program.graph, _program_mesh(program))
        unpack_hosts(state, unpacked.mesh)
        return unpacked

    # -- edits (called by commands) -----------------------------------------------------
    def check_spec(self, value_id: int, spec: Spec) -> Spec:
        """Validate ``spec`` for a value against the mesh; return it; SpecError if invalid."""
        value = self.value(value_id)
        if self._mesh is None:
            raise SpecError("there is no mesh yet: draw a mesh before sharding tensors")
        if value.shape is None:
            raise SpecError(f"{value.display_name} is not a tensor: it cannot be sharded")
        validate_spec(spec, self._mesh, value.shape)
        return spec

    def set_spec(self, value_id: int, spec: Spec | None, *, validate: bool = True) -> bool:
        """Set (or with None, remove) the user's spec on a value; True if it changed."""
        value_id = int(value_id)
        if spec is not None and validate:
            self.check_spec(value_id, spec)
        if self._specs.get(value_id) == spec:
            return False
        if spec is None:
            del self._specs[value_id]
        else:
            self._specs[value_id] = spec
        self._stale()
        self.events.specs.emit((value_id,))
        self.autosave()
        return True

    def set_mesh(self, mesh: Mesh, *, prune: bool = False, hosts: HostLayout | None = None) -> bool:
        """Replace the mesh (and the host layout, where given: MeshError if it does not fit
        the mesh). With ``prune``, specs drop the axes it lacks; without, a spec that uses
        a missing axis is an error (and nothing changes)."""
        if hosts is not None:
            hosts.check(mesh)
        if mesh == self._mesh and (hosts is None or hosts == self._hosts):
            return False
        names = set(mesh.axis_names)
        new_specs: dict[int, Spec] = {}
        for vid, spec in self._specs.items():
            missing = [a for a in spec.used_axes if a not in names]
            if missing and not prune:
                raise SpecError(
                    f"the spec of tensor {vid} uses axis {missing[0]!r}, which the new mesh "
                    f"lacks: keep that axis or clear the spec first"
                )
            if missing:
                dims = tuple(
                    DimSpec(tuple(a for a in d.axes if a in names), d.is_open, d.priority)
                    for d in spec.dims
                )
                spec = Spec(dims, tuple(a for a in spec.replicated if a in names))
            new_specs[vid] = spec
        if hosts is None and mesh.size % self._hosts.count:
            hosts = HostLayout()  # a count that no longer splits the devices
        self.restore_mesh_and_specs(mesh, new_specs, hosts)
        return True

    def set_hosts(self, hosts: HostLayout, mesh: Mesh | None = None) -> bool:
        """Lay the mesh over ``hosts`` (with ``mesh``, the same axes in another device
        order, where the layout reorders it); MeshError if it does not fit, and nothing
        changes. True if anything changed."""
        mesh = mesh if mesh is not None else self._mesh
        if mesh is None:
            raise MeshError("there is no mesh yet: open a program before laying out hosts")
        if self._mesh is not None and mesh.axes != self._mesh.axes:
            raise MeshError("a host layout keeps the mesh's axes: edit the mesh first")
        hosts.check(mesh)
        if mesh == self._mesh and hosts == self._hosts:
            return False
        self.restore_mesh_and_specs(mesh, self._specs, hosts)
        return True

    def restore_mesh_and_specs(
        self, mesh: Mesh | None, specs: Mapping[int, Spec], hosts: HostLayout | None = None
    ) -> None:
        """Set mesh, specs and (where given) hosts together without validation (undo of a
        mesh change)."""
        changed = tuple(
            sorted(v for v in set(self._specs) | set(specs) if self._specs.get(v) != specs.get(v))
        )
        mesh_changed = mesh != self._mesh
        hosts_changed = hosts is not None and hosts != self._hosts
        if not mesh_changed and not changed and not hosts_changed:
            return
        self._mesh = mesh
        self._specs = dict(specs)
        if hosts is not None:
            self._hosts = hosts
        if mesh_changed or changed:
            self._stale()
        if mesh_changed:
            self.events.mesh.emit(mesh)
        if hosts_changed:
            self.events.hosts.emit(self._hosts)
        if changed:
            self.events.specs.emit(changed)
        self.autosave()

    def update_view(self, **changes: object) -> bool:
        """Merge ``changes`` into the view state (JSON-able values); True if it changed."""
        new = {**self._view, **changes}
        if new == self._view:
            return False
        self._view = new
        self.events.view.emit(dict(new))
        return True

    def set_propagation(self, result: PropagationResult | None) -> None:
        """Store a propagation result computed for the current mesh and specs."""
        if result is not self.propagation:
            self._set_propagation(result)
            self.events.propagation.emit(result)

    def set_compiled(self, result: PropagationResult, outcome: CompileOutcome) -> None:
        """Keep what XLA's compile made of ``result`` (a ``Compiled``, or a ``NotCompiled``
        saying why there is none) if ``result`` is the current propagation; ignored for
        any other result."""
        if self._analysis is not None and result is self._analysis.propagation:
            # A layout and pricing of the analysis before its compile no longer hold.
            self._analysis = Analysis(result, outcome, gspmd=self._analysis.gspmd)
            self.events.compiled.emit(self._analysis)

    def set_gspmd(self, result: PropagationResult, comparison: GspmdComparison) -> None:
        """Keep GSPMD's comparison with the current propagation; ignored for any other
        result."""
        analysis = self._analysis
        if analysis is not None and result is analysis.propagation:
            self._analysis = analysis.with_parts(gspmd=comparison)
            self.events.gspmd.emit(self._analysis)

    def set_priced(
        self, result: PropagationResult, traffic: HostTraffic, pricing: Pricing | None
    ) -> None:
        """Keep the current propagation's host layout and pricing (as the window shows
        them); ignored for any other result."""
        analysis = self._analysis
        if analysis is None or result is not analysis.propagation:
            return
        if analysis.traffic == traffic and analysis.pricing == pricing:
            return
        self._analysis = analysis.with_parts(traffic=traffic, pricing=pricing)
        self.events.priced.emit(self._analysis)

    def set_final_specs(self, dims: Mapping[int, tuple[tuple[str, ...], ...]]) -> None:
        """Show the final shardings a propagation sends ahead of its result
        (``result.final_dims``) until the result itself comes; ignored unless the session
        is waiting for one (its propagation is stale)."""
        if self.propagation is not None or self.graph is None:
            return
        self._propagated = FinalSpecs(dims, self.graph)
        self.events.final_specs.emit()

    def _stale(self) -> None:
        if self.propagation is not None or self._propagated is not None:
            self._set_propagation(None)
            self.events.propagation.emit(None)

    def _set_propagation(self, result: PropagationResult | None) -> None:
        self._analysis = None if result is None else Analysis(result)
        self._propagated = None

    # -- what views show --------------------------------------------------------------
    def spec_text(self, value_id: int) -> str:
        """The sharding a badge shows: the user's spec, else the propagated one, else the
        code's annotation, else ``?`` (unknown until propagation runs)."""
        return dims_text(self.display_spec(value_id))

    def display_spec(self, value_id: int) -> Spec | None:
        """The Spec a view shows for a value (see ``spec_text``), padded to its rank."""
        return shown_spec(int(value_id), self._specs, self._propagated_specs(), self.graph)

    def laid_out_spec(self, value_id: int) -> Spec | None:
        """The Spec a value's tiles show: what propagation decided once a result lists the
        value, else ``display_spec``."""
        return decided_spec(int(value_id), self._specs, self._propagated_specs(), self.graph)

    def origin(self, value_id: int) -> Origin:
        """Where ``display_spec`` comes from: ``user``, ``propagated``, ``code`` or ``none``."""
        return shown_origin(int(value_id), self._specs, self._propagated_specs(), self.graph)

    def _propagated_specs(self) -> PropagatedSpecs | None:
        if self.propagation is not None and self._propagated is None:
            self._propagated = PropagatedSpecs(self.propagation)
        return self._propagated

    def specs_for_propagation(self) -> dict[int | str, Spec]:
        """The user's specs in the form ``shardscope.backend.propagation.propagate.propagate`` takes."""
        out: dict[int | str, Spec] = {}
        graph = self.graph
        for vid, spec in self._specs.items():
            value = graph.values[vid] if graph is not None else None
            out[value.name if value is not None and value.name else vid] = spec
        return out

    # -- saving ---------------------------------------------------------------------------
    def to_json(self) -> SavedState:
        """The session as a JSON-able dict (what ``save`` writes)."""
        return build_state(
            source=self._source,
            mesh=self._mesh,
            specs=self._specs,
            view=self._view,
            graph=self.graph,
            program=pack_program(self._program) if self._program is not None else None,
            pending=self._pending,
            hosts=self._hosts,
        )

    def save(self, path: Path | str) -> None:
        """Write the session as JSON (atomically)."""
        write_json(Path(path), self.to_json())

    @staticmethod
    def read(path: Path | str) -> SavedState:
        """Read and check a saved session file (``persistence.read_state``)."""
        return read_state(path)

    def restore(self, state: SavedState) -> None:
        """Take the source, mesh, specs and view of a saved state; specs are applied when
        the program (loaded off the GUI thread) arrives through ``set_program``."""
        self._pending = cast(SavedState, dict(state))
        self.set_source(state.get("source"))
        if self._program is not None and self._program.source == state.get("source"):
            self.set_program(self._program)

    # -- recovery -----------------------------------------------------------------------
    def autosave(self) -> None:
        """Write the recovery file (if this session has one)."""
        if self.recovery_file is not None and self._source:
            try:
                state: JsonDict = dict(self.to_json())
                if self.file is not None:
                    state["file"] = str(self.file)
                write_json(self.recovery_file, state, private=True)
            except (OSError, ShardscopeError):
                pass  # a full disk must not break editing; the next edit tries again

    def discard_recovery(self) -> None:
        """Remove the recovery file (after a clean exit)."""
        if self.recovery_file is not None:
            try:
                self.recovery_file.unlink()
            except FileNotFoundError:
                pass
