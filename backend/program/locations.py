"""Read MLIR locations: the op's name path and the user's source line.

JAX writes the op's name stack as the outermost name (``"jit(f)/block/add"``) and the user
frames as call sites whose innermost callee is the line that built the op. Locations are
taken apart with the bindings' location classes (``NameLoc``, ``CallSiteLoc``,
``FileLineColLoc``, ``FusedLoc``), never by printing them: a transformer's call-site
chains print to hundreds of characters each, while their parts are shared and read once.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from shardscope.backend.hlo.frames import is_library_file


@dataclass(frozen=True)
class SourceInfo:
    """What one op location says: its name path and the user frame that created it."""

    name: str | None
    file: str | None
    line: int | None


_NO_FILE: tuple[str | None, int | None] = (None, None)
# A frame's file and line; None where a location names none.
_Frame = tuple[str, int] | None
_KINDS = (ir.FileLineColLoc, ir.NameLoc, ir.CallSiteLoc, ir.FusedLoc)


def _concrete(location: ir.Location) -> ir.Location:
    """``location`` as its own class: ops' locations come typed, diagnostics' do not."""
    if type(location) is ir.Location:
        typeid = location.typeid
        for kind in _KINDS:
            if typeid == kind.static_typeid:
                return kind(location)
    return location


class LocationReader:
    """Reads locations of one context; parts shared between locations are read once."""

    def __init__(self) -> None:
        # Per location: the innermost frame, and the innermost outside the libraries.
        self._files: dict[ir.Attribute, tuple[_Frame, _Frame]] = {}
        self._infos: dict[ir.Attribute, SourceInfo] = {}

    def read(self, location: ir.Location) -> SourceInfo:
        """The outermost name (JAX's name stack for ops, the key path for arguments) and
        the user's line: the first file:line in reading order outside the libraries
        (``hlo.frames.is_library_file``: Flax's ``linear.py`` is passed over for the line
        of the user's model that called it), else the first. Call sites list the callee
        before the caller, so that is the innermost user frame, the one the compiled
        module's source lines name too."""
        attr = location.attr
        info = self._infos.get(attr)
        if info is None:
            location = _concrete(location)
            first, user = self._file_of(location)
            info = self._infos[attr] = SourceInfo(_name_of(location), *(user or first or _NO_FILE))
        return info

    def _file_of(self, location: ir.Location) -> tuple[_Frame, _Frame]:
        attr = location.attr
        hit = self._files.get(attr)
        if hit is not None:
            return hit
        location = _concrete(location)
        kind = type(location)
        if kind is ir.FileLineColLoc:
            frame = (location.filename, location.start_line)
            hit = (frame, None if is_library_file(frame[0]) else frame)
        elif kind is ir.NameLoc:
            hit = self._file_of(location.child_loc)
        elif kind is ir.CallSiteLoc:
            inner, inner_user = self._file_of(location.callee)
            if inner_user is not None:
                hit = (inner, inner_user)
            else:
                outer, outer_user = self._file_of(location.caller)
                hit = (inner or outer, outer_user)
        elif kind is ir.FusedLoc:
            hit = (None, None)
            for part in location.locations:
                hit = self._file_of(part)
                if hit[0] is not None:
                    break
        else:
            hit = (None, None)
        self._files[attr] = hit
        return hit


def _name_of(location: ir.Location) -> str | None:
    kind = type(location)
    if kind is ir.NameLoc:
        return location.name_str
    if kind is ir.FusedLoc:
        parts = location.locations
        return _name_of(parts[0]) if parts else None
    return None


def read_location(location: ir.Location) -> SourceInfo:
    """Name path and first file:line of one location (see ``LocationReader.read``)."""
    return LocationReader().read(location)


def split_name_path(name: str) -> list[str]:
    """Split ``jit(f)/transpose(jvp(block))/add`` on slashes outside parentheses."""
    return [p for p in split_outside(name, "/") if p]


def split_outside(text: str, sep: str, opening: str = "(", closing: str = ")") -> list[str]:
    """``text`` split on ``sep`` wherever no ``opening`` bracket is left open (empty parts
    kept): ``split_outside("a(b:c):d", ":")`` is ``["a(b:c)", "d"]``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def scope_of(name: str | None) -> str:
    """The name scope of an op from its name path: ``jit(f)/block/add`` -> ``block``.

    The leading ``jit(...)`` (the traced function) and the trailing primitive are dropped;
    an op at top level has the empty scope.
    """
    if not name:
        return ""
    parts = split_name_path(name)
    if parts and parts[0].startswith(("jit(", "pjit(")):
        parts = parts[1:]
    return "/".join(parts[:-1])
