"""MP4 (H.264) video of drawn frames, with PyAV (FFmpeg), an optional extra.

PyAV is large (about 100 MB with its FFmpeg libraries) and only this export needs it, so
it is the ``video`` extra (``pip install 'shardscope[video]'``); without it, asking for an
MP4 is a ValueError that names that fix. Frames play at a constant rate; the last one is
repeated for the final hold, as a video carries no per-frame delay a player honours the
way it does a GIF's.
"""

from __future__ import annotations

import io
import math

from PySide6.QtGui import QImage

MISSING = "MP4 needs PyAV: pip install 'shardscope[video]' (or write a .gif)"
CODEC = "libx264"


def have_av() -> bool:
    """Whether PyAV can be imported here."""
    try:
        import av  # noqa: F401
    except ImportError:
        return False
    return True


def _rgb_array(image: QImage, width: int, height: int):
    import numpy as np

    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    if (rgb.width(), rgb.height()) != (width, height):
        # yuv420p wants even sides: the first frame is padded by a pixel at most, and a
        # later frame of another size (a badge grew) is cut or padded to the first's
        padded = QImage(width, height, QImage.Format.Format_RGB888)
        padded.fill(rgb.pixelColor(0, 0) if not rgb.isNull() else 0)
        from PySide6.QtGui import QPainter

        painter = QPainter(padded)
        painter.drawImage(0, 0, rgb)
        painter.end()
        rgb = padded
    line = rgb.bytesPerLine()
    data = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=line * height)
    return data.reshape(height, line)[:, : width * 3].reshape(height, width, 3).copy()


class Mp4Encoder:
    """Encodes frames into an MP4 in memory as they come; ``encode`` returns its bytes."""

    def __init__(self, fps: float, hold_ms: int) -> None:
        try:
            import av
        except ImportError:
            raise ValueError(MISSING) from None
        self._av = av
        self.fps = fps
        self.hold_frames = max(0, math.ceil(hold_ms * fps / 1000) - 1)
        self.buffer = io.BytesIO()
        self.container = av.open(self.buffer, mode="w", format="mp4")
        self.stream = None
        self.frames = 0
        self._last = None

    def _open_stream(self, width: int, height: int) -> None:
        from fractions import Fraction

        rate = Fraction(self.fps).limit_denominator(1000)
        stream = self.container.add_stream(CODEC, rate=rate)
        stream.width, stream.height = width + width % 2, height + height % 2
        stream.pix_fmt = "yuv420p"
        # sharp text rather than small files: these are diagrams with thin lines
        stream.options = {"crf": "18", "preset": "veryfast"}
        self.stream = stream

    def add(self, image: QImage, changed=None) -> None:
        """The next frame, whole (``changed``, where it differs from the last, is for
        encoders that write only that)."""
        if self.stream is None:
            self._open_stream(image.width(), image.height())
        stream = self.stream
        array = _rgb_array(image, stream.width, stream.height)
        frame = self._av.VideoFrame.from_ndarray(array, format="rgb24")
        self._last = frame
        self._mux(frame)

    def _mux(self, frame) -> None:
        frame.pts = self.frames
        self.frames += 1
        for packet in self.stream.encode(frame.reformat(format="yuv420p")):
            self.container.mux(packet)

    def encode(self) -> bytes:
        if self._last is not None:
            for _ in range(self.hold_frames):
                self._mux(self._last)
            for packet in self.stream.encode():
                self.container.mux(packet)
        self.container.close()
        return self.buffer.getvalue()

    def discard(self) -> None:
        """Drop what was encoded (a cancelled export)."""
        try:
            self.container.close()
        except Exception:  # noqa: BLE001 - a half-written container may refuse to close
            pass
        self.buffer = io.BytesIO()
