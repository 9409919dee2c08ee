"""The pieces of XLA's HLO text form the readers of this room match.

An instruction is one line, ``ROOT %name = TYPE opcode(%operand, ...), attributes,
metadata={op_name="jit(f)/dot_general" stack_frame_id=3}``; a computation opens with
``%name (params) -> TYPE {`` (``ENTRY %name ...`` for the entry one).
"""

from __future__ import annotations

import re

# ``%name = `` at the start of an instruction's line; ``root`` where it is its ROOT.
HEAD = re.compile(r"^\s*(?P<root>ROOT\s+)?%(?P<name>[\w.\-]+)\s*=\s*")
# The program op an instruction came from, in its metadata.
OP_NAME = re.compile(r'op_name="([^"]*)"')
# The stack frame of its source line (``hlo.frames``).
FRAME = re.compile(r"stack_frame_id=(\d+)")
# A computation's opening line.
COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%(?P<name>[\w.\-]+)\s.*\{\s*$")
# How a module's text starts (``HloModule SyncTensorsGraph.699, is_scheduled=true, ...``).
MODULE = re.compile(r"\s*HloModule\s+\S")


def is_hlo_module(text: str) -> bool:
    """Whether ``text`` starts as XLA writes an HLO module's text; other text (a file a
    script left where a compiled module belongs) is none the readers here can read."""
    return MODULE.match(text) is not None
