"""Benchmark: what ``capture`` adds to a torch_xla script's own wall time.

Run: ``SHARDSCOPE_TORCH_PYTHON=/path/to/venv/bin/python .venv/bin/python
tests/benchmarks/bench_torch_capture.py [--script tests/inputs/torch/megatron_step.py]
[--repeats 3]``

The script runs as its user runs it (``PJRT_DEVICE=CPU``, 8 CPU devices, nothing of
shardscope's), and as ``python main.py capture --out X.json -- PYTHON SCRIPT`` (the hook,
XLA's dumps, reading the graphs and writing the capture file), ``--repeats`` times in
turn, each in fresh processes. Prints the fastest wall time of each and their ratio,
measured in the same run. Without ``SHARDSCOPE_TORCH_PYTHON`` it says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _plain(python: str, script: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XLA_FLAGS")}
    env.update(PJRT_DEVICE="CPU", CPU_NUM_DEVICES="8")
    start = time.perf_counter()
    subprocess.run([python, str(script)], env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def _captured(python: str, script: Path) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, str(REPO / "main.py"), "capture", "--out"]
        command += [os.path.join(tmp, "c.json"), "--", python, str(script)]
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", default=str(REPO / "tests/inputs/torch/megatron_step.py"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    python = os.environ.get("SHARDSCOPE_TORCH_PYTHON")
    if not python:
        print("skipped: set SHARDSCOPE_TORCH_PYTHON to a Python with torch_xla 2.9")
        return 0
    script = Path(args.script).resolve()
    plain, captured = [], []
    for _ in range(args.repeats):
        plain.append(_plain(python, script))
        captured.append(_captured(python, script))
    print(f"script: {script.name}")
    print(f"plain run     {min(plain):7.2f} s  (all: {', '.join(f'{t:.2f}' for t in plain)})")
    print(f"capture       {min(captured):7.2f} s  (all: {', '.join(f'{t:.2f}' for t in captured)})")
    print(f"ratio capture/plain: {min(captured) / min(plain):.2f} (target <= 1.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
