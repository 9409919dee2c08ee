"""The animated GIF of a propagation: sampled steps, frames drawn with the step overlay."""

import pytest
from PIL import Image, ImageSequence
from PySide6.QtGui import QColor, QImage

from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.propagation.timeline import Timeline
from shardscope.backend.session.playback import Playback
from shardscope.viewers.graph import animation
from shardscope.viewers.graph.animation import caption, sampled_positions, to_pil, write_gif


def test_sampled_positions_bound_the_frames_and_keep_the_last_step():
    assert sampled_positions(0) == ([], 1)
    assert sampled_positions(3) == ([0, 1, 2], 1)
    positions, stride = sampled_positions(5000, 200)
    assert stride == 25 and len(positions) == 201 and positions[-2:] == [4975, 4999]
    positions, stride = sampled_positions(4001, 200)
    assert stride == 21 and positions[-1] == 4000 and len(positions) <= 201


def test_to_pil_keeps_size_and_colours(qapp):
    image = QImage(31, 7, QImage.Format.Format_ARGB32)
    image.fill(QColor(10, 200, 30))
    image.setPixelColor(30, 6, QColor(250, 1, 2))
    pil = to_pil(image)
    assert pil.size == (31, 7)
    assert pil.getpixel((0, 0)) == (10, 200, 30) and pil.getpixel((30, 6)) == (250, 1, 2)


def test_caption_writes_in_the_corner(qapp):
    image = QImage(300, 100, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    caption(image, "step 3 of 9", QColor("black"))
    pil = to_pil(image)
    corner = {pil.getpixel((x, y)) for x in range(0, 120) for y in range(0, 40)}
    rest = {pil.getpixel((x, y)) for x in range(150, 300) for y in range(50, 100)}
    assert len(corner) > 2 and rest == {(255, 255, 255)}


def _frames(path):
    with Image.open(path) as gif:
        return [(frame.copy(), frame.info.get("duration")) for frame in ImageSequence.Iterator(gif)]


def test_write_gif_draws_every_step_then_the_final_state(panel_for, tmp_path):
    session, panel = panel_for("example:mlp")
    result = propagate(session.program)
    session.set_propagation(result)
    playback = Playback(result.timeline, result.graph)
    out = tmp_path / "mlp.gif"
    summary = write_gif(panel.view, playback, session.specs, out, fps=10)
    frames = _frames(out)
    assert summary.frames == len(frames) == len(playback) + 1 and summary.stride == 1
    assert frames[0][0].size == (summary.width, summary.height)
    assert [d for _, d in frames[:-1]] == [100] * len(playback)
    assert frames[-1][1] == animation.FINAL_HOLD_MS
    pictures = {f.convert("RGB").tobytes() for f, _ in frames}
    assert len(pictures) == len(frames)
    # the view is left without the overlay, showing the session's own badges
    assert panel.view.graph_scene.spec_override is None
    assert [i for i in panel.view.scene().items() if i.data(0) == "step-ring"] == []


def test_long_timelines_are_sampled_and_big_frames_scaled_down(panel_for, tmp_path, monkeypatch):
    session, panel = panel_for("example:mlp")
    result = propagate(session.program)
    session.set_propagation(result)
    playback = Playback(result.timeline, result.graph)
    monkeypatch.setattr(animation, "MAX_FRAMES", 3)
    monkeypatch.setattr(animation, "MAX_FRAME_PIXELS", 40_000)
    summary = write_gif(panel.view, playback, session.specs, tmp_path / "s.gif", scale=4)
    assert summary.frames <= 3 + 2 and summary.stride > 1
    assert summary.width * summary.height <= 40_000


def test_no_steps_is_a_value_error_and_writes_nothing(panel_for, tmp_path):
    session, panel = panel_for("example:mlp")
    result = propagate(session.program)
    session.set_propagation(result)
    empty = Playback(Timeline(steps=[], initial={}, final={}), result.graph)
    with pytest.raises(ValueError, match="no steps"):
        write_gif(panel.view, empty, session.specs, tmp_path / "n.gif")
    assert not (tmp_path / "n.gif").exists()
