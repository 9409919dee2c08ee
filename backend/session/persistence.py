"""Saving a session: its JSON form, atomic writes, and where the recovery file lives.

A saved session is one JSON object (never a pickle)::

    {"format": "shardscope-session", "version": 2, "source": "example:mlp",
     "mesh": {"axes": [...], ...}, "specs": [{"value": 0, "name": "x", "spec": "data,_"}],
     "view": {...}, "program": {...}}

``"program"`` (``saved_program``) holds the lowered program and its source lines, so a
session opens without running its source; it is null only while the program had not
arrived yet. Version 1 files, written before sessions held their program, are read too.
A session laid over several hosts also has ``"hosts": {"count": 2, "dcn": {"data": 2,
"model": 1}}`` (``host_layout.HostLayout``; ``dcn`` only where the mesh is in that hybrid
order); a file without it is one host, as files written before hosts were.

``build_state`` is the one place that makes this object. It is read back in two steps,
because a program loads off the GUI thread: ``read_state`` checks a file when it is
opened, and ``unpack_state`` turns the mesh, specs and view into objects once the
program's graph has arrived. Specs of arguments and results are matched by their
user-visible names first, so a session still opens after the program changed in ways
that renumber intermediates. ``read_state`` checks the whole file (form, types,
version, every mesh and spec) and ``unpack_state`` checks each spec against its tensor,
so a bad file is refused before anything changes.

Every window writes its own recovery file, ``recovery-PID-N.json`` in ``state_dir()``,
which also records the session file (``"file"``) the edits belong to. Files whose process
no longer runs are what ``orphan_recoveries`` offers at the next start.
"""

from __future__ import annotations

import io
import itertools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, NotRequired, TypedDict, cast

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import (
    MAX_CAPTURE_BYTES,
    pid_alive,
    pid_in,
    read_json,
    shown_path,
    write_atomic,
)
from shardscope.backend.session.host_layout import HostLayout
from shardscope.backend.session.saved_program import check_program
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec, parse_spec, validate_spec

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph

FORMAT = "shardscope-session"
FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
# room for a program at the .mlir limit and its source lines
MAX_SESSION_BYTES = MAX_CAPTURE_BYTES
RECOVERY_PREFIX = "recovery-"
LEGACY_RECOVERY_NAME = "recovery.json"  # the one file all windows shared before

JsonDict = dict[str, object]


class SavedSpec(TypedDict):
    """One user spec: the value's graph id, its user-visible name (or null), its spec, and
    for an intermediate (no name) the name the window shows it by.

    The spec is written in CLI syntax (``data+model?@p1``); a JSON list of entries
    (``Spec.to_json``) is read too.
    """

    value: int
    name: str | None
    spec: str | list[None | str | list[str]]
    display: NotRequired[str]


class SavedState(TypedDict):
    """A saved session, as ``json.load`` gives it back."""

    format: str
    version: int
    source: str | None
    mesh: JsonDict | None
    specs: list[SavedSpec]
    view: JsonDict
    program: NotRequired[JsonDict | None]  # version 2: the program as data (saved_program)
    hosts: NotRequired[JsonDict]  # more than one host: ``HostLayout.to_json``
    file: NotRequired[str]  # recovery files only: the session file the edits belong to


class UnpackedState(NamedTuple):
    """The parts of a saved state that need the program's graph to become objects."""

    mesh: Mesh | None
    specs: dict[int, Spec]
    view: JsonDict


