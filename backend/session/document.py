"""The session document: program source, mesh, user specs, view state (and, later, propagation).

One ``Session`` is the single source of truth of the GUI; views redraw from it. Each
field announces its changes on ``session.events`` (psygnal), and only on a real change.
Edits go through ``shardscope.backend.session.edits`` so they can be undone. A session saves to JSON
(never pickle), and after every edit it writes a recovery file so a killed process loses
no edits.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from psygnal import Signal, SignalGroup

from shardscope.backend.errors import ShardscopeError, SpecError
from shardscope.backend.sharding.mesh import Mesh, MeshAxis
from shardscope.backend.sharding.spec import Spec, parse_spec, validate_spec

FORMAT_VERSION = 1
RECOVERY_NAME = "recovery.json"
DEFAULT_MESH = Mesh((MeshAxis("data", 4), MeshAxis("model", 2)))


def state_dir() -> Path:
    """Where the recovery file lives: ``$SHARDSCOPE_STATE_DIR`` or ``~/.local/state/shardscope``."""
    env = os.environ.get("SHARDSCOPE_STATE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "shardscope"


def recovery_path() -> Path:
    """The recovery file written after every edit."""
    return state_dir() / RECOVERY_NAME


class SessionEvents(SignalGroup):
    """Change notifications of a Session; each fires only when its field really changed."""

    source = Signal(object)  # str | None
    program = Signal(object)  # shardscope.backend.program.load.Program | None
    mesh = Signal(object)  # Mesh | None
    specs = Signal(tuple)  # ids of the values whose user spec changed
    view = Signal(dict)  # the whole view state after the change
    propagation = Signal(object)  # a propagation result, or None when stale


class Session:
    """A program with the user's mesh and specs.

    Specs are keyed by the program graph's value ids. Arguments and results are also
    saved by their user-visible names, so a session still opens after the program changed
    in ways that renumber intermediates.
    """

    def __init__(self, *, recovery: Path | str | None = None) -> None:
        self.events = SessionEvents()
        self._source: str | None = None
        self._program: Any = None
        self._mesh: Mesh | None = None
        self._specs: dict[int, Spec] = {}
        self._view: dict[str, Any] = {}
        self._propagation: Any = None
        self._pending: dict[str, Any] | None = None
        self.recovery_file: Path | None = Path(recovery) if recovery is not None else None

    # -- fields -------------------------------------------------------------------------
    @property
    def source(self) -> str | None:
        """What ``load_program`` was (or will be) called with."""
        return self._source

    @property
    def program(self) -> Any:
        """The loaded ``Program``, or None before loading finished."""
        return self._program

    @property
    def graph(self) -> Any:
        """The program graph, or None."""
        return self._program.graph if self._program is not None else None

    @property
    def mesh(self) -> Mesh | None:
        return self._mesh

    @property
    def specs(self) -> Mapping[int, Spec]:
        """User specs by value id (read-only; edit through commands)."""
        return MappingProxyType(self._specs)

    @property
    def view(self) -> Mapping[str, Any]:
        """View state (expanded scopes, entered function/region, selection...)."""
        return MappingProxyType(self._view)

    @property
    def propagation(self) -> Any:
        """The latest propagation result for the current mesh and specs, or None."""
        return self._propagation

    def value(self, value_id: int) -> Any:
        """A graph value by id; SpecError if there is no program or no such value."""
        graph = self.graph
        if graph is None:
            raise SpecError("no program is loaded: open a program first")
        if not 0 <= int(value_id) < len(graph.values):
            raise SpecError(f"there is no tensor with id {value_id} in {self._program.name}")
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

    def set_program(self, program: Any, *, state: Mapping[str, Any] | None = None) -> None:
        """Make ``program`` current with the mesh and specs of ``state`` (a ``to_json``
        dict) if given, else of a pending restored state, else the program's own defaults."""
        state = state if state is not None else self._pending
        self._pending = None
        self._program = program
        self.set_source(program.source)
        if state is not None:
            mesh = Mesh.from_json(state["mesh"]) if state.get("mesh") else None
            specs = self._specs_from_json(program.graph, state.get("specs", []), mesh)
            view = dict(state.get("view") or {})
        else:
            mesh = Mesh.from_dict(program.mesh) if program.mesh else DEFAULT_MESH
            specs = {}
            for name, entries in (program.specs or {}).items():
                value = program.graph.value_by_name(name)
                if value is not None:
                    specs[value.id] = Spec.from_json(entries)
            view = {}
        changed = set(self._specs) | set(specs)
        self._mesh = mesh
        self._specs = specs
        self._view = view
        self._propagation = None
        self.events.program.emit(program)
        self.events.mesh.emit(mesh)
        self.events.specs.emit(tuple(sorted(changed)))
        self.events.view.emit(dict(view))
        self.events.propagation.emit(None)
        self.autosave()

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

    def set_mesh(self, mesh: Mesh, *, prune: bool = False) -> bool:
        """Replace the mesh. With ``prune``, specs drop the axes it lacks; without, a spec
        that uses a missing axis is an error (and nothing changes)."""
        if mesh == self._mesh:
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
                    type(d)(tuple(a for a in d.axes if a in names), d.is_open, d.priority)
                    for d in spec.dims
                )
                spec = Spec(dims, tuple(a for a in spec.replicated if a in names))
            new_specs[vid] = spec
        self.restore_mesh_and_specs(mesh, new_specs)
        return True

    def restore_mesh_and_specs(self, mesh: Mesh | None, specs: Mapping[int, Spec]) -> None:
        """Set mesh and specs together without validation (undo of a mesh change)."""
        changed = tuple(
            sorted(v for v in set(self._specs) | set(specs) if self._specs.get(v) != specs.get(v))
        )
        mesh_changed = mesh != self._mesh
        if not mesh_changed and not changed:
            return
        self._mesh = mesh
        self._specs = dict(specs)
        self._stale()
        if mesh_changed:
            self.events.mesh.emit(mesh)
        if changed:
            self.events.specs.emit(changed)
        self.autosave()

    def update_view(self, **changes: Any) -> bool:
        """Merge ``changes`` into the view state (JSON-able values); True if it changed."""
        new = {**self._view, **changes}
        if new == self._view:
            return False
        self._view = new
        self.events.view.emit(dict(new))
        return True

    def set_propagation(self, result: Any) -> None:
        """Store a propagation result computed for the current mesh and specs."""
        if result is not self._propagation:
            self._propagation = result
            self.events.propagation.emit(result)

    def _stale(self) -> None:
        if self._propagation is not None:
            self._propagation = None
            self.events.propagation.emit(None)

    # -- what badges show -----------------------------------------------------------------
    def spec_text(self, value_id: int) -> str:
        """The sharding a badge shows: the user's spec, else the propagated one, else the
        code's annotation, else ``?`` (unknown until propagation runs)."""
        spec = self.display_spec(value_id)
        if spec is None:
            return "?"
        return "[" + ", ".join("+".join(d.axes) or "_" for d in spec.dims) + "]"

    def display_spec(self, value_id: int) -> Spec | None:
        """The Spec a view shows for a value (see ``spec_text``), padded to its rank."""
        value_id = int(value_id)
        value = self.graph.values[value_id] if self.graph is not None else None
        spec = self._specs.get(value_id)
        if spec is None and self._propagation is not None:
            spec = _propagated_spec(self._propagation, value_id)
        if spec is None and value is not None and value.code_sharding:
            spec = _code_spec(value.code_sharding)
        if spec is None or value is None:
            return spec
        try:
            return spec.padded(value.rank)
        except SpecError:
            return spec

    def origin(self, value_id: int) -> str:
        """Where ``display_spec`` comes from: ``user``, ``propagated``, ``code`` or ``none``."""
        value_id = int(value_id)
        if value_id in self._specs:
            return "user"
        if self._propagation is not None and _propagated_spec(self._propagation, value_id):
            return "propagated"
        graph = self.graph
        if graph is not None and graph.values[value_id].code_sharding:
            return "code"
        return "none"

    def specs_for_propagation(self) -> dict[int | str, Spec]:
        """The user's specs in the form ``shardscope.backend.propagation.propagate.propagate`` takes."""
        out: dict[int | str, Spec] = {}
        graph = self.graph
        for vid, spec in self._specs.items():
            value = graph.values[vid] if graph is not None else None
            out[value.name if value is not None and value.name else vid] = spec
        return out

    # -- JSON -----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The session as a JSON-able dict (what ``save`` writes)."""
        graph = self.graph
        specs = []
        for vid, spec in sorted(self._specs.items()):
            name = graph.values[vid].name if graph is not None else None
            specs.append({"value": vid, "name": name, "spec": spec.format()})
        if self._pending is not None and graph is None:
            specs = list(self._pending.get("specs", []))
        return {
            "format": "shardscope-session",
            "version": FORMAT_VERSION,
            "source": self._source,
            "mesh": self._mesh.to_json() if self._mesh is not None else None,
            "specs": specs,
            "view": dict(self._view),
        }

    def save(self, path: Path | str) -> None:
        """Write the session as JSON (atomically)."""
        _write_json(Path(path), self.to_json())

    @staticmethod
    def read(path: Path | str) -> dict[str, Any]:
        """Read and check a saved session file; ShardscopeError with the fix if it is bad."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ShardscopeError(f"cannot read session {path}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise ShardscopeError(
                f"session {path} is not JSON (line {exc.lineno}): open a file saved by shardscope"
            ) from None
        if not isinstance(data, dict) or data.get("format") != "shardscope-session":
            raise ShardscopeError(
                f"{path} is not a shardscope session: open a .json saved by File > Save"
            )
        if not data.get("source"):
            raise ShardscopeError(f"session {path} names no program source: it cannot be opened")
        return data

    def restore(self, state: Mapping[str, Any]) -> None:
        """Take the source, mesh, specs and view of a saved state; specs are applied when
        the program (loaded off the GUI thread) arrives through ``set_program``."""
        self._pending = dict(state)
        self.set_source(state.get("source"))
        if self._program is not None and self._program.source == state.get("source"):
            self.set_program(self._program)

    def _specs_from_json(self, graph: Any, entries: Any, mesh: Mesh | None) -> dict[int, Spec]:
        specs: dict[int, Spec] = {}
        for entry in entries or []:
            value = graph.value_by_name(entry["name"]) if entry.get("name") else None
            if value is None:
                vid = entry.get("value")
                if not isinstance(vid, int) or not 0 <= vid < len(graph.values):
                    continue
                value = graph.values[vid]
            spec = entry["spec"]
            specs[value.id] = parse_spec(spec) if isinstance(spec, str) else Spec.from_json(spec)
        return specs

    # -- recovery -----------------------------------------------------------------------
    def autosave(self) -> None:
        """Write the recovery file (if this session has one)."""
        if self.recovery_file is not None and self._source:
            try:
                _write_json(self.recovery_file, self.to_json())
            except OSError:
                pass  # a full disk must not break editing; the next edit tries again

    def discard_recovery(self) -> None:
        """Remove the recovery file (after a clean exit)."""
        if self.recovery_file is not None:
            try:
                self.recovery_file.unlink()
            except FileNotFoundError:
                pass


def read_recovery(path: Path | str | None = None) -> dict[str, Any] | None:
    """The state left by a session that did not exit cleanly, or None."""
    path = Path(path) if path is not None else recovery_path()
    if not path.exists():
        return None
    try:
        return Session.read(path)
    except ShardscopeError:
        return None


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _propagated_spec(result: Any, value_id: int) -> Spec | None:
    """The final spec of a value in a propagation result (``values[].spec`` lists)."""
    index = getattr(result, "_shardscope_by_id", None)
    if index is None:
        index = {v.id: v for v in getattr(result, "values", [])}
        try:
            result._shardscope_by_id = index
        except AttributeError:
            pass
    info = index.get(value_id)
    if info is None:
        return None
    return Spec.of(*[tuple(d) if d else None for d in info.spec])


def _code_spec(text: str) -> Spec | None:
    """A Spec from a code annotation (``#sdy.sharding<@mesh, [{"data"}, {}]>``), if readable."""
    try:
        from shardscope.backend.sharding.sdy_text import parse_sdy_sharding
    except ImportError:
        return None
    try:
        parsed = parse_sdy_sharding(text)
    except Exception:
        return None
    spec = getattr(parsed, "spec", None)
    return spec if isinstance(spec, Spec) else None
