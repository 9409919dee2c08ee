"""Outputs of unsharded reference runs kept on disk, so that running the same program
again (with other specs, or another mesh) skips its unsharded compile and run.

An unsharded run depends on the program's unsharded module, its inputs, and the compiler
that built it, never on the run's shardings. An entry is keyed by the SHA-256 of:

- the module's full StableHLO text (constants printed whole);
- the compile options, ``XLA_FLAGS``, the versions of jax and jaxlib;
- the device's platform and kind, and on the CPU the processor's model and feature flags
  (XLA compiles for the host it runs on);

and within that, by the SHA-256 of the input arrays (dtype, shape and bytes). A module
that calls back into Python (``jax.debug.print``, ``pure_callback``) is never kept: it
names its callbacks only by an index (``mhlo.backend_config = {index = 0}``), so two
different callbacks look alike.

Where: ``$SHARDSCOPE_CACHE_DIR/reference`` (``off`` keeps nothing), else
``$XDG_CACHE_HOME/shardscope/reference`` or ``~/.cache/shardscope/reference``. Entries
over ``MAX_ENTRY_BYTES`` are not kept; past ``MAX_BYTES`` in all, the least recently
used go. A damaged entry is a miss, and is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

CACHE_ENV = "SHARDSCOPE_CACHE_DIR"
# What a run that used kept outputs says of its errors.
KEPT = (
    "errors are against the unsharded run's outputs kept from an earlier run of the same "
    f"module on the same inputs ({CACHE_ENV}=off computes them afresh)"
)
MAX_ENTRY_BYTES = 64 << 20
MAX_BYTES = 512 << 20
# Custom calls into Python: ``jax.debug.print``, ``pure_callback``, ``io_callback``.
_CALLBACK = re.compile(r"custom_call\s*@\w*callback")


def cache_root() -> Path | None:
    """The folder of reference outputs; None when ``SHARDSCOPE_CACHE_DIR=off``."""
    env = os.environ.get(CACHE_ENV, "").strip()
    if env.lower() == "off":
        return None
    if env:
        return Path(env) / "reference"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shardscope" / "reference"


def _host_identity() -> str:
    """The processor's model and feature flags (Linux), else what ``platform`` says."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    wanted = []
    for key in ("model name", "flags"):
        m = re.search(rf"^{key}\s*:\s*(.*)$", text, re.MULTILINE)
        wanted.append(m.group(1) if m else "")
    return "|".join(wanted)


class ReferenceCache:
    """Reference outputs under ``root`` (``cache_root``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def here(cls) -> ReferenceCache | None:
        """The cache this process uses; None when switched off."""
        root = cache_root()
        return cls(root) if root is not None else None

    def program_key(self, module_text: str, device: Any, options: dict | None) -> str | None:
        """The key of an unsharded module compiled for ``device`` with ``options``; None
        for a module that must not be kept (it calls back into Python)."""
        if _CALLBACK.search(module_text):
            return None
        import jax
        import jaxlib

        digest = hashlib.sha256()
        for part in (
            jax.__version__,
            jaxlib.__version__,
            device.platform,
            getattr(device, "device_kind", ""),
            repr(sorted((options or {}).items())),
            os.environ.get("XLA_FLAGS", ""),
            _host_identity() if device.platform == "cpu" else "",
        ):
            digest.update(part.encode() + b"\0")
        digest.update(module_text.encode())
        return digest.hexdigest()

    def knows(self, key: str) -> bool:
        """Whether outputs of this module are kept (for some inputs)."""
        folder = self.root / key
        return folder.is_dir() and any(folder.glob("*.npz"))

    def load(self, key: str, inputs: list[np.ndarray]) -> list[np.ndarray] | None:
        """The kept outputs of module ``key`` on ``inputs``, or None."""
        path = self._path(key, inputs)
        try:
            with np.load(path, allow_pickle=False) as data:
                outputs = [data[f"arr_{i}"] for i in range(len(data.files))]
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001 - a damaged entry is a miss
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used
        return outputs

    def store(self, key: str, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> None:
        """Keep ``outputs`` of module ``key`` on ``inputs`` (not when too large, nor when
        the folder cannot be written: the cache only saves time)."""
        if sum(np.asarray(o).nbytes for o in outputs) > MAX_ENTRY_BYTES:
            return
        path = self._path(key, inputs)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
            with os.fdopen(fd, "wb") as f:
                np.savez(f, *outputs)
            os.replace(tmp, path)
        except OSError:
            return
        self.prune()

    def prune(self, limit: int = MAX_BYTES) -> None:
        """Remove the least recently used entries until at most ``limit`` bytes remain."""
        entries = []
        for path in self.root.glob("*/*.npz"):
            with contextlib.suppress(OSError):
                stat = path.stat()
                entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries, key=lambda e: e[0]):
            if total <= limit:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size
                with contextlib.suppress(OSError):
                    path.parent.rmdir()  # only once empty

    def _path(self, key: str, inputs: list[np.ndarray]) -> Path:
        digest = hashlib.sha256()
        for array in inputs:
            array = np.asarray(array)
            digest.update(f"{array.dtype.str}{array.shape}".encode())
            digest.update(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
        return self.root / key / f"{digest.hexdigest()}.npz"