def build_state(
    *,
    source: str | None,
    mesh: Mesh | None,
    specs: Mapping[int, Spec],
    view: Mapping[str, object],
    graph: ProgramGraph | None,
    program: JsonDict | None = None,
    pending: SavedState | None = None,
    hosts: HostLayout | None = None,
) -> SavedState:
    """The JSON object of a session (``program``: its ``saved_program.pack_program`` entry;
    ``hosts``: written where there is more than one). Before its program has arrived (no
    ``graph``), a ``pending`` restored state keeps its spec entries, program and hosts
    exactly as they were saved."""
    entries: list[SavedSpec] = []
    for vid, spec in sorted(specs.items()):
        name = graph.values[vid].name if graph is not None else None
        entry: SavedSpec = {"value": vid, "name": name, "spec": spec.format()}
        if graph is not None and name is None:
            entry["display"] = graph.values[vid].display_name
        entries.append(entry)
    saved_hosts = hosts.to_json() if hosts is not None and hosts.multi else None
    if pending is not None and graph is None:
        entries = list(pending.get("specs", []))
        program = pending.get("program")
        saved_hosts = pending.get("hosts")
    state: SavedState = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "source": source,
        "mesh": mesh.to_json() if mesh is not None else None,
        "specs": entries,
        "view": dict(view),
        "program": program,
    }
    if saved_hosts is not None:
        state["hosts"] = saved_hosts
    return state


def _fail(path: Path | str, problem: str) -> ShardscopeError:
    return ShardscopeError(f"session {path} {problem}: open a file saved by File > Save")


def check_saved(data: object, path: Path | str) -> SavedState:
    """``data`` (a parsed session file) if its whole form is right; ShardscopeError naming
    the first problem otherwise. Meshes and specs are parsed here, so nothing that reads a
    checked state meets a malformed one."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ShardscopeError(
            f"{path} is not a shardscope session: open a .json saved by File > Save"
        )
    version = data.get("version")
    if type(version) is not int:
        raise _fail(path, f"has version {version!r}, not a whole number")
    if version not in READ_VERSIONS:
        raise ShardscopeError(
            f"session {path} has version {version}; this shardscope reads versions "
            f"{READ_VERSIONS[0]} to {READ_VERSIONS[-1]}: open it with the shardscope that saved it"
        )
    source = data.get("source")
    if not source:
        raise ShardscopeError(f"session {path} names no program source: it cannot be opened")
    if not isinstance(source, str):
        raise _fail(path, f"has source {source!r}, not text")
    if data.get("file") is not None and not isinstance(data.get("file"), str):
        raise _fail(path, "has a file entry that is not text")
    mesh = data.get("mesh")
    if mesh is not None:
        if not isinstance(mesh, dict):
            raise _fail(path, "has a mesh that is not an object")
        try:
            Mesh.from_json(mesh)
        except ShardscopeError as exc:
            raise _fail(path, f"has a bad mesh ({exc})") from None
        except (TypeError, ValueError, AttributeError):
            raise _fail(path, "has a mesh in an unknown form") from None
    specs = data.get("specs", [])
    if not isinstance(specs, list):
        raise _fail(path, "has specs that are not a list")
    for i, entry in enumerate(specs):
        if not isinstance(entry, dict):
            raise _fail(path, f"has spec entry {i} that is not an object")
        vid, name, spec = entry.get("value"), entry.get("name"), entry.get("spec")
        if vid is not None and type(vid) is not int:
            raise _fail(path, f"has spec entry {i} whose value {vid!r} is not a whole number")
        if name is not None and not isinstance(name, str):
            raise _fail(path, f"has spec entry {i} whose name {name!r} is not text")
        if "display" in entry and not isinstance(entry["display"], str):
            raise _fail(path, f"has spec entry {i} whose display name is not text")
        if vid is None and name is None:
            raise _fail(path, f"has spec entry {i} with neither a value id nor a name")
        try:
            _parse_saved_spec(spec)
        except ShardscopeError as exc:
            raise _fail(path, f"has spec entry {i} with a bad spec ({exc})") from None
        except (TypeError, ValueError, AttributeError):
            raise _fail(
                path, f"has spec entry {i} with a spec {spec!r} in an unknown form"
            ) from None
    view = data.get("view", {})
    if not isinstance(view, dict):
        raise _fail(path, "has a view that is not an object")
    _check_view(view, path)
    if "hosts" in data:
        try:
            layout = HostLayout.from_json(data["hosts"])
            if mesh is not None:
                layout.check(Mesh.from_json(mesh))
        except ShardscopeError as exc:
            raise _fail(path, f"has a bad hosts entry ({exc})") from None
    program = data.get("program")
    if program is not None:
        if version < 2:
            raise _fail(path, f"has a program entry, which version {version} files do not")
        problem = check_program(program)
        if problem is not None:
            raise _fail(path, f"has {problem}")
    return cast(SavedState, data)


def _frame_key_ok(key: str) -> bool:
    """Whether ``Frame.from_key`` reads ``key`` (``FUNCTION`` or ``FUNCTION/opN.rM``);
    checked here as importing the layout module would load the program room."""
    if "/op" not in key:
        return True
    parts = key.rsplit("/op", 1)[1].split(".r")
    if len(parts) != 2:
        return False
    try:
        int(parts[0]), int(parts[1])
    except ValueError:
        return False
    return True


def _check_view(view: dict, path: Path | str) -> None:
    """The graph view's part of the view state (``GraphView.view_state``)."""
    frames = view.get("frames", [])
    if not isinstance(frames, list) or not all(isinstance(k, str) for k in frames):
        raise _fail(path, "has view frames that are not a list of names")
    for key in frames:
        if not _frame_key_ok(key):
            raise _fail(path, f"has a view frame {key!r} in an unknown form")
    expanded = view.get("expanded") or {}
    if not isinstance(expanded, dict) or not all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in expanded.values()
    ):
        raise _fail(path, "has expanded scopes that are not lists of names per frame")


