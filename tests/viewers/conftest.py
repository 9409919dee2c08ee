"""Qt runs offscreen in viewer tests; PNG renders go to a per-session folder."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402


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
    img = image.convertToFormat(QImage.Format.Format_RGB32)
    arr = np.frombuffer(
        img.constBits(), dtype=np.uint32, count=img.bytesPerLine() // 4 * img.height()
    )
    return len(np.unique(arr & 0xFFFFFF))


@pytest.fixture
def count_colors():
    """Number of distinct RGB colours in a QImage or QPixmap."""

    def count(image) -> int:
        if hasattr(image, "toImage"):
            image = image.toImage()
        return _distinct_colors(image)

    return count
