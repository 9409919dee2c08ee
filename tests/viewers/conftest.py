"""Qt runs offscreen in viewer tests; PNG renders go to a per-session folder."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402


def _guard_emit_refcount() -> None:
    """Work around PySide6 builds whose ``SignalInstance.emit`` returns an unowned bool.

    PySide6 6.12.0 here drops one reference to ``True`` per Python-side ``emit()``;
    pyqtgraph emits from Python all the time, so a test session (or the app) aborts in
    ``bool_dealloc`` once the count runs out. The patch is applied only when the leak
    is measured, so a fixed PySide6 runs unpatched.
    """
    import ctypes
    import sys

    from PySide6.QtCore import QObject, Signal, SignalInstance

    class _Probe(QObject):
        fired = Signal(int)

    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(64):
        probe.fired.emit(0)
    if before - sys.getrefcount(True) < 32:
        return
    original = SignalInstance.emit

    def emit(self, *args):
        result = original(self, *args)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(result))
        return result

    SignalInstance.emit = emit


_guard_emit_refcount()


@pytest.fixture(scope="session")
def render_dir(tmp_path_factory) -> Path:
    """Folder for widget renders (set SHARDSCOPE_RENDER_DIR to keep them)."""
    keep = os.environ.get("SHARDSCOPE_RENDER_DIR")
    if keep:
        path = Path(keep)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("renders")


def _distinct_colors(image) -> int:
    import numpy as np
    from PySide6.QtGui import QImage

    img = image.convertToFormat(QImage.Format.Format_RGB32)
    arr = np.frombuffer(img.constBits(), dtype=np.uint32, count=img.bytesPerLine() // 4 * img.height())
    return len(np.unique(arr & 0xFFFFFF))


@pytest.fixture
def count_colors():
    """Number of distinct RGB colours in a QImage or QPixmap."""

    def count(image) -> int:
        if hasattr(image, "toImage"):
            image = image.toImage()
        return _distinct_colors(image)

    return count