def _parse_saved_spec(spec: object) -> Spec:
    if isinstance(spec, str):
        return parse_spec(spec)
    if not isinstance(spec, list) or not all(
        e is None
        or isinstance(e, str)
        or (isinstance(e, list) and all(isinstance(a, str) for a in e))
        for e in spec
    ):
        raise TypeError(spec)
    return Spec.from_json(spec)


def read_state(path: Path | str) -> SavedState:
    """Read and check a saved session file; ShardscopeError with the fix if it is bad."""
    path = Path(path)
    fix = "open a file saved by shardscope"
    try:
        data = read_json(path, MAX_SESSION_BYTES, fix, what="session")
    except FileNotFoundError:
        raise ShardscopeError(f"cannot read session {shown_path(path)}: no such file") from None
    return check_saved(data, path)


def unpack_state(
    state: SavedState, graph: ProgramGraph, default_mesh: Mesh | None = None
) -> UnpackedState:
    """The mesh, the specs by value id of ``graph``, and the view of a checked state.

    A spec entry whose name ``graph`` lacks falls back to its id, and an intermediate's
    id must still show its saved display name (a renumbered program looks it up by that
    name). An entry that matches no value is dropped, unless the state holds its own
    program, which every entry must fit. A spec that does not fit its tensor or the mesh is a ShardscopeError
    (a session of another program), so nothing half-applies. A state without a mesh gets
    ``default_mesh``.
    """
    mesh = Mesh.from_json(state["mesh"]) if state.get("mesh") else default_mesh
    specs: dict[int, Spec] = {}
    own_program = state.get("program") is not None
    for entry in state.get("specs", []) or []:
        value = graph.value_by_name(entry["name"]) if entry.get("name") else None
        if value is None:
            vid = entry.get("value")
            display = entry.get("display")
            if (
                display is not None
                and isinstance(vid, int)
                and not (0 <= vid < len(graph.values) and graph.values[vid].display_name == display)
            ):
                vid = next((v.id for v in graph.values if v.display_name == display), None)
            if not isinstance(vid, int) or not 0 <= vid < len(graph.values):
                if own_program:
                    what = repr(entry.get("name") or entry.get("display") or entry.get("value"))
                    raise ShardscopeError(
                        f"the session's spec for {what} names no tensor of its program: "
                        "was it saved for another program?"
                    )
                continue
            value = graph.values[vid]
        spec = _parse_saved_spec(entry["spec"])
        if value.shape is None:
            raise ShardscopeError(
                f"the session shards {value.display_name}, which is not a tensor: "
                "it was saved for another program"
            )
        if mesh is None:
            raise ShardscopeError("the session has specs but no mesh: save it again")
        try:
            validate_spec(spec, mesh, value.shape)
        except ShardscopeError as exc:
            raise ShardscopeError(
                f"the session's spec {spec.format()!r} does not fit {value.display_name} "
                f"({exc}): was it saved for another program?"
            ) from None
        specs[value.id] = spec
    view = dict(state.get("view") or {})
    return UnpackedState(mesh, specs, view)


