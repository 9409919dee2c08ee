"""Source lines kept with a program: the lines around each op's location, read when the
program loads, so a session saved from it shows the code it was made from without the
files, and without running anything.

``Snippets`` maps a file path to ``{line number: text}`` (1-based). Only lines near an op
are kept, with ``CONTEXT`` lines either side, and at most ``MAX_BYTES`` in all: files
that cannot be read, are not UTF-8 text or are larger than ``MAX_FILE_BYTES`` are left out.
"""

from __future__ import annotations

from collections.abc import Iterable

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import read_text

Snippets = dict[str, dict[int, str]]

CONTEXT = 12
MAX_FILE_BYTES = 2_000_000
MAX_BYTES = 1_000_000


def read_snippets(locations: Iterable[tuple[str | None, int | None]]) -> Snippets:
    """The lines around each ``(file, line)`` in ``locations``, from the files as they are
    now; files are read in path order until ``MAX_BYTES`` of lines are kept."""
    wanted: dict[str, set[int]] = {}
    for path, line in locations:
        if path and line:
            wanted.setdefault(path, set()).add(line)
    out: Snippets = {}
    budget = MAX_BYTES
    for path in sorted(wanted):
        lines = _read_lines(path)
        if lines is None:
            continue
        keep: dict[int, str] = {}
        for line in sorted(wanted[path]):
            for n in range(max(1, line - CONTEXT), min(len(lines), line + CONTEXT) + 1):
                keep.setdefault(n, lines[n - 1])
        size = sum(len(t) + 1 for t in keep.values())
        if size > budget:
            continue
        budget -= size
        out[path] = dict(sorted(keep.items()))
    return out


def _read_lines(path: str) -> list[str] | None:
    try:
        return read_text(path, MAX_FILE_BYTES, "").splitlines()
    except (OSError, ShardscopeError, ValueError):
        return None


def snippet_text(lines: dict[int, str]) -> str:
    """The file as far as ``lines`` know it: kept lines at their own line numbers, the
    lines between them left empty, so line ``n`` of the text is line ``n`` of the file."""
    if not lines:
        return ""
    last = max(lines)
    return "\n".join(lines.get(n, "") for n in range(1, last + 1))


def check_snippets(data: object) -> Snippets:
    """``data`` read back from JSON (line numbers as text keys) as ``Snippets``; ValueError
    naming the first problem if it is not that form."""
    if not isinstance(data, dict):
        raise ValueError("source lines that are not an object")
    out: Snippets = {}
    total = 0
    for path, lines in data.items():
        if not isinstance(lines, dict):
            raise ValueError(f"source lines of {path!r} that are not an object")
        kept: dict[int, str] = {}
        for key, text in lines.items():
            if not (isinstance(key, str) and key.isascii() and key.isdigit()) or not (
                0 < int(key) <= 10_000_000
            ):
                raise ValueError(f"a source line number {key!r} of {path!r}")
            if not isinstance(text, str):
                raise ValueError(f"source line {key} of {path!r} that is not text")
            total += len(text)
            kept[int(key)] = text
        out[path] = kept
    if total > 4 * MAX_BYTES:
        raise ValueError(f"{total} characters of source lines, over {4 * MAX_BYTES}")
    return out
