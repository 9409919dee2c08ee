"""A looping GIF written frame by frame, each frame only the pixels that changed.

A propagation step changes a few badges, a ring and the flows of one op, so after the
first frame ``GifStream`` writes for each frame only the box around the pixels that differ
from the frame before, the unchanged pixels inside it transparent (the GIF keeps the
previous frame under them), instead of the whole picture again. Colours come from one
palette for the whole file (``Palette``: the colours that must stay exact, then the first
frame's most frequent ones; any other colour is drawn in the nearest of them), so no frame
needs a table of its own. Each frame is compressed (Pillow's LZW, which runs without
Python's lock) on a worker thread of the stream's own while the next frame is drawn; the
file is put together in ``encode``. Memory: the last frame's pixels and the compressed
frames.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from PIL import GifImagePlugin, Image
from PySide6.QtCore import QRect
from PySide6.QtGui import QImage

# Index 255 is the transparent one: a pixel that did not change.
TRANSPARENT = 255
COLOURS = 255


def image_pixels(image: QImage) -> np.ndarray:
    """The pixels of an RGB32 ``image`` as a (height, width) uint32 array (a view)."""
    width, height = image.width(), image.height()
    line = image.bytesPerLine() // 4
    data = np.frombuffer(image.constBits(), dtype=np.uint32, count=line * height)
    return data.reshape(height, line)[:, :width]


class Palette:
    """At most 255 colours (0xRRGGBB) and the index of the nearest one for any colour."""

    def __init__(self, pixels: np.ndarray, keep: Iterable[int] = ()) -> None:
        """``keep``: colours given a place first (the axis colours); then the most frequent
        colours of ``pixels``."""
        colours: list[int] = []
        for c in keep:
            c &= 0xFFFFFF
            if c not in colours and len(colours) < COLOURS:
                colours.append(c)
        flat = (pixels & 0xFFFFFF).ravel()
        if flat.size > 2_000_000:  # a sample counts frequent colours as well
            flat = flat[:: flat.size // 1_000_000]
        values, counts = np.unique(flat, return_counts=True)
        for c in values[np.argsort(-counts, kind="stable")]:
            if len(colours) >= COLOURS:
                break
            c = int(c)
            if c not in colours:
                colours.append(c)
        self.colours = colours
        rgb = np.array([[(c >> 16) & 255, (c >> 8) & 255, c & 255] for c in colours], np.int32)
        self._rgb = rgb
        # the index of every colour met so far, by 0xRRGGBB (a lookup costs a gather)
        self._lut = np.zeros(1 << 24, np.uint8)
        self._met = np.zeros(1 << 24, np.bool_)
        for i, c in enumerate(colours):
            self._lut[c], self._met[c] = i, True

    def table(self) -> bytes:
        """The 256-entry colour table (the transparent entry black)."""
        out = bytearray()
        for c in self.colours:
            out += bytes(((c >> 16) & 255, (c >> 8) & 255, c & 255))
        return bytes(out) + b"\0" * (3 * (256 - len(self.colours)))

    def indices(self, pixels: np.ndarray) -> np.ndarray:
        """The palette index of each pixel (uint8, same shape)."""
        keys = pixels & 0xFFFFFF
        new = np.unique(keys[~self._met[keys]])
        if len(new):
            rgb = np.stack([(new >> 16) & 255, (new >> 8) & 255, new & 255], axis=1)
            distance = ((rgb[:, None, :].astype(np.int32) - self._rgb[None]) ** 2).sum(axis=2)
            self._lut[new] = np.argmin(distance, axis=1)
            self._met[new] = True
        return self._lut[keys]


def _compressed(indices: np.ndarray, x: int, y: int, delay_ms: int) -> bytes:
    image = Image.fromarray(indices, "P")
    parts = GifImagePlugin.getdata(
        image,
        offset=(x, y),
        duration=delay_ms,
        transparency=TRANSPARENT,
        disposal=1,  # keep this frame under the next one
    )
    return b"".join(parts)


class GifStream:
    """See the module docstring. ``add`` the frames in order (the same size), then
    ``encode`` for the file's bytes; ``discard`` drops everything (a cancelled export)."""

    def __init__(self, fps: float, hold_ms: int, keep: Sequence[int] = ()) -> None:
        """``keep``: colours the palette must hold exactly (0xRRGGBB)."""
        self.delay_ms = max(2, round(100 / fps)) * 10  # whole hundredths of a second
        self.hold_ms = hold_ms
        self.keep = list(keep)
        self.palette: Palette | None = None
        self.size: tuple[int, int] | None = None
        self.frames = 0
        self._previous: np.ndarray | None = None
        self._pending: tuple[np.ndarray, int, int] | None = None
        self._parts: list[Future] = []
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(1, "gif-frames")

    def add(self, image: QImage, changed: Sequence[QRect] | None = None) -> None:
        """The next frame: ``image`` (RGB32), which differs from the last one at most in
        ``changed`` (pixel rectangles; None: anywhere)."""
        if image.format() != QImage.Format.Format_RGB32:
            image = image.convertToFormat(QImage.Format.Format_RGB32)
        pixels = image_pixels(image)
        height, width = pixels.shape
        if self._previous is None:
            self.size = (width, height)
            self.palette = Palette(pixels, self.keep)
            self._previous = pixels.copy()
            self._queue(self.palette.indices(pixels), 0, 0)
            return
        if (width, height) != self.size:
            raise ValueError(f"frame of {width}x{height} px in a GIF of {self.size}")
        boxes = [(0, 0, width, height)] if changed is None else _clamped(changed, width, height)
        previous = self._previous
        masks = []
        for x0, y0, x1, y1 in boxes:
            diff = pixels[y0:y1, x0:x1] != previous[y0:y1, x0:x1]
            rows = np.flatnonzero(diff.any(axis=1))
            if not len(rows):
                continue
            cols = np.flatnonzero(diff.any(axis=0))
            # cut to the pixels that changed
            r0, r1, c0, c1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
            masks.append((x0 + c0, y0 + r0, x0 + c1, y0 + r1, diff[r0:r1, c0:c1]))
        if not masks:
            # nothing changed: one transparent pixel carries the frame's delay
            self._queue(np.full((1, 1), TRANSPARENT, np.uint8), 0, 0)
            return
        # the box around every changed pixel
        left = top = 1 << 30
        right = bottom = 0
        for x0, y0, x1, y1, _diff in masks:
            top, bottom = min(top, y0), max(bottom, y1)
            left, right = min(left, x0), max(right, x1)
        frame = np.full((bottom - top, right - left), TRANSPARENT, np.uint8)
        for x0, y0, x1, y1, diff in masks:
            region = pixels[y0:y1, x0:x1]
            target = frame[y0 - top : y1 - top, x0 - left : x1 - left]
            target[diff] = self.palette.indices(region[diff])
            previous[y0:y1, x0:x1] = region
        self._queue(frame, int(left), int(top))

    def _queue(self, indices: np.ndarray, x: int, y: int) -> None:
        # a frame's delay is known once the next one comes (the last one is held)
        if self._pending is not None:
            self._submit(*self._pending, self.delay_ms)
        self._pending = (indices, x, y)
        self.frames += 1

    def _submit(self, indices: np.ndarray, x: int, y: int, delay_ms: int) -> None:
        if self._pool is None:
            raise ValueError("the GIF was discarded")
        self._parts.append(self._pool.submit(_compressed, indices, x, y, delay_ms))

    def encode(self) -> bytes:
        """The whole file. Raises ValueError before any frame."""
        if self._pending is None or self.size is None or self.palette is None:
            raise ValueError("no frame to write")
        self._submit(*self._pending, self.hold_ms)
        self._pending = None
        width, height = self.size
        head = b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF7, 0, 0)
        head += self.palette.table()
        head += b"!\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
        try:
            body = b"".join(part.result() for part in self._parts)
        finally:
            self._close()
        return head + body + b";"

    def discard(self) -> None:
        """Drop the frames (a cancelled export); the worker thread ends."""
        for part in self._parts:
            part.cancel()
        self._close()
        self._parts = []
        self._pending = self._previous = None

    def _close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _clamped(rects: Sequence[QRect], width: int, height: int) -> list[tuple[int, int, int, int]]:
    out = []
    for r in rects:
        x0, y0 = max(0, r.left()), max(0, r.top())
        x1, y1 = min(width, r.left() + r.width()), min(height, r.top() + r.height())
        if x1 > x0 and y1 > y0:
            out.append((x0, y0, x1, y1))
    return out
