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
