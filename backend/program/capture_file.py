"""Capture files: the functions a script compiled with ``jax.jit``, written by ``capture``
and opened like programs (``FILE`` for the largest, ``FILE#NAME`` for one by name).

One JSON object::

    {"format": "shardscope-capture", "version": 2, "command": ["python", "train.py"],
     "devices": 8, "ended": "finished", "framework": "jax", "hosts": 1, "warnings": [],
     "functions": [
        {"name": "loss", "module": "jit_loss", "file": "/…/train.py", "line": 9,
         "calls": 3, "ops": 17, "mesh": {"data": 2, "model": 4}, "mlir": "module @jit_loss …"}],
     "skipped": {"jit_multiply": 2}}

``name`` is unique in a file: a function compiled again (new shapes or shardings) is
``loss.2``, ``loss.3``; ``calls`` counts the runs of that compile.
A source names it as ``name_in_source`` writes it (``cap.json#a%23b c`` for ``a#b c``), or
as itself.
``skipped`` counts the compiles that were not of the script's own jitted functions
(JAX's eager operations, libraries' internals) by module name. ``hosts`` (1 where a file
leaves it out) is how many processes the script ran as (``capture --hosts``), each with
``devices / hosts`` devices; its functions are process 0's, and ``warnings`` says where
the others compiled other modules.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from dataclasses import asdict, dataclass, field
from pathlib import Path

from shardscope.backend.errors import ProgramError
from shardscope.backend.files import (
    MAX_JSON_DEPTH,
    MAX_MODULE_BYTES,
    MAX_RECORD_BYTES,
    depth,
    read_head,
    read_json,
    read_text,
)
from shardscope.backend.hlo.syntax import is_hlo_module
from shardscope.backend.program.mlir import has_utf8, text_problem

FORMAT = "shardscope-capture"
VERSION = 2
# Version 1 files (before torch_xla captures) read as JAX captures.
READABLE_VERSIONS = (1, 2)
FRAMEWORKS = ("jax", "torch_xla")
# How a capture file starts ("format" comes first), for telling one from a session file
# without reading it all.
SIGNATURE = re.compile(rf'\s*\{{\s*"format"\s*:\s*"{FORMAT}"')


# What a script is told whose run left something else where a capture keeps its own files
# (the hook's records, the frameworks' dumps).
FOLDER_FIX = (
    "capture a script that does not write into the capture's own folder "
    "($SHARDSCOPE_CAPTURE_DIR, $JAX_DUMP_IR_TO)"
)


def left_json(path: Path, what: str) -> object | None:
    """The JSON a capture's hook left at ``path``, None where it left none; ProgramError
    (one line) where something else is there (a FIFO, a file too large or deep)."""
    try:
        return read_json(path, MAX_RECORD_BYTES, FOLDER_FIX, what=what, error=ProgramError)
    except FileNotFoundError:
        return None


def left_text(path: Path, what: str) -> str | None:
    """The text of a module a capture's framework dumped at ``path``, None where there is
    none; ProgramError (one line) where something else is there."""
    try:
        return read_text(
            path, MAX_MODULE_BYTES, FOLDER_FIX, what=what, error=ProgramError, errors="replace"
        )
    except FileNotFoundError:
        return None


@dataclass
class CapturedFunction:
    """One compile of one jitted function of the script."""

    name: str
    module: str
    mlir: str
    ops: int
    mesh: dict[str, int] | None = None
    file: str | None = None
    line: int | None = None
    # The runs of this compile (not of other compiles of the same jitted function); None:
    # not known (the script was killed, or it compiled it ahead of time).
    calls: int | None = None
    # The device id at each row-major mesh position, where not 0, 1, 2... (torch_xla).
    device_order: list[int] | None = None
    # The partitioner the script's framework compiled it with: "shardy" (JAX) or "gspmd"
    # (torch_xla 2.9).
    partitioner: str = "shardy"
    # The framework's own compiled, partitioned module (HLO text), where recorded
    # (torch_xla's ``after_optimizations`` dump).
    compiled_hlo: str | None = None
    # How the script sharded each argument it sharded, by argument name: the API and its
    # line (``FSDPv2 (its parameters) at train.py:78``; torch_xla captures).
    sharded_by: dict[str, str] | None = None


@dataclass
class Capture:
    """What ``capture`` recorded of one run of a script."""

    command: list[str]
    devices: int
    ended: str
    functions: list[CapturedFunction] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    # "jax", or "torch_xla": each function is then one compiled graph of the script's
    # syncs (``torch_xla.sync``, ``xm.mark_step``).
    framework: str = "jax"
    # The processes the script ran as (``capture --hosts``), ``devices / hosts`` devices
    # each; the functions are process 0's.
    hosts: int = 1
    # What the capture noticed, one line each (hosts that compiled other modules).
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """The capture file's object, "format" first."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "command": list(self.command),
            "devices": self.devices,
            "ended": self.ended,
            "framework": self.framework,
            "hosts": self.hosts,
            "warnings": list(self.warnings),
            "functions": [asdict(f) for f in self.functions],
            "skipped": dict(self.skipped),
        }

    def pick(self, name: str | None, where: str) -> CapturedFunction:
        """The function called ``name`` (as itself, else as ``name_in_source`` writes it),
        or the largest (most ops) without a name; ProgramError naming the ones there are
        otherwise."""
        if not self.functions:
            raise ProgramError(f"{where}: the capture holds no function; capture the script again")
        if name is None:
            return max(self.functions, key=lambda f: f.ops)
        for wanted in (name, _unquoted(name)):
            for function in self.functions:
                if function.name == wanted:
                    return function
        raise ProgramError(
            f"{where}: no captured function {name!r}; choose one of: "
            f"{', '.join(name_in_source(f.name) for f in self.functions)}"
        )


