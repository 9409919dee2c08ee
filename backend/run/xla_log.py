"""XLA's own warnings: captured from the worker's stderr, joined to the op they name.

XLA's C++ code logs to file descriptor 2, past Python's ``sys.stderr``: the runner keeps
the worker's stderr in a file, and ``read_warnings`` keeps the lines of it logged as
warnings or errors (absl's ``W``/``E`` prefix, or a ``WARNING``/``ERROR`` word) and
joins each to the HLO instruction or program op it names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypedDict

# absl's prefix: severity letter, date, time, thread, file:line] message.
_ABSL = re.compile(r"^(?P<sev>[WEF])\d{4}\s+[\d:.]+\s+\d+\s+(?P<where>[^\]]+)\]\s*(?P<msg>.*)$")
_WORDS = re.compile(r"\b(WARNING|ERROR)\b")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_INSTRUCTION = re.compile(r"%([\w.\-]+)")


class XlaWarning(TypedDict):
    """One warning XLA logged, with the op it names (plain data: it crosses processes)."""

    message: str
    op_name: str  # metadata op_name of the op it names; "" when none
    instruction: str  # HLO instruction name it names; "" when none


def read_warnings(text: str, op_names: dict[str, str] | None = None) -> list[XlaWarning]:
    """Warnings and errors in captured log ``text``, each joined to its op.

    ``op_names`` maps HLO instruction names to their metadata ``op_name``: a warning
    that names an instruction (``%all-gather.1``) gets that instruction's op.
    """
    op_names = op_names or {}
    out: list[XlaWarning] = []
    seen: set[str] = set()
    for line in text.splitlines():
        line = line.strip()
        m = _ABSL.match(line)
        if m:
            if m["sev"] == "F":
                continue  # a fatal error ends the process: the crash report says it
            message = m["msg"].strip()
        elif _WORDS.search(line):
            message = line
        else:
            continue
        if not message or message in seen:
            continue
        seen.add(message)
        out.append(_join(message, op_names))
    return out


def _join(message: str, op_names: dict[str, str]) -> XlaWarning:
    name = _OP_NAME.search(message)
    instruction = ""
    for m in _INSTRUCTION.finditer(message):
        if m[1] in op_names:
            instruction = m[1]
            break
    op_name = name[1] if name else op_names.get(instruction, "")
    return {"message": message[:2000], "op_name": op_name, "instruction": instruction}


def instruction_op_names(hlo_lines: Iterable[str]) -> dict[str, str]:
    """HLO instruction name -> metadata op_name, for every instruction that has one."""
    out = {}
    for line in hlo_lines:
        m = re.match(r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=", line)
        if m:
            name = _OP_NAME.search(line)
            if name:
                out[m[1]] = name[1]
    return out
