"""Running torch_xla scripts for the tests: in the script's own Python
(``SHARDSCOPE_TORCH_PYTHON``), plainly with XLA's dump, or through ``capture``; and
reading what XLA compiled with patterns of the tests' own."""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TORCH_PYTHON = os.environ.get("SHARDSCOPE_TORCH_PYTHON", "")
SCRIPTS = Path("tests/inputs/torch").resolve()
MAIN = Path("main.py").resolve()


def _has_torch_xla() -> bool:
    if not TORCH_PYTHON:
        return False
    probe = subprocess.run(
        [TORCH_PYTHON, "-c", "import torch_xla"], capture_output=True, timeout=300
    )
    return probe.returncode == 0


needs_torch = pytest.mark.skipif(
    not _has_torch_xla(),
    reason="needs the torch extra in the script's own environment: pip install "
    "torch==2.9.0 torch_xla==2.9.0 there (never in shardscope's .venv) and set "
    "SHARDSCOPE_TORCH_PYTHON to its python",
)


def cli(*args, cwd=None) -> str:
    proc = subprocess.run(
        [sys.executable, str(MAIN), *args],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def capture(script: Path, out: Path) -> dict:
    """``capture --json`` of ``script`` run by the torch Python, into ``out``."""
    return json.loads(cli("capture", "--json", "--out", str(out), "--", TORCH_PYTHON, str(script)))


def plain_run(script: Path, dump: Path, devices: int = 8) -> list[str]:
    """Run ``script`` as its user does, on ``devices`` CPU devices, with nothing of
    shardscope's, XLA dumping each compiled module as text; the compiled, partitioned
    modules in the order XLA numbered them."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XLA_FLAGS", "XLA_HLO_DEBUG")
    }
    env.update(
        PJRT_DEVICE="CPU",
        CPU_NUM_DEVICES=str(devices),
        XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text",
    )
    proc = subprocess.run(
        [TORCH_PYTHON, str(script)], env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [p.read_text() for p in sorted(dump.glob("module_*.cpu_after_optimizations.txt"))]


_COLLECTIVE = re.compile(
    r"\s(all-reduce|all-gather|all-to-all|collective-permute|reduce-scatter)(?:-start)?\(([^)]*)\)"
)
_PARAMETER = re.compile(r" parameter\((\d+)\)(?:, sharding=(\{[^}]*\}))?")


def compiled_summary(text: str) -> dict:
    """What a compiled module does, for comparing two compiles of one graph: its entry's
    parameter count and shardings, and its collectives by (kind, operand count)."""
    entry = text.split("\nENTRY ", 1)[1]
    shardings = {int(m[1]): m[2] for m in _PARAMETER.finditer(entry)}
    collectives = collections.Counter()
    for line in text.splitlines():
        m = _COLLECTIVE.search(line)
        if m and " = " in line:
            collectives[m[1], len(re.findall(r"%[\w.\-]+", m[2]))] += 1
    return {
        "parameters": len(shardings),
        "shardings": [shardings[i] for i in sorted(shardings)],
        "collectives": dict(sorted(collectives.items())),
    }
