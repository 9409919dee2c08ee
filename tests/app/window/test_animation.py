"""File > Export propagation animation, as a user picks it: the file dialog answered by the test."""

import pytest
from PIL import Image, ImageSequence
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QPushButton


def answer_save(monkeypatch, path, asked):
    def get_save_file_name(parent, caption, name="", *rest, **kw):
        asked.append((caption, name))
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", get_save_file_name)


def frames_of(path) -> list[Image.Image]:
    with Image.open(path) as gif:
        return [frame.copy() for frame in ImageSequence.Iterator(gif)]


def test_menu_writes_the_animation_and_leaves_the_view_as_it_was(
    make_window, tmp_path, monkeypatch, pick, qtbot
):
    window = make_window("example:mlp")
    timeline = window.timeline
    timeline.seek_step(2)
    badges_before = [window.graph.badge_text(v.id) for v in window.session.graph.values]
    rings_before = len(timeline.overlay.ring_items)
    asked = []
    out = tmp_path / "anim.gif"
    answer_save(monkeypatch, out, asked)
    with qtbot.waitSignal(window.gif_export.finished, timeout=60_000) as ended:
        pick(window, "&File", "Export propagation a&nimation…")
    assert ended.args == [True]
    assert asked == [("Export propagation animation", "mlp.gif")]
    frames = frames_of(out)
    # one frame per step of mlp's timeline, then the final state
    assert len(frames) == len(timeline.playback) + 1
    assert 200 < frames[0].width <= 2000 and 200 < frames[0].height <= 2000
    assert frames[0].tobytes() != frames[-1].tobytes()
    assert any(f"exported {out}" in m for m in window.messages.messages())
    # the window still shows step 2, its badges and its ring
    assert timeline.playback.step_index == 2
    assert [window.graph.badge_text(v.id) for v in window.session.graph.values] == badges_before
    assert len(timeline.overlay.ring_items) == rings_before > 0


def test_without_propagation_it_is_one_line_in_messages(make_window, tmp_path, monkeypatch, pick):
    window = make_window("example:mlp", propagate=False)
    out = tmp_path / "anim.gif"
    answer_save(monkeypatch, out, [])
    pick(window, "&File", "Export propagation a&nimation…")
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "propagate first" in errors[0] and "\n" not in errors[0]
    assert not out.exists()


def test_unwritable_place_is_one_line_in_messages(make_window, tmp_path, qtbot):
    window = make_window("example:conflict")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with qtbot.waitSignal(window.gif_export.finished, timeout=60_000) as ended:
        window.gif_export.export(blocker / "anim.gif")
    assert ended.args == [False]
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "cannot export" in errors[0] and "\n" not in errors[0]


def test_mp4_is_a_file_type_of_the_export(make_window, tmp_path, monkeypatch, pick, qtbot):
    av = pytest.importorskip("av")
    window = make_window("example:mlp")
    out = tmp_path / "anim.mp4"
    answer_save(monkeypatch, out, [])
    with qtbot.waitSignal(window.gif_export.finished, timeout=60_000) as ended:
        pick(window, "&File", "Export propagation a&nimation…")
    assert ended.args == [True]
    with av.open(str(out)) as video:
        stream = video.streams.video[0]
        assert stream.codec_context.name == "h264"
        frames = sum(1 for _ in video.decode(video=0))
    # each step, the final state, then that state repeated for the hold
    assert frames > len(window.timeline.playback) + 1
    assert any(f"exported {out}" in m for m in window.messages.messages())


def test_cancel_stops_drawing_keeps_the_window_live_and_leaves_no_file(
    make_window, tmp_path, qtbot
):
    window = make_window("example:transformer")
    export = window.gif_export
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "anim.gif"
    ticks = []
    clock = QTimer(window)
    clock.timeout.connect(lambda: ticks.append(1))
    clock.start(1)
    assert export.export(out)
    dialog = export.progress
    assert dialog is not None and dialog.maximum() > 20
    qtbot.waitUntil(lambda: export._drawer is not None and export._drawer.drawn >= 3)
    # the window's own timers kept firing between frames: the GUI thread was not held
    assert len(ticks) >= 2
    assert 0 < dialog.value() < dialog.maximum()
    cancel = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Cancel")
    with qtbot.waitSignal(export.finished, timeout=10_000) as ended:
        qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    clock.stop()
    assert ended.args == [False] and not export.busy
    assert not out.exists() and list(folder.iterdir()) == []
    assert any("cancelled" in m for m in window.messages.messages())
    assert window.messages.messages("error") == []
    # the window's graph was never touched; a new export runs to the end
    assert window.graph.graph_scene.spec_override is None
    with qtbot.waitSignal(export.finished, timeout=120_000) as ended:
        assert export.export(out)
    assert ended.args == [True] and out.exists()
