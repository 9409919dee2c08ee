"""Instructions of an HLO text module: opcode, shape, the op they came from, their sharding.

XLA's text form writes one instruction a line, as in
``%add.1 = f32[16,32]{1,0} add(%x, %y), sharding={replicated}, metadata={op_name="jit(f)/add"}``.
Only what a comparison of shardings needs is read: array-typed instructions that carry a
sharding, without the parameter and tuple plumbing.
"""

from __future__ import annotations

import re
from typing import TypedDict

from shardscope.backend.hlo.syntax import OP_NAME

_INSTR = re.compile(
    r"^\s*(?:ROOT\s+)?%(?P<name>[\w.\-]+)\s*=\s*(?P<type>[a-z0-9]+\[[0-9,]*\])\S*\s+"
    r"(?P<opcode>[a-z][\w\-]*)\((?P<args>[^)]*)\)(?P<rest>.*)$"
)
_SHARDING = re.compile(r"sharding=(\{(?:[^{}]|\{[^{}]*\})*\})")
_SKIPPED = ("parameter", "tuple", "get-tuple-element")
# StableHLO op names (without the dialect) and their HLO opcodes; any other name is its
# own opcode with dashes for underscores.
_OPCODES = {
    "dot_general": "dot",
    "broadcast_in_dim": "broadcast",
    "case": "conditional",
    "convolution": "convolution",
}


class HloInstruction(TypedDict):
    """One sharded instruction of an HLO module (plain data: it crosses processes as JSON)."""

    opcode: str
    shape: list[int]
    op_name: str  # metadata op_name: the program op it came from; "" when absent
    sharding: str  # HloSharding text, ``{devices=[4,1,2]<=[8] last_tile_dim_replicate}``


def read_hlo_instructions(text: str) -> list[HloInstruction]:
    """Opcode, shape, op_name and sharding of each sharded instruction of an HLO dump."""
    out: list[HloInstruction] = []
    for line in text.splitlines():
        m = _INSTR.match(line)
        if not m:
            continue
        sh = _SHARDING.search(m["rest"])
        if sh is None or m["opcode"] in _SKIPPED:
            continue
        dims = m["type"].split("[", 1)[1].rstrip("]")
        name = OP_NAME.search(m["rest"])
        out.append(
            {
                "opcode": m["opcode"],
                "shape": [int(d) for d in dims.split(",") if d],
                "op_name": name.group(1) if name else "",
                "sharding": sh.group(1),
            }
        )
    return out


def hlo_opcode(op_name: str) -> str:
    """The HLO opcode a StableHLO op lowers to: ``stablehlo.dot_general`` -> ``dot``."""
    short = op_name.split(".", 1)[-1]
    return _OPCODES.get(short, short.replace("_", "-"))
