"""Source lines of compiled HLO instructions, from the tables at the top of the module.

``compiled.as_text()`` starts with ``FileNames``, ``FunctionNames``, ``FileLocations``
and ``StackFrames`` tables; an instruction's ``metadata={... stack_frame_id=N}`` names
its innermost frame, whose file location gives the file and line (checked on this
machine with jax 0.10.2: frame ``N {file_location_id=L parent_frame_id=P}``, location
``L {file_name_id=F function_name_id=G line=K ...}``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SECTION = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)\s*$")
_NAME = re.compile(r'^(\d+)\s+"(.*)"\s*$')
_RECORD = re.compile(r"^(\d+)\s+\{(.*)\}\s*$")
_FIELD = re.compile(r"(\w+)=(-?\d+)")


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
