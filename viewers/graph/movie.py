"""The propagation animation that File > Export propagation animation and ``render --animate``
write: what to draw (``plan_movie``) and drawing it (``MovieDrawer``).

``plan_movie`` takes what a picture takes (the graph view showing the frame or one scope,
a part of it such as the region the window shows, a width or a scale) and decides the
frame's size, the steps drawn and an estimate of the file's size, or why it cannot be
written: labels under ``MIN_LABEL_PIXELS`` high, or frames too large to draw. Steps that
change nothing in the part drawn (another layer's) are left out; what is left is sampled
every n-th step to at most ``MAX_FRAMES`` frames, then the final state.

``MovieDrawer`` draws one frame per ``draw_next`` call (so a window draws between events)
on a canvas of its own: the first frame whole, then for each step only what changes in it
(the badges of the values it and the step before changed, the rings and flows of both, the
caption), and hands the canvas and those rectangles to the encoder: ``GifStream`` writes
only the changed pixels, PyAV's MP4 (``viewers.graph.video``) whole frames. The file is
written whole at the end, so a failed or cancelled export leaves no partial file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QRegion
from PySide6.QtWidgets import QApplication, QGraphicsItem

from shardscope.backend.files import write_atomic
from shardscope.viewers.common.colors import axis_color
from shardscope.viewers.graph.gif_stream import GifStream
from shardscope.viewers.graph.pages import MIN_LABEL_PIXELS, label_pixels
from shardscope.viewers.graph.step_overlay import StepOverlay, playback_override

if TYPE_CHECKING:
    from shardscope.backend.session.playback import Playback
    from shardscope.backend.sharding.spec import Spec
    from shardscope.viewers.graph.view import GraphView

MAX_FRAMES = 200
MAX_FPS = 50.0
# How long the final state stays on screen before the animation loops.
FINAL_HOLD_MS = 2000
# The largest frame drawn: a side (GIF allows 65,535; Qt paints up to 32,767) and pixels
# in all (the canvas and the last frame are kept: 8 bytes a pixel).
MAX_SIDE = 16_000
MAX_PIXELS = 60_000_000
# Above this estimate the window asks before writing.
WARN_BYTES = 50_000_000
# The caption strip above the graph: "program · scope — step k of n".
CAPTION_PIXELS = 26
# Bytes a frame takes, from the 24-layer transformer's GIFs (tests/benchmarks/
# bench_export.py): the first frame took 0.04 bytes a pixel for one layer unfolded and
# 0.23 for the folded graph (its long edges), each later frame about 8.4 KB in both; so an
# estimate within a factor of two. MP4: a guess for H.264 at CRF 18, per pixel and frame.
GIF_FIRST_BYTES_PER_PIXEL = 0.12
GIF_STEP_BYTES = 8_500
MP4_BYTES_PER_PIXEL = 0.004
# Pixels around a changed item's box redrawn with it (antialiased edges).
MARGIN = 3


@dataclass(frozen=True)
class MoviePlan:
    """What an export draws: ``source`` (scene units) at ``scale`` into frames of
    ``width`` x ``height`` pixels (the caption strip included), the playback positions
    drawn (then the final state), how many of the timeline's positions change what is
    drawn, every how many of those a frame is drawn, the smallest label's height in
    pixels, the estimated file size, and ``problem``: why it cannot be written (None: it
    can)."""

    source: QRectF
    scale: float
    width: int
    height: int
    positions: tuple[int, ...]
    shown_steps: int
    all_steps: int
    stride: int
    label_px: float
    estimate: int
    suffix: str
    problem: str | None
    # the narrowest frame whose labels are legible
    min_width: int = 0

    @property
    def frames(self) -> int:
        """Frames written: the steps drawn and the final state."""
        return len(self.positions) + 1

    def summary(self) -> str:
        """One line: frames, size, estimate."""
        every = f", every {self.stride}th step" if self.stride > 1 else ""
        return (
            f"{self.frames} frames{every}, {self.width}x{self.height} px, labels "
            f"{self.label_px:.0f} px, about {_megabytes(self.estimate)}"
        )


def sampled_positions(count: int, max_frames: int = MAX_FRAMES) -> tuple[list[int], int]:
    """Positions to draw among ``count`` (every n-th, the last always) and n; at most
    ``max_frames`` and the last."""
    if count <= 0:
        return [], 1
    stride = max(1, math.ceil(count / max_frames))
    positions = list(range(0, count, stride))
    if positions[-1] != count - 1:
        positions.append(count - 1)
    return positions, stride


def _megabytes(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.0f} KB"


def legible_scale(view: GraphView) -> float:
    """The smallest scale at which ``view``'s smallest label is ``MIN_LABEL_PIXELS`` high."""
    return MIN_LABEL_PIXELS / label_pixels(view, 1.0)


