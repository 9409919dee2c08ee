"""The export's frames drawn by parts equal the whole picture, and the plan keeps labels legible."""

import numpy as np
import pytest
from PIL import Image, ImageSequence
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage

from shardscope.backend.program.load import load_program
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.session.document import Session
from shardscope.backend.session.playback import Playback
from shardscope.viewers.graph.gif_stream import image_pixels
from shardscope.viewers.graph.movie import (
    CAPTION_PIXELS,
    MovieDrawer,
    plan_movie,
    sampled_positions,
)
from shardscope.viewers.graph.pages import MIN_LABEL_PIXELS
from shardscope.viewers.graph.view import GraphView


@pytest.fixture
def propagated(qapp):
    views = []

    def make(source):
        program = load_program(source)
        session = Session()
        session.set_program(program)
        session.set_propagation(
            propagate(program, session.mesh, session.specs_for_propagation(), strict=False)
        )
        view = GraphView(session)
        view.set_style_theme("light")
        views.append(view)
        result = session.propagation
        return session, view, Playback(result.timeline, result.graph)

    yield make
    for view in views:
        view.close()


def test_sampled_positions_bound_the_frames_and_keep_the_last_step():
    assert sampled_positions(0) == ([], 1)
    assert sampled_positions(3) == ([0, 1, 2], 1)
    positions, stride = sampled_positions(5000, 200)
    assert stride == 25 and len(positions) == 201 and positions[-2:] == [4975, 4999]
    positions, stride = sampled_positions(4001, 200)
    assert stride == 21 and positions[-1] == 4000 and len(positions) <= 201


def _rgb(image: QImage) -> np.ndarray:
    pixels = image_pixels(image).copy()
    return np.stack([(pixels >> 16) & 255, (pixels >> 8) & 255, pixels & 255], axis=-1)


def test_each_frame_drawn_by_parts_is_the_whole_picture_and_the_gif_holds_it(propagated, tmp_path):
    session, view, playback = propagated("example:transformer")
    out = tmp_path / "t.gif"
    rect = view.scene().sceneRect()
    # the first block: a region the steps leave and re-enter
    top = QRectF(rect.left(), rect.top(), rect.width(), rect.height() / 3)
    plan = plan_movie(view, playback, out, source=top)
    drawer = MovieDrawer(view, playback, session.specs, out, plan)
    assert drawer.total == len(plan.positions) + 1 > 10
    drawn = []
    while True:
        more = drawer.draw_next()
        if drawer.drawn % 9 == 1 or not more:
            parts = _rgb(drawer._canvas)[CAPTION_PIXELS:]
            whole = _rgb(drawer.picture())[CAPTION_PIXELS:]
            # the steps' rings and flows move: what they leave behind is redrawn
            differ = np.abs(parts.astype(int) - whole.astype(int)).max(axis=-1) > 40
            assert differ.mean() < 0.0005, (drawer.drawn, differ.sum())
        drawn.append(_rgb(drawer._canvas))
        if not more:
            break
    drawer.release_view()
    out.write_bytes(drawer.encoder.encode())
    with Image.open(out) as gif:
        frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(gif)]
    assert len(frames) == len(drawn) == plan.frames
    assert frames[0].shape == (plan.height, plan.width, 3)
    for decoded, canvas in zip(frames, drawn, strict=True):
        # one palette for the file: colours are the nearest of 255, never far off
        error = np.abs(decoded.astype(int) - canvas.astype(int)).max(axis=-1)
        assert error.mean() < 3 and (error > 60).mean() < 0.002
    # the frames differ from step to step, and the later ones take a fraction of the first
    assert any((a != b).any() for a, b in zip(frames, frames[1:], strict=False))
    assert out.stat().st_size < 3 * plan.width * plan.height / 4


def test_the_plan_keeps_labels_legible_and_refuses_what_is_not(propagated, tmp_path):
    session, view, playback = propagated("example:transformer")
    out = tmp_path / "t.gif"
    plan = plan_movie(view, playback, out)
    assert plan.problem is None and MIN_LABEL_PIXELS <= plan.label_px < MIN_LABEL_PIXELS + 0.5
    small = plan_movie(view, playback, out, width=plan.width // 2)
    assert small.label_px < MIN_LABEL_PIXELS and "labels would be" in small.problem
    assert f"at least {plan.width}" in small.problem or f"{plan.width - 1}" in small.problem
    with pytest.raises(ValueError, match="labels would be"):
        MovieDrawer(view, playback, session.specs, out, small)
    huge = plan_movie(view, playback, out, width=40_000)
    assert "too large" in huge.problem


def test_a_region_draws_the_steps_that_change_it(propagated, tmp_path):
    session, view, playback = propagated("example:transformer")
    out = tmp_path / "t.gif"
    whole = plan_movie(view, playback, out)
    rect = view.scene().sceneRect()
    top = QRectF(rect.left(), rect.top(), rect.width(), rect.height() / 4)
    part = plan_movie(view, playback, out, source=top)
    assert part.width == whole.width and part.height < whole.height / 2
    assert 0 < part.shown_steps < whole.shown_steps == whole.all_steps
    assert part.estimate < whole.estimate * part.frames / whole.frames
    with pytest.raises(ValueError, match="empty"):
        plan_movie(view, playback, out, source=QRectF(rect.right() + 10, 0, 5, 5))
