"""Where a program's argument is written: the line of its name in the signature of the
file's ``PROGRAM`` function (or of the function a capture recorded the line of), read
from the source text without running it.

A tensor argument such as ``params['layers'][0]['w_out']`` is part of the parameter
``params``; ``argument_line`` finds the line that names that parameter (a signature may
span lines), else the ``def`` line. Text that does not parse as a whole (the lines a saved
session keeps, with gaps) is searched line by line for ``PROGRAM = name`` and ``def name(``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import read_text
from shardscope.backend.program.snippets import MAX_FILE_BYTES

_ROOT = re.compile(r"[A-Za-z_]\w*")
_PROGRAM = re.compile(r"^PROGRAM\s*=\s*(?:[\w.]+\()?([A-Za-z_]\w*)")


@dataclass(frozen=True)
class ArgumentLine:
    """``line`` (1-based) names the argument in ``function``'s signature (``exact``), or is
    the ``def`` line when no parameter of that name was found."""

    line: int
    function: str
    exact: bool


def argument_line(text: str, name: str, def_line: int | None = None) -> ArgumentLine | None:
    """The line of argument ``name`` (a display name such as ``x`` or ``params['w1']``) in
    the signature of ``text``'s ``PROGRAM`` function, or with ``def_line`` of the function
    defined at that line (a capture records it: the ``def`` or its first decorator); None
    when the text does not say which function that is or does not define it."""
    match = _ROOT.match(name)
    root = match.group(0) if match else ""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return _by_lines(text, root, def_line)
    if def_line is not None:
        defs = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and min([node.lineno, *(d.lineno for d in node.decorator_list)])
            <= def_line
            <= node.lineno
        ]
    else:
        function = _program_name(tree)
        if function is None:
            return None
        defs = [
            node
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function
        ]
    if not defs:
        return None
    node = defs[-1]  # the one PROGRAM names, if the module redefines it
    function = node.name
    a = node.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)]
    for param in params:
        if param.arg == root:
            return ArgumentLine(param.lineno, function, True)
    return ArgumentLine(node.lineno, function, False)


def _program_name(tree: ast.Module) -> str | None:
    """The function ``PROGRAM = f`` (or ``PROGRAM = jax.jit(f, ...)``) assigns."""
    name = None
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        if not any(isinstance(t, ast.Name) and t.id == "PROGRAM" for t in node.targets):
            continue
        value = node.value
        while isinstance(value, ast.Call) and value.args:
            value = value.args[0]
        name = value.id if isinstance(value, ast.Name) else None
    return name


_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")


def _by_lines(text: str, root: str, def_line: int | None = None) -> ArgumentLine | None:
    lines = text.splitlines()
    function = None
    start = 0
    if def_line is not None:
        # the def at the recorded line, or below its decorators
        for i in range(max(0, def_line - 1), min(len(lines), def_line + 10)):
            found = _DEF.match(lines[i])
            if found:
                function, start = found.group(1), i
                break
    else:
        for line in lines:
            found = _PROGRAM.match(line)
            if found:
                function = found.group(1)
    if function is None:
        return None
    head = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(function)}\s*\(")
    for i in range(start, len(lines)):
        line = lines[i]
        if head.match(line):
            # the parameter's own line, within the signature's first lines
            word = re.compile(rf"\b{re.escape(root)}\b") if root else None
            for j in range(i, min(i + 20, len(lines))):
                part = lines[j] if j > i else lines[j].split("(", 1)[1]
                if word is not None and word.search(part.split("#", 1)[0]):
                    return ArgumentLine(j + 1, function, True)
                if part.rstrip().endswith(":"):
                    break
            return ArgumentLine(i + 1, function, False)
    return None


def signature_site(program) -> tuple[str, int] | None:
    """Where ``program``'s function is defined, ``(file, line)``: a capture's recorded site,
    else the ``def`` of the ``PROGRAM`` function of its Python file (read, not run);
    None for a module or a file that does not say."""
    if program.def_site is not None:
        return program.def_site
    path = program.path
    if not path or not str(path).endswith(".py"):
        return None
    try:
        text = read_text(path, MAX_FILE_BYTES, "")
    except (OSError, ShardscopeError, ValueError):
        return None
    found = argument_line(text, "")
    return (str(path), found.line) if found is not None else None