def is_capture_file(path: str | Path) -> bool:
    """Whether ``path`` is a regular file that starts like a capture file (read: its first
    bytes only; a FIFO or device is never read, and opening one does not wait)."""
    head = read_head(path, 256)
    return head is not None and SIGNATURE.match(head.decode("utf-8", "replace")) is not None


def parse_capture(text: str, where: str) -> Capture:
    """A capture file's text as a ``Capture``; ProgramError naming the first problem."""
    try:
        return _parse(text)
    except _Bad as e:
        raise ProgramError(f"{where}: {e}: capture the script again with `capture`") from None


class _Bad(Exception):
    """The first problem found in a capture file's contents."""


def _parse(text: str) -> Capture:
    deep = _Bad(f"its JSON nests deeper than the {MAX_JSON_DEPTH} levels a capture may")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise _Bad("not a capture file (not JSON)") from None
    except RecursionError:
        raise deep from None
    if depth(data) > MAX_JSON_DEPTH:
        raise deep
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _Bad("not a capture file")
    if data.get("version") not in READABLE_VERSIONS:
        raise _Bad(f"a capture of version {data.get('version')!r}, not {VERSION}")
    framework = data.get("framework", "jax")
    if framework not in FRAMEWORKS:
        raise _Bad(f"a capture of framework {framework!r}, not one of {', '.join(FRAMEWORKS)}")
    functions = data.get("functions")
    if not isinstance(functions, list):
        raise _Bad("its functions are not a list")
    out = [_function(i, entry) for i, entry in enumerate(functions)]
    command = data.get("command")
    devices = data.get("devices")
    skipped = data.get("skipped") or {}
    if not isinstance(command, list) or type(devices) is not int or not isinstance(skipped, dict):
        raise _Bad("its command, devices or skipped entries are malformed")
    hosts = data.get("hosts", 1)
    if type(hosts) is not int or hosts < 1 or devices % hosts:
        raise _Bad(f"its host count {hosts!r} is not a whole number that divides its devices")
    warnings = data.get("warnings") or []
    if not isinstance(warnings, list) or not all(
        isinstance(w, str) and has_utf8(w) for w in warnings
    ):
        raise _Bad("its warnings are not lines of text")
    if not all(has_utf8(str(c)) for c in [*command, data.get("ended", ""), *skipped]) or not all(
        has_utf8(axis) for f in out for axis in f.mesh or {}
    ):
        raise _Bad("its command, ended, skipped or mesh entries are not UTF-8 text")
    return Capture(
        [str(c) for c in command],
        devices,
        str(data.get("ended", "")),
        out,
        dict(skipped),
        framework,
        hosts,
        list(warnings),
    )


