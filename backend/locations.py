"""Read MLIR location text: the op's name path and the user's source line.

jaxlib's Python bindings can build locations but cannot take them apart, so we read the
printed form of one location attribute. Its grammar is small and closed:

    loc ::= 'unknown' | STRING | STRING '(' loc ')' | STRING ':' INT ':' INT [range]
          | 'callsite' '(' loc 'at' loc ')' | 'fused' ['<' ... '>'] '[' loc (',' loc)* ']'

and only strings carry what we need, so we read strings in order instead of building a tree.

JAX writes the op's name stack as the outermost name (``"jit(f)/block/add"``) and the user
frames as call sites whose innermost callee is the line that built the op.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceInfo:
    """What one op location says: its name path and the user frame that created it."""

    name: str | None
    file: str | None
    line: int | None


def _read_string(text: str, start: int) -> tuple[str, int]:
    """Read the quoted string at ``text[start] == '"'``; return it and the index after it."""
    i = start + 1
    pieces = []
    while True:
        quote = text.find('"', i)
        slash = text.find("\\", i, quote if quote >= 0 else len(text))
        if quote < 0:
            raise ValueError("unterminated string")
        if slash < 0:
            pieces.append(text[i:quote])
            return "".join(pieces), quote + 1
        pieces.append(text[i:slash])
        escaped = text[slash + 1 : slash + 2]
        pieces.append({"n": "\n", "t": "\t"}.get(escaped, escaped))
        i = slash + 2


def _read_int(text: str, start: int) -> int:
    end = start
    while end < len(text) and text[end].isdigit():
        end += 1
    return int(text[start:end])


def parse_location(text: str) -> SourceInfo:
    """Parse a printed location such as ``loc("jit(f)/add"("f.py":3:4))``.

    Returns the outermost name (JAX's name stack for ops, the key path for arguments)
    and the first file:line in the location. Call sites print the callee before the
    caller, so the first file in reading order is the innermost user frame: the line
    that created the op. Unreadable text gives an empty ``SourceInfo`` rather than an
    error: a location is decoration, never a reason to refuse a module.
    """
    body = text.strip()
    if body.startswith("loc(") and body.endswith(")"):
        body = body[4:-1]
    if body.startswith("fused"):
        bracket = body.find("[")
        body = body[bracket + 1 :] if bracket >= 0 else ""
    name = file = line = None
    try:
        if body.startswith('"'):
            value, end = _read_string(body, 0)
            if not (body.startswith(":", end) and body[end + 1 : end + 2].isdigit()):
                name = value
        pos = 0
        while True:
            quote = body.find('"', pos)
            if quote < 0:
                break
            value, end = _read_string(body, quote)
            if body.startswith(":", end) and body[end + 1 : end + 2].isdigit():
                file, line = value, _read_int(body, end + 1)
                break
            pos = end
    except ValueError:
        return SourceInfo(None, None, None)
    return SourceInfo(name, file, line)


def split_name_path(name: str) -> list[str]:
    """Split ``jit(f)/transpose(jvp(block))/add`` on slashes outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(name):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "/" and depth == 0:
            parts.append(name[start:i])
            start = i + 1
    parts.append(name[start:])
    return [p for p in parts if p]


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
