"""GSPMD's compiled collectives, held against the program's own ``jax.jit(...).lower(...)
.compile()`` with ``jax_use_shardy_partitioner`` off, in a process of its own on fake CPU
devices (the flag is read at lowering: this process keeps Shardy on for the other tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from shardscope.backend.gspmd.compare import compare_gspmd
from shardscope.backend.gspmd.gspmd_collectives import kind_counts
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.propagation.propagate import propagate
from tests.support.compile_oracle import loaded
from tests.support.inputs import PROGRAMS

ROOT = Path(__file__).resolve().parents[3]
_ORACLE = """
import json, sys, types
import jax
jax.config.update("jax_use_shardy_partitioner", False)
from tests.support.compile_oracle import compiled_text
print(compiled_text(types.SimpleNamespace(**json.loads(sys.argv[1]))))
"""
SOURCES = {
    # The rewritten module is compiled (every op named after its program op).
    "module route": "example:mlp",
    # shard_map: traced again with GSPMD; the user's all_gather and psum_scatter.
    "traced route": str(PROGRAMS / "compiled_fsdp.py"),
    # Loop bodies, a checkpoint, a nested jit and a combined all-reduce.
    "loops and a combined all-reduce": str(PROGRAMS / "run_collectives_nested.py"),
}


def gspmd_compiled_text(program) -> str:
    """``jax.jit(PROGRAM).lower(...).compile().as_text()`` with GSPMD, in a subprocess."""
    fields = {k: getattr(program, k) for k in ("path", "params", "mesh", "specs", "arg_names")}
    proc = subprocess.run(
        [sys.executable, "-c", _ORACLE, json.dumps(fields, default=str)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("what", list(SOURCES))
def test_gspmd_collectives_equal_jaxs_gspmd_compile(what):
    program = loaded(SOURCES[what])
    result = propagate(program)
    got = compare_gspmd(program, result).collectives
    expected = read_collectives(gspmd_compiled_text(program))
    assert sorted((c.kind, c.operands) for c in got) == sorted(
        (c["kind"], c["operands"]) for c in expected
    )
    assert kind_counts(got) == dict(sorted(Counter(c["kind"] for c in expected).items()))
    assert got, what
    for c in got:
        assert len(c.tensors) == c.operands
        for t in c.tensors:
            assert t.op is not None and t.line is not None, (what, c.name, t)
            # The module route's op names are the program's, not the rewrite's.
            assert not t.op_name.startswith("shardscope.op."), t
        assert c.axes, c
    # shard_map's all_gather and psum_scatter are the user's; the rest the partitioner's.
    assert {c.origin for c in got} == ({"user"} if what == "traced route" else {"partitioner"})
