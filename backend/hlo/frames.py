"""Source lines of compiled HLO instructions, from the tables at the top of the module.

``compiled.as_text()`` starts with ``FileNames``, ``FunctionNames``, ``FileLocations``
and ``StackFrames`` tables; an instruction's ``metadata={... stack_frame_id=N}`` names
its innermost frame, whose file location gives the file and line (checked on this
machine with jax 0.10.2: frame ``N {file_location_id=L parent_frame_id=P}``, location
``L {file_name_id=F function_name_id=G line=K ...}``). The printed parent is one more
than the caller's frame id: ``inner`` called from ``middle`` called from ``outer`` printed
``5 {... parent_frame_id=5}`` for ``inner``'s frame, whose caller is frame 4, and the
outermost frame says ``parent_frame_id=1``. ``user_source`` walks out from an
instruction's frame past library frames (Flax's ``linear.py``) to the user's own line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_SECTION = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)\s*$")
_NAME = re.compile(r'^(\d+)\s+"(.*)"\s*$')
_RECORD = re.compile(r"^(\d+)\s+\{(.*)\}\s*$")
_FIELD = re.compile(r"(\w+)=(-?\d+)")
# Files of libraries, not the user's: installed packages and the libraries' own folders.
_LIBRARY = re.compile(r"(^|/)(site-packages|dist-packages|jax|jaxlib|flax|optax|equinox)/")
# shardscope's own code, which calls the user's (a Flax or Equinox model is traced through
# ``program.trace``): its frames are never the user's line. Its examples and tests are
# programs like the user's.
_OWN = tuple(
    f"{Path(__file__).resolve().parents[2] / room}/" for room in ("backend", "app", "viewers")
)


# The capture hook's files, wherever the shardscope that captured a script was: a torch_xla
# op's call stack passes through the hook's dispatch mode, and a capture read by another
# checkout (or on another machine) names that checkout's path.
_HOOK = re.compile(r"(^|/)backend/program/capture_site/[^/]+\.py$")


def is_library_file(path: str) -> bool:
    """Whether ``path`` is a library's file (installed, inside jax/flax/optax/equinox,
    shardscope's own code, or the capture hook's wherever it was) or no file at all
    (``<frozen runpy>``, ``<string>``)."""
    return (
        bool(_LIBRARY.search(path))
        or path.startswith(_OWN)
        or path.startswith("<")
        or bool(_HOOK.search(path))
    )


@dataclass(frozen=True)
class SourceLine:
    """Where an instruction came from: file, function and line."""

    file: str
    function: str
    line: int


class FrameTable:
    """The stack frame tables of one HLO module text."""

    def __init__(self, text: str) -> None:
        self.files: dict[int, str] = {}
        self.functions: dict[int, str] = {}
        self.locations: dict[int, dict[str, int]] = {}
        self.frames: dict[int, dict[str, int]] = {}
        section = None
        for line in text.splitlines():
            if line.startswith(("%", "ENTRY")):
                break  # the computations: the tables are over
            head = _SECTION.match(line)
            if head:
                section = head[1]
                continue
            if section in ("FileNames", "FunctionNames"):
                m = _NAME.match(line)
                if m:
                    table = self.files if section == "FileNames" else self.functions
                    table[int(m[1])] = m[2]
            elif section in ("FileLocations", "StackFrames"):
                m = _RECORD.match(line)
                if m:
                    fields = {k: int(v) for k, v in _FIELD.findall(m[2])}
                    table = self.locations if section == "FileLocations" else self.frames
                    table[int(m[1])] = fields

    def source(self, frame_id: int | None) -> SourceLine | None:
        """The file, function and line of frame ``frame_id``; None if unknown."""
        if frame_id is None:
            return None
        frame = self.frames.get(frame_id)
        if frame is None:
            return None
        loc = self.locations.get(frame.get("file_location_id", -1))
        if loc is None:
            return None
        return SourceLine(
            self.files.get(loc.get("file_name_id", -1), ""),
            self.functions.get(loc.get("function_name_id", -1), ""),
            loc.get("line", 0),
        )

    def caller(self, frame_id: int) -> int | None:
        """The frame that called frame ``frame_id``; None for the outermost."""
        parent = self.frames.get(frame_id, {}).get("parent_frame_id", 0) - 1
        return parent if parent > 0 else None

    def user_source(self, frame_id: int | None) -> SourceLine | None:
        """The innermost frame of ``frame_id``'s stack outside the libraries
        (``is_library_file``); the innermost frame where every frame is a library's."""
        first = self.source(frame_id)
        seen: set[int] = set()
        while frame_id is not None and frame_id not in seen:
            seen.add(frame_id)
            here = self.source(frame_id)
            if here is not None and here.file and not is_library_file(here.file):
                return here
            frame_id = self.caller(frame_id)
        return first
