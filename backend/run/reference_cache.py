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
used go.

An entry holds each output's bytes and a record of what it stored: the key and the inputs'
digest it was stored under, each output's dtype, shape and SHA-256. What is read is
checked against that record and against the dtypes and shapes the program gives
(``lookup``); an entry that fails any check is refused (the reason says which), removed,
and the outputs are computed afresh. Only regular files are opened, without following
links and without waiting (a FIFO in an entry's place is refused, not read).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import platform
import re
from pathlib import Path
from typing import Any

import numpy as np

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import read_bytes, write_atomic

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
        """The kept outputs of module ``key`` on ``inputs``, or None (``lookup``)."""
        return self.lookup(key, inputs)[0]

    def lookup(
        self, key: str, inputs: list[np.ndarray], expected: list[tuple[tuple, Any]] | None = None
    ) -> tuple[list[np.ndarray] | None, str | None]:
        """The kept outputs of module ``key`` on ``inputs`` (None where none are kept),
        and why an entry found was refused (None where none was). ``expected`` is each
        output's shape and dtype as the program gives them: an entry of others is
        refused. A refused entry is removed."""
        path = self._path(key, inputs)
        try:
            outputs = _read_entry(path, key, path.stem, expected)
        except FileNotFoundError:
            return None, None
        except _Refused as refused:
            with contextlib.suppress(OSError):
                path.unlink()  # a link or a FIFO goes itself: unlink follows nothing
            return None, str(refused)
        with contextlib.suppress(OSError):
            os.utime(path, follow_symlinks=False)  # recently used
        return outputs, None

    def store(self, key: str, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> None:
        """Keep ``outputs`` of module ``key`` on ``inputs`` (not when too large, nor when
        the folder cannot be written: the cache only saves time)."""
        arrays = [np.asarray(o) for o in outputs]
        if sum(a.nbytes for a in arrays) > MAX_ENTRY_BYTES:
            return
        path = self._path(key, inputs)
        record = {
            "key": key,
            "inputs": path.stem,
            "outputs": [
                {"dtype": a.dtype.name, "shape": list(a.shape), "sha256": _digest(a)}
                for a in arrays
            ],
        }
        fields = {f"arr_{i}": _bytes(a) for i, a in enumerate(arrays)}
        fields[_RECORD] = np.frombuffer(json.dumps(record).encode(), np.uint8)
        try:
            write_atomic(path, lambda f: np.savez(f, **fields), "")
        except (OSError, ShardscopeError):
            return
        self.prune()

    def prune(self, limit: int = MAX_BYTES) -> None:
        """Remove the least recently used entries until at most ``limit`` bytes remain."""
        entries = []
        for path in self.root.glob("*/*.npz"):
            with contextlib.suppress(OSError):
                info = path.lstat()
                entries.append((info.st_mtime, info.st_size, path))
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


# The field of an entry that records what it stored.
_RECORD = "record"


class _Refused(Exception):
    """A kept entry that is not used; the message says why."""


def _bytes(array: np.ndarray) -> np.ndarray:
    """The array's bytes in C order, as a flat uint8 array."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(_bytes(array)).hexdigest()


def _read_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path``: never a link followed, nor a FIFO or
    device opened for longer than it takes to see it is one (``_Refused``)."""
    try:
        return read_bytes(path, MAX_ENTRY_BYTES + (1 << 20), "", follow_links=False)
    except ShardscopeError as exc:
        raise _Refused(f"it {exc.reason}") from None  # type: ignore[attr-defined]


def _read_entry(
    path: Path, key: str, inputs: str, expected: list[tuple[tuple, Any]] | None
) -> list[np.ndarray]:
    """The outputs the entry at ``path`` holds, once each check has passed (else
    ``_Refused``, naming the first that failed)."""
    data = _read_bytes(path)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as entry:
            fields = {name: entry[name] for name in entry.files}
        record = json.loads(fields.pop(_RECORD).tobytes())
        kept_key, kept_inputs, described = record["key"], record["inputs"], record["outputs"]
    except Exception:  # noqa: BLE001 - anything unreadable is a damaged entry
        raise _Refused("it is damaged or of an older form") from None
    if kept_key != key:
        raise _Refused("it was stored under another module's key")
    if kept_inputs != inputs:
        raise _Refused("it was stored for other inputs")
    if sorted(fields) != sorted(f"arr_{i}" for i in range(len(described))):
        raise _Refused("its outputs do not match its record")
    if expected is not None and len(expected) != len(described):
        raise _Refused(f"it holds {len(described)} outputs where the program gives {len(expected)}")
    outputs = []
    for i, about in enumerate(described):
        try:
            dtype = np.dtype(about["dtype"])
            shape = tuple(int(n) for n in about["shape"])
            array = fields[f"arr_{i}"].view(dtype).reshape(shape)
        except (TypeError, ValueError, KeyError):
            raise _Refused(f"output {i} does not match its record") from None
        if _digest(array) != about.get("sha256"):
            raise _Refused(f"output {i}'s values do not match their SHA-256")
        if expected is not None:
            want_shape, want_dtype = expected[i]
            if (tuple(want_shape), np.dtype(want_dtype)) != (shape, dtype):
                raise _Refused(
                    f"output {i} is {dtype.name}{list(shape)} where the program gives "
                    f"{np.dtype(want_dtype).name}{list(want_shape)}"
                )
        outputs.append(array)
    return outputs