def visible_positions(view: GraphView, playback: Playback, source: QRectF) -> list[int]:
    """The positions of ``playback`` whose step changes what ``source`` shows: a badge of a
    value it moves, or the ring on the node that holds its op."""
    nodes = {i for i, item in enumerate(view.nodes) if source.intersects(item.sceneBoundingRect())}
    values: set[int] = set()
    for badge in view.badges:
        if source.intersects(badge.sceneBoundingRect()):
            values.update(badge.value_ids)
    overlay = StepOverlay(view, whole=True)
    try:
        out = []
        for position, index in enumerate(playback.indices):
            for step in playback.steps(index):
                if values.intersection(step.values) or overlay.node_of_step(step) in nodes:
                    out.append(position)
                    break
        return out
    finally:
        overlay.close()


def plan_movie(
    view: GraphView,
    playback: Playback,
    path: str | Path,
    *,
    source: QRectF | None = None,
    width: int | None = None,
    scale: float | None = None,
    positions: list[int] | None = None,
) -> MoviePlan:
    """The plan for an animation of ``playback`` on what ``view`` shows (all of it, or the
    part ``source`` of it), ``width`` pixels wide or at ``scale`` (default: the smallest
    legible scale). ``positions``: the visible positions, when already known."""
    rect = view.scene().sceneRect()
    if rect.isEmpty():
        raise ValueError("the view is empty: open a program first")
    source = QRectF(rect) if source is None else QRectF(source).intersected(rect)
    if source.isEmpty():
        raise ValueError("the region drawn is empty: scroll the graph into view")
    need = math.ceil(legible_scale(view) * source.width() - 1e-6)
    if width is None and scale is None:
        width = need
    if width is not None:
        scale = width / source.width()
    frame_w = max(1, round(source.width() * scale))
    frame_h = max(1, round(source.height() * scale)) + CAPTION_PIXELS
    if positions is None:
        positions = visible_positions(view, playback, source)
    drawn, stride = sampled_positions(len(positions), MAX_FRAMES)
    chosen = tuple(positions[i] for i in drawn)
    suffix = Path(path).suffix.lower()
    label = label_pixels(view, scale)
    estimate = _estimate_bytes(suffix, frame_w * frame_h, len(chosen))
    problem = _size_problem(label, frame_w, frame_h, need, view.within)
    return MoviePlan(
        source,
        scale,
        frame_w,
        frame_h,
        chosen,
        len(positions),
        len(playback),
        stride,
        label,
        estimate,
        suffix,
        problem,
        need,
    )


def _estimate_bytes(suffix: str, pixels: int, frames: int) -> int:
    """About how large a file of ``frames`` frames of ``pixels`` each will be."""
    if suffix == ".mp4":
        hold = math.ceil(FINAL_HOLD_MS / 200)
        return int(pixels * MP4_BYTES_PER_PIXEL * (frames + hold))
    return int(pixels * GIF_FIRST_BYTES_PER_PIXEL + GIF_STEP_BYTES * frames)


def _size_problem(
    label: float, frame_w: int, frame_h: int, need: int, within: str | None
) -> str | None:
    """Why frames of this size cannot be drawn: labels too small to read, or frames too
    large; None when they can."""
    if label < MIN_LABEL_PIXELS - 1e-6:
        smaller = "a scope inside it" if within else "one scope"
        return (
            f"labels would be {label:.1f} px high at {frame_w} px wide: make it at least "
            f"{need} px wide for {MIN_LABEL_PIXELS} px labels, or draw {smaller} or the "
            "visible region"
        )
    if max(frame_w, frame_h) > MAX_SIDE or frame_w * frame_h > MAX_PIXELS:
        return (
            f"frames of {frame_w}x{frame_h} px are too large to draw: draw one scope or the "
            "visible region, or a smaller width"
        )
    return None


def encoder_for(path: Path, fps: float, keep: list[int]):
    """The encoder for ``path``'s suffix: ``GifStream`` or MP4. Raises ValueError for
    another suffix and for MP4 without PyAV (the message names the fix)."""
    suffix = path.suffix.lower()
    if suffix == ".gif":
        return GifStream(fps, FINAL_HOLD_MS, keep)
    if suffix == ".mp4":
        from shardscope.viewers.graph.video import Mp4Encoder

        return Mp4Encoder(fps, FINAL_HOLD_MS)
    raise ValueError(f"an animation is written as .gif or .mp4, not {path.name}")


