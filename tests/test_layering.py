"""backend/ is pure Python: importing all of it must not pull in Qt."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import shardscope.backend as backend

ROOT = Path(__file__).resolve().parent.parent
BLOCKED = ("PySide6", "pyqtgraph", "shiboken6", "shardscope.viewers", "shardscope.app")

_PROBE = """
import importlib, pkgutil, sys
blocked = {blocked!r}

class Block:
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in blocked):
            raise ImportError(f"backend imported {{name}}")
        return None

sys.meta_path.insert(0, Block())
import shardscope.backend as backend
for info in pkgutil.walk_packages(backend.__path__, "shardscope.backend."):
    importlib.import_module(info.name)
print("ok", len(list(pkgutil.walk_packages(backend.__path__, "shardscope.backend."))))
"""


def test_backend_imports_without_qt():
    probe = _PROBE.format(blocked=BLOCKED)
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("ok")


def test_import_contracts_hold():
    """import-linter's contracts in pyproject.toml: backend forbids Qt, viewers and app; the
    backend's rooms stay in their layers; viewers never reach into the app."""
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_every_backend_module_is_seen():
    names = [info.name for info in pkgutil.walk_packages(backend.__path__, "shardscope.backend.")]
    assert (
        "shardscope.backend.program.graph" in names and "shardscope.backend.program.load" in names
    )


def test_the_cli_parser_starts_without_jax_numpy_or_qt():
    # The loading commands start their worker right after the parser is built; anything
    # heavy imported to build it would delay every load.
    probe = (
        "import sys\n"
        "from shardscope.app.cli.main import build_parser\n"
        "build_parser()\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'jax', 'jaxlib', 'numpy', 'PySide6', 'pyqtgraph', 'igraph'})\n"
        "print(','.join(heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == ""
