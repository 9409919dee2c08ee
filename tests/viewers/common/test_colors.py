"""Axis, device and theme colours, the device colour table and readable text colours."""

from PySide6.QtGui import QColor

from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.viewers.common.colors import (
    LUT_SIZE,
    THEMES,
    axis_color,
    device_colors,
    device_lut,
    lut_for,
    readable_color,
    text_color_on,
)


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


def test_lut_repeats_device_colours_to_256_entries():
    lut = lut_for(3)
    assert lut.shape == (LUT_SIZE, 3) and lut.flags.c_contiguous
    assert (lut[:3] == device_lut(3)).all() and (lut[3:6] == device_lut(3)).all()
    assert (lut_for(0)[0] == device_lut(1)[0]).all()
    assert (lut_for(4096) == device_lut(LUT_SIZE)).all()


def test_readable_color_keeps_contrast_with_the_background():
    light, dark = THEMES["light"], THEMES["dark"]
    blue = QColor("#0072B2")
    assert readable_color(blue, light) == blue
    pale = QColor("#E6F2E8")
    assert readable_color(pale, light) == pale.darker(160)
    assert readable_color(QColor("#2E2E2E"), dark) == QColor("#2E2E2E").lighter(160)
