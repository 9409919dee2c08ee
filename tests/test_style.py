"""The tree stays ruff-clean: lint rules and formatting, as configured in pyproject.toml."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).with_name("ruff")


def test_ruff_check():
    proc = subprocess.run([str(RUFF), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_ruff_format():
    proc = subprocess.run(
        [str(RUFF), "format", "--check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + "\nrun: .venv/bin/ruff format ."
