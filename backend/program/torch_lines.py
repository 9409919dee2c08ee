"""Source lines of the backward ops of a torch_xla capture.

The capture hook (``capture_site/_shardscope_torch_scopes.py``) scopes each backward op
by the module whose forward made it (``backward/layers/0/attn/aten__mm``, or
``backward/recompute/block/fc/...`` for a checkpoint's recomputation) and records the
script's line of each module's first call (``scope_lines`` in ``torch.json``:
``{"layers.0.attn": {"file": ..., "line": ...}}``). A backward op runs in the autograd
engine's thread, so its location names no frame of the script's: none at all, or
torch's own files. ``backward_lines`` gives each such op the line of its module's call,
as the file location of its name: ``loc("backward/layers/0/attn/aten__mm"("/u/s.py":27:0))``.
"""

from __future__ import annotations

import re

from shardscope.backend.hlo.frames import is_library_file
from shardscope.backend.program.mlir import closing_bracket

_STRING = r'"((?:[^"\\]|\\.)*)"'
# An op's name location in the backward scope: its child location, if any, follows.
_BACKWARD = re.compile(r"loc\(" + r'"(backward/(?:[^"\\]|\\.)*)"')
_FILE = re.compile(_STRING + r":\d+:\d+")
_ALIAS = re.compile(r"#loc\d*")
_ALIAS_DEF = re.compile(r"^(#loc\d*) = (.*)$", re.MULTILINE)
_RECOMPUTE = "recompute"


def backward_lines(text: str, scope_lines: object) -> str:
    """``text`` (StableHLO with locations) with each op of the ``backward/<path>`` scope
    whose location names no file of the script's located at ``<path>``'s call in
    ``scope_lines``: the innermost path of its scope that has a line. Ops with a line of
    the script's (a checkpoint's recomputation) and ops of no module keep theirs."""
    lines = _valid(scope_lines)
    if not lines or "backward/" not in text:
        return text
    users = _UserFrames(text)
    pieces: list[str] = []
    done = 0
    for m in _BACKWARD.finditer(text):
        where = line_of(m[1], lines)
        start = m.end()
        if where is None or start < done:
            continue
        end = start
        if text.startswith("(", start):
            end = closing_bracket(text, start)
            if end is None or users.within(text[start + 1 : end]):
                continue
            end += 1
        pieces += [text[done:start], "(", _file_location(*where), ")"]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def line_of(name: str, lines: dict[str, tuple[str, int]]) -> tuple[str, int] | None:
    """The call of the innermost module path in the scope of ``name``
    (``backward/layers/0/mlp/fc1/aten__mm``) that ``lines`` knows: the scope's parts
    without ``backward`` and ``recompute``, the longest run of them ending last first (a
    module called by another that does not hold it is scoped below the caller's path)."""
    parts = [p for p in name.split("/")[1:-1] if p != _RECOMPUTE]
    for end in range(len(parts), 0, -1):
        for start in range(end):
            found = lines.get(".".join(parts[start:end]))
            if found is not None:
                return found
    return None


def _valid(scope_lines: object) -> dict[str, tuple[str, int]]:
    """The entries of the hook's table with a file and a positive line."""
    out: dict[str, tuple[str, int]] = {}
    if not isinstance(scope_lines, dict):
        return out
    for path, where in scope_lines.items():
        if not isinstance(where, dict):
            continue
        file, line = where.get("file"), where.get("line")
        if isinstance(path, str) and isinstance(file, str) and file:
            if isinstance(line, int) and not isinstance(line, bool) and line > 0:
                out[path] = (file, line)
    return out


class _UserFrames:
    """Whether a location names a file of the script's, through the module's location
    aliases (``#loc12 = loc(callsite(...))``), each alias read once."""

    def __init__(self, text: str) -> None:
        self._bodies = {m[1]: m[2] for m in _ALIAS_DEF.finditer(text)}
        self._known: dict[str, bool] = {}

    def within(self, location: str) -> bool:
        if _has_user_file(location):
            return True
        return any(self._alias(a) for a in _ALIAS.findall(location))

    def _alias(self, alias: str) -> bool:
        """Depth first without recursion: call-site chains run hundreds of aliases deep."""
        todo, opened = [alias], set()
        while todo:
            name = todo[-1]
            if name in self._known:
                todo.pop()
                continue
            body = self._bodies.get(name, "")
            refs = _ALIAS.findall(body)
            if name not in opened and not _has_user_file(body):
                opened.add(name)
                todo.extend(a for a in refs if a not in self._known)
                continue
            todo.pop()
            self._known[name] = _has_user_file(body) or any(self._known.get(a) for a in refs)
        return self._known[alias]


def _has_user_file(location: str) -> bool:
    return any(not is_library_file(_unescape(m[1])) for m in _FILE.finditer(location))


def _unescape(text: str) -> str:
    r"""An MLIR string's contents as the string: ``\"``, ``\\`` and ``\XX`` (hex)."""
    return re.sub(
        r"\\([0-9a-fA-F]{2}|.)",
        lambda m: chr(int(m[1], 16)) if len(m[1]) == 2 else m[1],
        text,
    )


def _escape(text: str) -> str:
    return "".join(
        "\\" + c if c in '"\\' else (f"\\{ord(c):02X}" if ord(c) < 0x20 or c == "\x7f" else c)
        for c in text
    )


def _file_location(file: str, line: int) -> str:
    return f'"{_escape(file)}":{line}:0'
