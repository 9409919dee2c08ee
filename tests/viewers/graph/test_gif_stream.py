"""GifStream writes the first frame whole and then only the pixels that changed."""

import io

import numpy as np
import pytest
from PIL import Image, ImageSequence
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter

from shardscope.viewers.graph.gif_stream import GifStream, Palette


def _frame(box=None, colour="#D81B60") -> QImage:
    image = QImage(400, 300, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.fillRect(10, 10, 100, 40, QColor("#1E88E5"))
    if box is not None:
        painter.fillRect(box, QColor(colour))
    painter.end()
    return image


def _decoded(data: bytes) -> list[tuple[np.ndarray, int]]:
    with Image.open(io.BytesIO(data)) as gif:
        return [
            (np.asarray(f.convert("RGB")), f.info["duration"]) for f in ImageSequence.Iterator(gif)
        ]


def test_later_frames_hold_only_what_changed_and_decode_to_each_picture(qapp):
    stream = GifStream(4, 2000, keep=[0xD81B60])
    pictures = [_frame(), _frame(QRect(200, 200, 20, 20)), _frame(QRect(300, 100, 30, 30))]
    stream.add(pictures[0])
    sizes = []
    for picture, changed in zip(
        pictures[1:], ([QRect(195, 195, 30, 30)], [QRect(195, 95, 140, 140)]), strict=True
    ):
        stream.add(picture, changed)
        sizes.append(len(stream._pending[0].tobytes()))
    stream.add(pictures[-1], [QRect(0, 0, 400, 300)])  # nothing changed: a held frame
    data = stream.encode()
    frames = _decoded(data)
    assert [d for _, d in frames] == [250, 250, 250, 2000]
    for (decoded, _), picture in zip(frames, [*pictures, pictures[-1]], strict=True):
        ptr = picture.convertToFormat(QImage.Format.Format_RGB888)
        want = np.frombuffer(ptr.constBits(), np.uint8).reshape(300, ptr.bytesPerLine())
        assert (decoded == want[:, : 400 * 3].reshape(300, 400, 3)).all()
    # the second frame is the changed square, the third the box around both changes
    assert sizes == [20 * 20, 130 * 120]


def test_a_colour_off_the_palette_is_drawn_in_the_nearest(qapp):
    pixels = np.array([[0xFFFFFF, 0x000000, 0xFF0000]], np.uint32)
    palette = Palette(pixels)
    near = palette.indices(np.array([[0xFE0101, 0x010101]], np.uint32))
    assert [palette.colours[i] for i in near[0]] == [0xFF0000, 0x000000]


def test_discarded_stream_writes_nothing(qapp):
    stream = GifStream(5, 2000)
    stream.add(_frame())
    stream.discard()
    with pytest.raises(ValueError):
        stream.encode()
