from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.viewers.common.colors import (
    THEMES,
    axis_color,
    device_colors,
    device_lut,
    text_color_on,
)
from shardscope.viewers.common.mime import AXIS_MIME, axis_from_mime, axis_mime_data


def test_axis_colors_stable_by_position_and_distinct():
    mesh = parse_mesh("data=4,model=2")
    assert axis_color(mesh, "data") == axis_color(["data", "model"], "data")
    assert axis_color(mesh, "data") != axis_color(mesh, "model")
    assert axis_color(mesh, "replicated") == axis_color(mesh, None)
    names = [f"a{i}" for i in range(10)]
    assert len({axis_color(names, n).name() for n in names}) == 10


def test_device_colors_distinct_for_256():
    colors = device_colors(256)
    assert len({c.name() for c in colors}) == 256
    lut = device_lut(256)
    assert lut.shape == (256, 3) and lut.dtype.name == "uint8"


def test_themes_have_readable_contrast():
    for theme in THEMES.values():
        assert abs(theme.background.lightness() - theme.foreground.lightness()) > 150
        assert abs(theme.background.lightness() - theme.highlight.lightness()) > 40
    assert THEMES["dark"].is_dark and not THEMES["light"].is_dark
    assert text_color_on(THEMES["light"].background).name() == "#000000"


def test_axis_mime_round_trip():
    ok, axis = axis_from_mime(axis_mime_data("model"))
    assert (ok, axis) == (True, "model")
    ok, axis = axis_from_mime(axis_mime_data(None))
    assert (ok, axis) == (True, None)
    data = axis_mime_data("replicated")
    assert bytes(data.data(AXIS_MIME).data()) == b""
    from PySide6.QtCore import QMimeData

    foreign = QMimeData()
    foreign.setText("model")
    assert axis_from_mime(foreign) == (False, None)
