"""File > Export propagation animation, as a user picks it: the file dialog answered by the test."""

from pathlib import Path

import pytest
from PIL import Image, ImageSequence
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QPushButton


def answer_save(monkeypatch, path, asked):
    def get_save_file_name(parent, caption, name="", *rest, **kw):
        asked.append((caption, Path(name).name))  # the dialog opens in the exports folder
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", get_save_file_name)


def press_export(window, qtbot):
    """Answer the options dialog the menu opens with its Export… button."""
    export = window.gif_export
    qtbot.waitUntil(lambda: export.dialog is not None and export.dialog.isVisible())
    dialog = export.dialog
    assert dialog.ok_button.isEnabled(), dialog.info.text()
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    return dialog


def choose(qtbot, radio):
    """Click a radio button on its circle, as a user does."""
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))
    assert radio.isChecked()


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
        press_export(window, qtbot)
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
        press_export(window, qtbot)
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


def _click_node(window, qtbot, scope_prefix):
    from shardscope.viewers.graph.items import NodeItem

    graph = window.graph
    item = next(
        i
        for i in graph.nodes
        if isinstance(i, NodeItem) and (i.node.scope or "").startswith(scope_prefix)
    )
    graph.centerOn(item)
    qtbot.mouseClick(
        graph.viewport(), Qt.MouseButton.LeftButton, pos=graph.mapFromScene(item.scenePos())
    )
    assert item.isSelected()
    return item.node.scope


def test_the_dialog_draws_the_selected_scope_legibly_at_the_width_it_shows(
    make_window, tmp_path, monkeypatch, pick, qtbot
):
    window = make_window("example:transformer")
    scope = _click_node(window, qtbot, "jvp(layer_1)")
    out = tmp_path / "layer.gif"
    asked = []
    answer_save(monkeypatch, out, asked)
    pick(window, "&File", "Export propagation a&nimation…")
    dialog = window.gif_export.dialog
    qtbot.waitUntil(lambda: dialog.isVisible())
    # it opens on the selected box's scope, at the narrowest width with 9-px labels
    assert dialog.scope_button.isChecked() and dialog.scope_box.currentText() == scope
    plan = dialog.plan
    assert plan.problem is None and 9 <= plan.label_px < 9.5
    assert dialog.width_box.value() == plan.width
    shown = dialog.info.text()
    assert f"{plan.frames} frames" in shown and "MB" in shown or "KB" in shown
    assert f"{plan.width}x{plan.height} px" in shown
    with qtbot.waitSignal(window.gif_export.finished, timeout=120_000) as ended:
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert ended.args == [True]
    name = asked[0][1]
    assert name.startswith("transformer-jvp_layer_1") and name.endswith(".gif")
    frames = frames_of(out)
    assert len(frames) == plan.frames and frames[0].size == (plan.width, plan.height)
    # fewer steps than the whole graph's: only those that change the scope
    assert plan.shown_steps < len(window.timeline.playback)
    assert any(f"exported {out}" in m for m in window.messages.messages())


def test_a_width_with_illegible_labels_is_refused_in_the_dialog_and_cancel_changes_nothing(
    make_window, tmp_path, monkeypatch, pick, qtbot
):
    window = make_window("example:transformer")
    asked = []
    folder = tmp_path / "out"
    folder.mkdir()
    answer_save(monkeypatch, folder / "x.gif", asked)
    pick(window, "&File", "Export propagation a&nimation…")
    dialog = window.gif_export.dialog
    qtbot.waitUntil(lambda: dialog.isVisible())
    assert dialog.whole_button.isChecked()
    legible = dialog.width_box.value()
    dialog.width_box.selectAll()
    qtbot.keyClicks(dialog.width_box, "400")
    qtbot.keyClick(dialog.width_box, Qt.Key.Key_Tab)
    assert dialog.width_box.value() == 400
    assert not dialog.ok_button.isEnabled()
    assert "labels would be" in dialog.info.text() and f"at least {legible}" in dialog.info.text()
    qtbot.keyClick(dialog.width_box, Qt.Key.Key_Return)  # Enter does not export it either
    assert dialog.isVisible() and asked == []
    cancel = dialog.buttons.button(dialog.buttons.StandardButton.Cancel)
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    assert asked == [] and not window.gif_export.busy and window.gif_export.dialog is None
    assert list(folder.iterdir()) == [] and window.messages.messages("error") == []
    # the visible region of the zoomed-in view: a smaller picture, as legible
    window.graph.zoom(3.0)
    qtbot.wait(50)
    pick(window, "&File", "Export propagation a&nimation…")
    dialog = window.gif_export.dialog
    qtbot.waitUntil(lambda: dialog.isVisible())
    whole = dialog.plan
    choose(qtbot, dialog.region_button)
    shown = window.graph.mapToScene(window.graph.viewport().rect()).boundingRect()
    assert dialog.plan.source == shown.intersected(whole.source)
    assert dialog.plan.width * dialog.plan.height < whole.width * whole.height / 3
    assert dialog.plan.label_px >= 9 and dialog.ok_button.isEnabled()
    dialog.reject()


def test_a_large_file_asks_first_and_its_cancel_writes_nothing(
    make_window, tmp_path, monkeypatch, pick, qtbot
):
    window = make_window("example:mlp")
    export = window.gif_export
    export.warn_bytes = 1000  # the mlp's animation is larger than that
    out = tmp_path / "big.gif"
    answer_save(monkeypatch, out, [])
    pick(window, "&File", "Export propagation a&nimation…")
    press_export(window, qtbot)
    qtbot.waitUntil(lambda: export.confirm is not None and export.confirm.isVisible())
    box = export.confirm
    assert "Write it anyway?" in box.text() and "big.gif" in box.text()
    qtbot.mouseClick(box.button(box.StandardButton.Cancel), Qt.MouseButton.LeftButton)
    assert export.confirm is None and not export.busy and not out.exists()
    assert window.graph.graph_scene.spec_override is None
    pick(window, "&File", "Export propagation a&nimation…")
    press_export(window, qtbot)
    qtbot.waitUntil(lambda: export.confirm is not None and export.confirm.isVisible())
    with qtbot.waitSignal(export.finished, timeout=60_000) as ended:
        qtbot.mouseClick(
            export.confirm.button(export.confirm.StandardButton.Save), Qt.MouseButton.LeftButton
        )
    assert ended.args == [True] and out.exists()


def test_exporting_the_animation_over_a_pipe_says_so_and_leaves_it(
    make_window, tmp_path, monkeypatch, pick, qtbot
):
    import os
    import stat

    window = make_window("example:mlp")
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    fifo = tmp_path / "anim.gif"
    os.mkfifo(fifo)  # no reader: writing to it straight would wait forever
    answer_save(monkeypatch, fifo, [])
    with qtbot.waitSignal(window.gif_export.finished, timeout=120_000) as ended:
        pick(window, "&File", "Export propagation a&nimation…")
        press_export(window, qtbot)
    assert ended.args == [False]
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "is a pipe (FIFO), not a regular file" in errors[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["anim.gif"]
