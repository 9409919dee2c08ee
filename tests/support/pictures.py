"""What a picture file that a test wrote shows: its colours, the words of an SVG."""

from PySide6.QtGui import QImage


def distinct_colors(path) -> int:
    """How many colours a picture file holds."""
    import numpy as np

    img = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB32)
    n = img.bytesPerLine() // 4 * img.height()
    arr = np.frombuffer(img.constBits(), dtype=np.uint32, count=n)
    return len(np.unique(arr & 0xFFFFFF))


def svg_words(path):
    """How often each text of an SVG file is written."""
    import re
    from collections import Counter

    return Counter(
        w.strip() for w in re.findall(r"<text[^>]*>(.*?)</text>", path.read_text(), re.S)
    )
