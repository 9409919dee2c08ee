"""An animation of a propagation: the graph stepping through its timeline, as GIF or MP4.

``AnimationDrawer`` draws a ``GraphView`` at a bounded number of steps with a
``StepOverlay`` (the same drawing as ``render --step``), one frame per ``draw_next`` call
so that a window can draw between events, and hands each frame to an encoder: Pillow for
GIF (Qt writes no GIF), PyAV for MP4 (``viewers.graph.video``). Long timelines are sampled:
every n-th step so that at most ``MAX_FRAMES`` step frames are drawn, then the last step
and the final state. Frames are scaled down to at most ``MAX_FRAME_PIXELS`` pixels, so
memory stays bounded whatever the graph's size. The file is written whole at the end, so
a failed or cancelled export leaves no partial file.
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
# What the animation can be written as: the file's suffix picks the encoder.
FORMATS = (".gif", ".mp4")


@dataclass(frozen=True)
class GifSummary:
    """What was written: frames (the final state included), their size in pixels,
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


class GifEncoder:
    """Collects frames and encodes them as a looping GIF."""

    def __init__(self, fps: float) -> None:
        self.fps = fps
        self.frames: list[Image.Image] = []

    def add(self, image: QImage) -> None:
        self.frames.append(_paletted(image))

    def encode(self) -> bytes:
        frames = self.frames
        # GIF delays are whole hundredths of a second
        durations = [max(2, round(100 / self.fps)) * 10] * (len(frames) - 1) + [FINAL_HOLD_MS]
        encoded = io.BytesIO()
        frames[0].save(
            encoded,
            format="GIF",
            save_all=True,
            append_images=frames[1:],
            duration=durations,
            loop=0,
            optimize=False,
        )
        return encoded.getvalue()

    def discard(self) -> None:
        """Drop the frames (a cancelled export)."""
        self.frames = []


def encoder_for(path: Path, fps: float):
    """The encoder for ``path``'s suffix. Raises ValueError for a suffix not in ``FORMATS``
    and for MP4 without PyAV (the message names the fix)."""
    suffix = path.suffix.lower()
    if suffix == ".gif":
        return GifEncoder(fps)
    if suffix == ".mp4":
        from shardscope.viewers.graph.video import Mp4Encoder

        return Mp4Encoder(fps, FINAL_HOLD_MS)
    raise ValueError(f"an animation is written as .gif or .mp4, not {path.name}")


class AnimationDrawer:
    """Draws the animation of ``playback`` on ``view`` one frame at a time and writes it to
    ``path`` (see the module docstring). ``view`` is left showing the final state without
    overlay once ``finish`` or ``cancel`` ran. Raises ValueError for a timeline with no
    step, an unknown suffix or MP4 without PyAV."""

    def __init__(
        self,
        view: GraphView,
        playback: Playback,
        user_specs: Mapping[int, Spec],
        path: str | Path,
        *,
        fps: float = DEFAULT_FPS,
        scale: float = 1.0,
    ) -> None:
        self.positions, self.stride = sampled_positions(len(playback))
        if not self.positions:
            raise ValueError("propagation took no steps: shard an input so that axes flow")
        self.path = Path(path)
        self.encoder = encoder_for(self.path, min(max(fps, 0.1), MAX_FPS))
        self.view = view
        self.playback = playback
        self.scale = scale
        self.drawn = 0
        self.size: tuple[int, int] | None = None
        self._color = QColor(view.style_.theme.foreground)
        self._overlay: StepOverlay | None = StepOverlay(view, whole=True)
        self._overlay.set_spec_override(playback_override(playback, user_specs), None)

    @property
    def total(self) -> int:
        """Frames to draw: the sampled steps and the final state."""
        return len(self.positions) + 1

    def _frame(self, text: str) -> None:
        image = view_image(self.view, scale=self.scale, max_pixels=MAX_FRAME_PIXELS)
        if self.size is None:
            self.size = (image.width(), image.height())
        self.encoder.add(caption(image, text, self._color))
        self.drawn += 1

    def draw_next(self) -> bool:
        """Draw the next frame; False once every frame is drawn."""
        overlay, playback = self._overlay, self.playback
        if overlay is None or self.drawn >= self.total:
            return False
        if self.drawn < len(self.positions):
            playback.seek(self.positions[self.drawn], quiet=True)
            overlay.set_spec_override(overlay.scene.spec_override, None)
            overlay.show_steps(playback.steps())
            self._frame(f"step {playback.step_index} of {playback.timeline.last_index}")
        else:
            playback.seek(None, quiet=True)
            overlay.show_steps([])
            overlay.set_spec_override(None, None)
            self._frame("final state")
        return self.drawn < self.total

    def cancel(self) -> None:
        """Stop: take the overlay off the view and drop the frames; nothing is written."""
        self.release_view()
        self.encoder.discard()

    def release_view(self) -> None:
        """Take the overlay off the view (done drawing; the frames stay)."""
        overlay, self._overlay = self._overlay, None
        if overlay is None:
            return
        overlay.show_steps([])
        if overlay.scene.spec_override is not None:
            overlay.set_spec_override(None, None)
        overlay.close()

    def finish(self) -> GifSummary:
        """Draw what is left, then write the file whole. Raises OSError when it cannot
        be written (no file is left then)."""
        try:
            while self.draw_next():
                QApplication.processEvents()
        finally:
            self.release_view()
        data = self.encoder.encode()
        path = self.path
        try:
            path.write_bytes(data)
        except OSError:
            if path.is_file():
                try:
                    path.unlink()
                except OSError:
                    pass
            raise
        width, height = self.size
        return GifSummary(self.drawn, width, height, len(self.playback), self.stride)


def write_gif(
    view: GraphView,
    playback: Playback,
    user_specs: Mapping[int, Spec],
    path: str | Path,
    *,
    fps: float = DEFAULT_FPS,
    scale: float = 1.0,
) -> GifSummary:
    """Write the animation of ``playback`` on ``view`` to ``path`` (.gif, or .mp4 where
    PyAV is installed) in one go; see ``AnimationDrawer``."""
    return AnimationDrawer(view, playback, user_specs, path, fps=fps, scale=scale).finish()
