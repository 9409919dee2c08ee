"""File > Export view as PNG / SVG."""

from shardscope.viewers.graph import pages
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


def _expand_everything(window, pick, qtbot):
    """View > Expand all scopes, waited on until the whole drawing is on screen."""
    pick(window, "&View", "E&xpand all scopes")
    view = window.graph
    qtbot.waitUntil(lambda: view.expanded() and not view.folding, timeout=120_000)


def test_a_graph_too_tall_for_one_picture_is_exported_as_readable_pages(
    make_window, tmp_path, monkeypatch, pick, qtbot
):
    from PIL import Image

    window = make_window("example:transformer?layers=1", propagate=False)
    _expand_everything(window, pick, qtbot)
    rect = window.graph.scene().sceneRect()
    assert rect.height() > pages.PAGE_PIXELS  # one picture would shrink it
    out = tmp_path / "out"
    out.mkdir()
    answer_save(monkeypatch, out / "t.png")
    pick(window, "&File", "Export view as &PNG…")
    written = sorted(out.iterdir())
    assert len(written) >= 2
    assert [p.name for p in written] == [f"t-{i}.png" for i in range(1, len(written) + 1)]
    legible = pages.MIN_LABEL_PIXELS / pages.label_pixels(window.graph, 1.0)
    heights = 0
    for path in written:
        with Image.open(path) as image:
            width, height = image.size
        # every page as wide as the drawing at a scale with labels 9 px or more
        assert width >= rect.width() * legible - 1
        assert height <= pages.PAGE_PIXELS + pages.TITLE_PIXELS
        heights += height - pages.TITLE_PIXELS
    assert heights >= rect.height() * legible - len(written)
    last = window.messages.messages()[-1]
    assert f"exported t.png as {len(written)} pages" in last
    assert "t-1.png" in last and f"t-{len(written)}.png" in last


def test_a_graph_too_large_for_legible_pages_is_refused_naming_what_fits(
    make_window, tmp_path, monkeypatch, pick, qtbot
):
    window = make_window("example:transformer?layers=1", propagate=False)
    _expand_everything(window, pick, qtbot)
    # fewer pages allowed than the drawing takes with labels 9 px high
    monkeypatch.setattr(pages, "MAX_PAGES", 2)
    out = tmp_path / "out"
    out.mkdir()
    answer_save(monkeypatch, out / "t.png")
    pick(window, "&File", "Export view as &PNG…")
    assert list(out.iterdir()) == []
    banner = window.error_banner
    qtbot.waitUntil(banner.isVisible, timeout=10_000)
    text = banner.label.text()
    assert "cannot export" in text and "pages of 8000 px with legible labels" in text
    assert "Collapse all scopes" in text and "SVG" in text
    assert "\n" not in window.messages.messages("error")[-1]
    # the SVG it names is written, whole
    answer_save(monkeypatch, out / "t.svg")
    pick(window, "&File", "Export view as S&VG…")
    assert "<svg" in (out / "t.svg").read_text()[:2000]


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
