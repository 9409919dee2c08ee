"""An animated GIF of a propagation: the graph stepping through its timeline.

``write_gif`` draws a ``GraphView`` at a bounded number of steps with a ``StepOverlay``
(the same drawing as ``render --step``), each frame into an image in memory, and writes
them with Pillow (Qt writes no GIF). Long timelines are sampled: every n-th step so that
at most ``MAX_FRAMES`` step frames are drawn, then the last step and the final state.
Frames are scaled down to at most ``MAX_FRAME_PIXELS`` pixels, so memory stays bounded
whatever the graph's size.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import QApplication

from shardscope.viewers.graph.panel import view_image
from shardscope.viewers.graph.step_overlay import StepOverlay, playback_override

if TYPE_CHECKING:
    from shardscope.backend.session.playback import Playback
    from shardscope.backend.sharding.spec import Spec
    from shardscope.viewers.graph.view import GraphView

MAX_FRAMES = 200
MAX_FRAME_PIXELS = 1_000_000
DEFAULT_FPS = 5.0
MAX_FPS = 50.0
# How long the final state stays on screen before the animation loops.
FINAL_HOLD_MS = 2000


@dataclass(frozen=True)
class GifSummary:
    """What ``write_gif`` wrote: frames (the final state included), their size in pixels,
    how many steps the timeline has and every how many steps a frame was drawn."""

    frames: int
    width: int
    height: int
    steps: int
    stride: int


def sampled_positions(count: int, max_frames: int | None = None) -> tuple[list[int], int]:
    """Positions to draw among ``count`` (every n-th, the last always) and n; at most
    ``max_frames`` (default ``MAX_FRAMES``) and the last."""
    if max_frames is None:
        max_frames = MAX_FRAMES
    if count <= 0:
        return [], 1
    stride = max(1, math.ceil(count / max_frames))
    positions = list(range(0, count, stride))
    if positions[-1] != count - 1:
        positions.append(count - 1)
    return positions, stride


def to_pil(image: QImage) -> Image.Image:
    """A copy of ``image`` as an RGB Pillow image."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h = rgb.width(), rgb.height()
    data = bytes(rgb.constBits())[: rgb.bytesPerLine() * h]
    return Image.frombuffer("RGB", (w, h), data, "raw", "RGB", rgb.bytesPerLine(), 1).copy()


def caption(image: QImage, text: str, color: QColor) -> QImage:
    """Write ``text`` in the top left corner of ``image`` (which it returns)."""
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    font = QFont()
    font.setPixelSize(max(11, min(18, image.height() // 40)))
    painter.setFont(font)
    painter.setPen(color)
    painter.drawText(8, 8 + font.pixelSize(), text)
    painter.end()
    return image


def _paletted(image: QImage) -> Image.Image:
    # one byte a pixel from here on: a GIF frame holds no more than 256 colours anyway
    return to_pil(image).quantize(colors=255, method=Image.Quantize.MEDIANCUT)


def write_gif(
    view: GraphView,
    playback: Playback,
    user_specs: Mapping[int, Spec],
    path: str | Path,
    *,
    fps: float = DEFAULT_FPS,
    scale: float = 1.0,
) -> GifSummary:
    """Write the animation of ``playback`` on ``view`` to ``path`` (see the module
    docstring). ``view`` is left showing the final state without overlay. Raises
    ValueError for a timeline with no step or an empty view, OSError when the file
    cannot be written."""
    positions, stride = sampled_positions(len(playback))
    if not positions:
        raise ValueError("propagation took no steps: shard an input so that axes flow")
    last = playback.timeline.last_index
    color = QColor(view.style_.theme.foreground)
    overlay = StepOverlay(view)
    frames: list[Image.Image] = []
    try:
        overlay.set_spec_override(playback_override(playback, user_specs), None)
        for position in positions:
            playback.seek(position, quiet=True)
            overlay.set_spec_override(overlay.scene.spec_override, None)
            overlay.show_steps(playback.steps())
            image = view_image(view, scale=scale, max_pixels=MAX_FRAME_PIXELS)
            text = f"step {playback.step_index} of {last}"
            frames.append(_paletted(caption(image, text, color)))
            QApplication.processEvents()
        playback.seek(None, quiet=True)
        overlay.show_steps([])
        overlay.set_spec_override(None, None)
        image = view_image(view, scale=scale, max_pixels=MAX_FRAME_PIXELS)
        frames.append(_paletted(caption(image, "final state", color)))
    finally:
        overlay.show_steps([])
        if overlay.scene.spec_override is not None:
            overlay.set_spec_override(None, None)
        overlay.close()
    fps = min(max(fps, 0.1), MAX_FPS)
    # GIF delays are whole hundredths of a second
    durations = [max(2, round(100 / fps)) * 10] * (len(frames) - 1) + [FINAL_HOLD_MS]
    first = frames[0]
    encoded = io.BytesIO()
    first.save(
        encoded,
        format="GIF",
        save_all=True,
        append_images=frames[1:],
        duration=durations,
        loop=0,
        optimize=False,
    )
    # written whole once encoded, so that a failed write leaves no half animation
    Path(path).write_bytes(encoded.getvalue())
    return GifSummary(len(frames), first.width, first.height, len(playback), stride)