def _function(i: int, entry: object) -> CapturedFunction:
    """Entry ``i`` of a capture's functions, checked field by field."""
    if not isinstance(entry, dict):
        raise _Bad(f"function {i} is not an object")
    try:
        function = CapturedFunction(**entry)
    except TypeError:
        raise _Bad(f"function {i} has unknown or missing fields") from None
    for key in ("name", "module", "mlir"):
        if not isinstance(getattr(function, key), str):
            raise _Bad(f"function {i} has a {key} that is not text")
    if function.file is not None and not isinstance(function.file, str):
        raise _Bad(f"function {i} has a file that is not text")
    problem = text_problem(function.mlir)
    if problem is not None:
        raise _Bad(
            f"function {i} ({function.name!r}) has module text with {problem}, which "
            f"MLIR does not read"
        )
    for key in ("name", "module", "file"):
        if not has_utf8(getattr(function, key)):
            raise _Bad(f"function {i} has a {key} that is not UTF-8 text (a lone surrogate)")
    if type(function.ops) is not int:
        raise _Bad(f"function {i} has an op count that is not a whole number")
    for key in ("line", "calls"):
        if getattr(function, key) is not None and type(getattr(function, key)) is not int:
            raise _Bad(f"function {i} has a {key} that is not a whole number")
    _check_mesh(i, function.mesh, function.device_order)
    if function.partitioner not in ("shardy", "gspmd"):
        raise _Bad(f"function {i} has an unknown partitioner {function.partitioner!r}")
    compiled = function.compiled_hlo
    if compiled is not None and (not isinstance(compiled, str) or text_problem(compiled)):
        raise _Bad(f"function {i} has a compiled module that is not text")
    if compiled is not None and not is_hlo_module(compiled):
        raise _Bad(
            f"function {i} has a compiled module that is not XLA's HLO text (it does not "
            f"start with HloModule), so its collectives cannot be read"
        )
    by = function.sharded_by
    if by is not None and not (
        isinstance(by, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in by.items())
        and all(has_utf8(k) and has_utf8(v) for k, v in by.items())
    ):
        raise _Bad(f"function {i} has sharding origins that are not names with text")
    return function


def _check_mesh(i: int, mesh: object, order: object) -> None:
    """Function ``i``'s mesh is axis names with sizes, its device order a permutation."""
    if mesh is not None and not (
        isinstance(mesh, dict)
        and all(isinstance(k, str) and type(v) is int and v > 0 for k, v in mesh.items())
    ):
        raise _Bad(f"function {i} has a mesh that is not axis names with sizes")
    if order is not None and not (
        isinstance(order, list)
        and all(type(d) is int for d in order)
        and sorted(order) == list(range(len(order)))
        and (mesh is None or len(order) == _size(mesh))
    ):
        raise _Bad(f"function {i} has a device order that is not a permutation of its mesh")


def _size(mesh: dict[str, int]) -> int:
    size = 1
    for n in mesh.values():
        size *= n
    return size


def split_capture_source(base: str) -> tuple[str, str | None]:
    """``cap.json#loss`` -> (``cap.json``, ``loss``); no name after ``#``: None.

    The file is named up to the first ``.json#`` that ends the name of a file there is
    (else up to the first ``.json#``), so a function's own name may hold ``#``:
    ``cap.json#a#b`` is function ``a#b`` of ``cap.json``.
    """
    cuts = [m.start() + len(".json") for m in re.finditer(r"\.json#", base)]
    if not cuts:
        return base, None
    cut = next((c for c in cuts if os.path.isfile(os.path.expanduser(base[:c]))), cuts[0])
    return base[:cut], base[cut + 1 :] or None


def name_in_source(name: str) -> str:
    """``name`` as a source writes it after ``FILE#``: percent-encoded (UTF-8) where it
    holds ``%`` (the escape), ``#``, ``?`` (which starts a source's parameters) or a
    character that does not print (a newline, a NUL: a command line cannot carry one, or
    a reader cannot see it): ``a%23b c`` for ``a#b c``. ``Capture.pick`` reads it back."""
    return "".join(
        urllib.parse.quote(ch, safe="", errors="surrogatepass")
        if ch in "%#?" or not ch.isprintable()
        else ch
        for ch in name
    )


def capture_source(path: str | Path, name: str) -> str:
    """The source that opens function ``name`` of the capture file at ``path``."""
    return f"{path}#{name_in_source(name)}"


def _unquoted(name: str) -> str | None:
    """``name`` with its percent escapes decoded, None where they are not UTF-8."""
    try:
        return urllib.parse.unquote(name, errors="strict")
    except UnicodeDecodeError:
        return None
