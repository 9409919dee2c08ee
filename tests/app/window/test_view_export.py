"""File > Export view as PNG / SVG."""

from tests.support.file_menu import (
    answer_save,
)


def test_export_png_and_svg(make_window, tmp_path, qtbot):
    window = make_window("example:mlp", propagate=False)
    assert window.files.export(tmp_path / "g.png")
    assert window.files.export(tmp_path / "g.svg")
    assert (tmp_path / "g.png").stat().st_size > 5000
    assert "<svg" in (tmp_path / "g.svg").read_text()[:2000]


def test_export_through_the_file_menu_suggests_the_program_name(
    make_window, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp", propagate=False)
    for text, fmt in (("Export view as &PNG…", "png"), ("Export view as S&VG…", "svg")):
        asked = []
        answer_save(monkeypatch, tmp_path / f"view.{fmt}", asked)
        pick(window, "&File", text)
        assert asked == [(f"Export view as {fmt.upper()}", f"mlp.{fmt}")]
        assert (tmp_path / f"view.{fmt}").stat().st_size > 1000
        assert f"exported {tmp_path / f'view.{fmt}'}" in window.messages.messages()


def test_exporting_over_a_pipe_or_device_says_so_and_leaves_it(
    make_window, tmp_path, monkeypatch, pick
):
    import os
    import stat

    window = make_window("example:mlp", propagate=False)
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    fifo = tmp_path / "view.png"
    os.mkfifo(fifo)  # no reader: Qt writing to it straight would wait forever
    device = tmp_path / "view.svg"
    device.symlink_to("/dev/null")
    for text, path in (("Export view as &PNG…", fifo), ("Export view as S&VG…", device)):
        answer_save(monkeypatch, path, [])
        pick(window, "&File", text)
        errors = window.messages.messages("error")
        assert "not a regular file" in errors[-1] and "\n" not in errors[-1]
        assert str(path) in errors[-1]
    assert len(window.messages.messages("error")) == 2
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISCHR(os.stat(device).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["view.png", "view.svg"]