def unpack_hosts(state: SavedState, mesh: Mesh | None) -> HostLayout:
    """The host layout of a checked state for ``mesh`` (one host where it has none);
    ShardscopeError where it does not fit the mesh."""
    if "hosts" not in state or mesh is None:
        return HostLayout()
    layout = HostLayout.from_json(state["hosts"])
    try:
        layout.check(mesh)
    except ShardscopeError as exc:
        raise ShardscopeError(
            f"the session's hosts do not fit its mesh ({exc}): was it saved for another mesh?"
        ) from None
    return layout


def write_json(path: Path, data: Mapping[str, object], *, private: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (``files.write_atomic``: a reader sees the old
    file or the whole new one, a symlink stays a symlink, only a regular file or a new
    path is written); ``private`` (recovery files, which hold the program's text): readable
    by its owner alone from the moment it is made. ShardscopeError naming why it cannot
    be written."""

    def dump(f) -> None:
        text = io.TextIOWrapper(f, encoding="utf-8", write_through=True)
        json.dump(data, text, indent=1)
        text.detach()  # the file stays open for write_atomic to finish

    write_atomic(path, dump, "choose another file", private=private)


def state_dir() -> Path:
    """Where recovery files live: ``$SHARDSCOPE_STATE_DIR`` or ``~/.local/state/shardscope``."""
    env = os.environ.get("SHARDSCOPE_STATE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "shardscope"


_recovery_numbers = itertools.count(1)


def new_recovery_path() -> Path:
    """A recovery file of this process's own (one per window): ``recovery-PID-N.json``."""
    return state_dir() / f"{RECOVERY_PREFIX}{os.getpid()}-{next(_recovery_numbers)}.json"


def orphan_recoveries() -> list[Path]:
    """Recovery files left by processes that no longer run, newest first. A running
    process's files are its windows' own and are never offered."""
    folder = state_dir()
    try:
        paths = [p for p in folder.iterdir() if p.suffix == ".json"]
    except OSError:
        return []
    found: list[tuple[float, Path]] = []
    for p in paths:
        if p.name == LEGACY_RECOVERY_NAME:
            pid = None
        elif p.name.startswith(RECOVERY_PREFIX):
            pid = pid_in(p.name, RECOVERY_PREFIX)
            if pid is None or pid_alive(pid):
                continue
        else:
            continue
        try:
            found.append((p.stat().st_mtime, p))
        except OSError:
            continue
    return [p for _, p in sorted(found, key=lambda t: t[0], reverse=True)]


def read_recovery(path: Path | str) -> SavedState | None:
    """The state in a recovery file, None if there is none; ShardscopeError if it is bad."""
    path = Path(path)
    if not path.exists():
        return None
    return read_state(path)


def set_aside(path: Path) -> Path:
    """Rename a bad recovery file to ``NAME.bad`` so it is not offered again; the new name."""
    bad = path.with_name(path.name + ".bad")
    try:
        path.replace(bad)
    except OSError:
        path.unlink(missing_ok=True)
    return bad
