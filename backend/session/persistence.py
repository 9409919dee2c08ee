"""Saving a session: its JSON form, atomic writes, and where the recovery file lives.

A saved session is one JSON object (never a pickle)::

    {"format": "shardscope-session", "version": 1, "source": "example:mlp",
     "mesh": {"axes": [...], ...}, "specs": [{"value": 0, "name": "x", "spec": "data,_"}],
     "view": {...}}

``build_state`` is the one place that makes this object. It is read back in two steps,
because a program loads off the GUI thread: ``read_state`` checks a file when it is
opened, and ``unpack_state`` turns the mesh, specs and view into objects once the
program's graph has arrived. Specs of arguments and results are matched by their
user-visible names first, so a session still opens after the program changed in ways
that renumber intermediates.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypedDict, cast

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec, parse_spec

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph

FORMAT = "shardscope-session"
FORMAT_VERSION = 1
RECOVERY_NAME = "recovery.json"

JsonDict = dict[str, object]


class SavedSpec(TypedDict):
    """One user spec: the value's graph id, its user-visible name (or null), its spec.

    The spec is written in CLI syntax (``data+model?@p1``); a JSON list of entries
    (``Spec.to_json``) is read too.
    """

    value: int
    name: str | None
    spec: str | list[None | str | list[str]]


class SavedState(TypedDict):
    """A saved session, as ``json.load`` gives it back."""

    format: str
    version: int
    source: str | None
    mesh: JsonDict | None
    specs: list[SavedSpec]
    view: JsonDict


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
    pending: SavedState | None = None,
) -> SavedState:
    """The JSON object of a session. Before its program has arrived (no ``graph``), a
    ``pending`` restored state keeps its spec entries exactly as they were saved."""
    entries: list[SavedSpec] = []
    for vid, spec in sorted(specs.items()):
        name = graph.values[vid].name if graph is not None else None
        entries.append({"value": vid, "name": name, "spec": spec.format()})
    if pending is not None and graph is None:
        entries = list(pending.get("specs", []))
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "source": source,
        "mesh": mesh.to_json() if mesh is not None else None,
        "specs": entries,
        "view": dict(view),
    }


def read_state(path: Path | str) -> SavedState:
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
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ShardscopeError(
            f"{path} is not a shardscope session: open a .json saved by File > Save"
        )
    if not data.get("source"):
        raise ShardscopeError(f"session {path} names no program source: it cannot be opened")
    return cast(SavedState, data)


def unpack_state(state: SavedState, graph: ProgramGraph) -> UnpackedState:
    """The mesh, the specs by value id of ``graph``, and the view of a saved state.

    A spec entry whose name ``graph`` lacks falls back to its id; one whose id is not in
    ``graph`` either is dropped.
    """
    mesh = Mesh.from_json(state["mesh"]) if state.get("mesh") else None
    specs: dict[int, Spec] = {}
    for entry in state.get("specs", []) or []:
        value = graph.value_by_name(entry["name"]) if entry.get("name") else None
        if value is None:
            vid = entry.get("value")
            if not isinstance(vid, int) or not 0 <= vid < len(graph.values):
                continue
            value = graph.values[vid]
        spec = entry["spec"]
        specs[value.id] = parse_spec(spec) if isinstance(spec, str) else Spec.from_json(spec)
    view = dict(state.get("view") or {})
    return UnpackedState(mesh, specs, view)


def write_json(path: Path, data: Mapping[str, object]) -> None:
    """Write ``data`` to ``path`` atomically: a reader sees the old file or the whole new
    one, and a failed write leaves no temporary file behind."""
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


def read_recovery(path: Path | str | None = None) -> SavedState | None:
    """The state left by a session that did not exit cleanly, or None."""
    path = Path(path) if path is not None else recovery_path()
    if not path.exists():
        return None
    try:
        return read_state(path)
    except ShardscopeError:
        return None