@dataclass(frozen=True)
class MovieSummary:
    """What was written: frames, their size in pixels, bytes, the timeline's positions and
    how many of them change what was drawn."""

    frames: int
    width: int
    height: int
    bytes: int
    steps: int
    shown_steps: int


class MovieDrawer:
    """Draws ``plan`` (see ``plan_movie``) of ``playback`` on ``view`` one frame at a time
    and encodes it for ``path`` (see the module docstring). ``view`` is left showing the
    final state without overlay once ``release_view`` or ``cancel`` ran. Raises
    ValueError for a plan with a ``problem``, one with no step, an unknown suffix or MP4
    without PyAV."""

    def __init__(
        self,
        view: GraphView,
        playback: Playback,
        user_specs: Mapping[int, Spec],
        path: str | Path,
        plan: MoviePlan,
        *,
        fps: float = 5.0,
        title: str = "",
    ) -> None:
        if plan.problem:
            raise ValueError(plan.problem)
        if not plan.positions:
            raise ValueError("no propagation step changes what is drawn: draw more of the graph")
        self.path = Path(path)
        self.plan = plan
        self.view = view
        self.playback = playback
        self.title = title
        self.drawn = 0
        self.size = (plan.width, plan.height)
        theme = view.style_.theme
        self._background = QColor(theme.background)
        self._color = QColor(theme.foreground)
        mesh = view.session.mesh
        names = mesh.axis_names if mesh is not None else ()
        keep = [theme.background.rgb(), theme.foreground.rgb(), theme.highlight.rgb()]
        keep += [axis_color(names, a).rgb() for a in names]
        self.encoder = encoder_for(self.path, min(max(fps, 0.1), MAX_FPS), keep)
        self._canvas = QImage(QSize(plan.width, plan.height), QImage.Format.Format_RGB32)
        self._canvas.fill(self._background)
        self._caption_font = QFont(view.style_.font)
        self._caption_font.setPixelSize(CAPTION_PIXELS // 2 + 1)
        # cached items would be pasted as bitmaps of the view's zoom: draw them afresh
        self._cached = [i for i in view.scene().items() if i.cacheMode() != _NO_CACHE]
        self._modes = [i.cacheMode() for i in self._cached]
        for item in self._cached:
            item.setCacheMode(_NO_CACHE)
        self._selected = view.scene().selectedItems()
        view.scene().clearSelection()
        self._overlay: StepOverlay | None = StepOverlay(view, whole=True)
        self._override = playback_override(playback, user_specs)
        self._at: int | None = None

    @property
    def total(self) -> int:
        """Frames to draw: the sampled steps and the final state."""
        return self.plan.frames

    # -- geometry -----------------------------------------------------------------------
    def _pixels(self, scene_rect: QRectF) -> QRect:
        plan = self.plan
        s, src = plan.scale, plan.source
        x0 = math.floor((scene_rect.left() - src.left()) * s) - MARGIN
        y0 = math.floor((scene_rect.top() - src.top()) * s) - MARGIN + CAPTION_PIXELS
        x1 = math.ceil((scene_rect.right() - src.left()) * s) + MARGIN
        y1 = math.ceil((scene_rect.bottom() - src.top()) * s) + MARGIN + CAPTION_PIXELS
        x0, y0 = max(0, x0), max(CAPTION_PIXELS, y0)
        x1, y1 = min(plan.width, x1), min(plan.height, y1)
        return QRect(x0, y0, max(0, x1 - x0), max(0, y1 - y0))

    def _marked(self, values: set[int]) -> list[QRectF]:
        """Where the overlay's items and the badges of ``values`` are now."""
        overlay = self._overlay
        scene = self.view.graph_scene
        items = []
        if overlay is not None:
            items += [*overlay.flow_items, *overlay.ring_items, *overlay.change_items]
        for vid in values:
            items += scene.badges_of(vid)
        # a flow is drawn by pieces hung on it, a badge's marks hang on it too
        return [
            item.sceneBoundingRect().united(item.mapRectToScene(item.childrenBoundingRect()))
            for item in items
        ]

    # -- drawing ------------------------------------------------------------------------
    def _paint(self, rects: list[QRect] | None, caption: str) -> None:
        """Draw the scene into ``rects`` of the canvas (None: all of it) and the caption."""
        plan = self.plan
        painter = QPainter(self._canvas)
        painter.setRenderHints(
            QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing
        )
        scene = self.view.scene()
        full = QRect(0, CAPTION_PIXELS, plan.width, plan.height - CAPTION_PIXELS)
        # one pass over the box around them, clipped to them: each item is painted once
        # (a scope's dashed outline costs as much clipped as whole)
        region = QRegion()
        for rect in [full] if rects is None else rects:
            if not rect.isEmpty():
                region = region.united(rect)
        if not region.isEmpty():
            box = region.boundingRect()
            s, src = plan.scale, plan.source
            source = QRectF(
                src.left() + box.left() / s,
                src.top() + (box.top() - CAPTION_PIXELS) / s,
                box.width() / s,
                box.height() / s,
            )
            painter.save()
            painter.setClipRegion(region)
            painter.fillRect(box, self._background)
            scene.render(painter, QRectF(box), source, Qt.AspectRatioMode.IgnoreAspectRatio)
            painter.restore()
        strip = QRect(0, 0, plan.width, CAPTION_PIXELS)
        painter.fillRect(strip, self._background)
        painter.setFont(self._caption_font)
        painter.setPen(self._color)
        painter.drawText(
            strip.adjusted(8, 0, -8, 0),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            caption,
        )
        painter.end()

    def picture(self) -> QImage:
        """The current state drawn whole into a new image, the canvas left as it is (what
        a frame drawn by parts must equal)."""
        canvas = self._canvas
        self._canvas = QImage(canvas.size(), QImage.Format.Format_RGB32)
        self._canvas.fill(self._background)
        try:
            self._paint(None, "")
            return self._canvas
        finally:
            self._canvas = canvas

    def _caption(self, text: str) -> str:
        return f"{self.title} — {text}" if self.title else text

    def draw_next(self) -> bool:
        """Draw the next frame; False once every frame is drawn."""
        overlay, playback, plan = self._overlay, self.playback, self.plan
        if overlay is None or self.drawn >= self.total:
            return False
        strip = QRect(0, 0, plan.width, CAPTION_PIXELS)
        if self.drawn < len(plan.positions):
            position = plan.positions[self.drawn]
            before_index = playback.step_index
            playback.seek(position, quiet=True)
            text = self._caption(f"step {playback.step_index} of {playback.timeline.last_index}")
            if self.drawn == 0:
                overlay.set_spec_override(self._override, None)
                overlay.show_steps(playback.steps())
                self._paint(None, text)
                self.encoder.add(self._canvas, None)
            else:
                changed = playback.changed_between(before_index, playback.step_index)
                old = self._marked(changed)
                overlay.set_spec_override(self._override, changed)
                overlay.show_steps(playback.steps())
                rects = [self._pixels(r) for r in old + self._marked(changed)]
                self._paint(rects, text)
                self.encoder.add(self._canvas, [strip, *rects])
        else:
            # the final state as the session shows it: drawn whole, written where it differs
            playback.seek(None, quiet=True)
            overlay.show_steps([])
            overlay.set_spec_override(None, None)
            self._paint(None, self._caption("final state"))
            self.encoder.add(self._canvas, None)
        self.drawn += 1
        return self.drawn < self.total

    def cancel(self) -> None:
        """Stop: take the overlay off the view and drop the frames; nothing is written."""
        self.release_view()
        self.encoder.discard()

    def release_view(self) -> None:
        """Take the overlay off the view and give its items back their caches (done
        drawing; the frames stay)."""
        overlay, self._overlay = self._overlay, None
        if overlay is None:
            return
        overlay.show_steps([])
        if overlay.scene.spec_override is not None:
            overlay.set_spec_override(None, None)
        overlay.close()
        for item, mode in zip(self._cached, self._modes, strict=True):
            try:
                item.setCacheMode(mode)
            except RuntimeError:  # the view rebuilt its drawing meanwhile
                pass
        for item in self._selected:
            try:
                item.setSelected(True)
            except RuntimeError:
                pass
        self._cached, self._modes, self._selected = [], [], []

    def finish(self) -> MovieSummary:
        """Draw what is left, then write the file whole. Raises ShardscopeError when it
        cannot be written (no file is left then)."""
        try:
            while self.draw_next():
                QApplication.processEvents()
        finally:
            self.release_view()
        data = self.encoder.encode()
        write_whole(self.path, data)
        return self.summary(len(data))

    def summary(self, size: int) -> MovieSummary:
        plan = self.plan
        return MovieSummary(
            self.drawn, plan.width, plan.height, size, plan.all_steps, plan.shown_steps
        )


_NO_CACHE = QGraphicsItem.CacheMode.NoCache


def write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (``files.write_atomic``: only a regular file
    or a new path, nothing left where it fails); ShardscopeError naming why not."""
    write_atomic(path, lambda f: f.write(data), "choose a .gif or .mp4 name in a writable folder")
