"""File > Export propagation as GIF, as a user picks it: the file dialog answered by the test."""

from PIL import Image, ImageSequence
from PySide6.QtWidgets import QFileDialog


def answer_save(monkeypatch, path, asked):
    def get_save_file_name(parent, caption, name="", *rest, **kw):
        asked.append((caption, name))
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", get_save_file_name)


def frames_of(path) -> list[Image.Image]:
    with Image.open(path) as gif:
        return [frame.copy() for frame in ImageSequence.Iterator(gif)]


def test_menu_writes_the_animation_and_leaves_the_view_as_it_was(
    make_window, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp")
    timeline = window.timeline
    timeline.seek_step(2)
    badges_before = [window.graph.badge_text(v.id) for v in window.session.graph.values]
    rings_before = len(timeline.overlay.ring_items)
    asked = []
    out = tmp_path / "anim.gif"
    answer_save(monkeypatch, out, asked)
    pick(window, "&File", "Export propagation as &GIF…")
    assert asked == [("Export propagation as GIF", "mlp.gif")]
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
    pick(window, "&File", "Export propagation as &GIF…")
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "propagate first" in errors[0] and "\n" not in errors[0]
    assert not out.exists()


def test_unwritable_place_is_one_line_in_messages(make_window, tmp_path):
    window = make_window("example:conflict")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert not window.gif_export.export(blocker / "anim.gif")
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "cannot export" in errors[0] and "\n" not in errors[0]
