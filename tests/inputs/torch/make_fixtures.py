"""Make the torch_xla fixtures the tests read without torch: run ``tiny.py`` under
shardscope's capture hook with torch_xla and keep what the hook left.

Run with a Python that has torch and torch_xla (2.9.0 here), never shardscope's own::

    PYTHON_WITH_TORCH_XLA=/path/to/venv/bin/python \\
        .venv/bin/python tests/inputs/torch/make_fixtures.py

It writes ``tiny_capture/``: ``torch.json`` (the hook's record of the run: syncs with
their named inputs, meshes, ``mark_sharding`` calls) and, from ``torch_dump/``, the one
graph's ``before_optimizations.hlo.pb`` (the module torch_xla built, a few KB) and
``cpu_after_optimizations.txt`` (torch_xla's compiled, partitioned module). It then
captures ``train_block.py``, ``conflict.py`` and ``uneven.py`` with ``capture`` itself,
into ``capture_block.json``, ``capture_conflict.json`` and ``capture_uneven.json``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SITE = HERE.parents[2] / "backend" / "program" / "capture_site"
OUT = HERE / "tiny_capture"


def main() -> int:
    python = os.environ.get("PYTHON_WITH_TORCH_XLA")
    if not python:
        print("set PYTHON_WITH_TORCH_XLA to a Python that has torch_xla", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "SHARDSCOPE_CAPTURE_DIR": tmp,
            "SHARDSCOPE_CAPTURE_DEVICES": "4",
            "PYTHONPATH": str(SITE),
        }
        subprocess.run([python, str(HERE / "tiny.py")], env=env, check=True, cwd=HERE)
        shutil.rmtree(OUT, ignore_errors=True)
        (OUT / "torch_dump").mkdir(parents=True)
        shutil.copy(Path(tmp) / "torch.json", OUT / "torch.json")
        for path in sorted((Path(tmp) / "torch_dump").iterdir()):
            if path.name.endswith((".before_optimizations.hlo.pb", ".cpu_after_optimizations.txt")):
                shutil.copy(path, OUT / "torch_dump" / path.name)
    print(f"wrote {OUT}")
    main_py = HERE.parents[2] / "main.py"
    for script, out in (
        ("train_block.py", "capture_block.json"),
        ("conflict.py", "capture_conflict.json"),
        ("uneven.py", "capture_uneven.json"),
    ):
        subprocess.run(
            [
                sys.executable,
                str(main_py),
                "capture",
                "--out",
                str(HERE / out),
                "--",
                python,
                script,
            ],
            check=True,
            cwd=HERE,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
