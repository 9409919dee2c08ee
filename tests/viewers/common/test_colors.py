"""Axis, device and theme colours, the device colour table and readable text colours."""

from PySide6.QtGui import QColor

from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.viewers.common.colors import (
    LUT_SIZE,
    THEMES,
    UNKNOWN_AXIS_COLOR,
    AxisPalette,
    axis_color,
    device_colors,
    device_lut,
    lut_for,
    readable_color,
    text_color_on,
)


def test_axis_colors_are_distinct_within_a_mesh():
    mesh = parse_mesh("data=4,model=2")
    assert axis_color(mesh, "data") == axis_color(["data", "model"], "data")
    assert axis_color(mesh, "data") != axis_color(mesh, "model")
    assert axis_color(mesh, "replicated") == axis_color(mesh, None)
    assert axis_color(mesh, "fsdp") == QColor(UNKNOWN_AXIS_COLOR)
    names = [f"a{i}" for i in range(10)]
    assert len({axis_color(names, n).name() for n in names}) == 10


def test_an_axis_keeps_its_colour_by_name_whatever_its_place_in_the_mesh():
    slots = AxisPalette()

    def colours(names):
        return {n: slots.slots_for(tuple(names))[n] for n in names}

    first = colours(["data", "model"])
    assert first == {"data": 0, "model": 1}  # a first mesh gets the first colours in order
    assert colours(["model", "data"]) == first  # reordered
    grown = colours(["data", "fsdp", "model"])  # an axis added before model
    assert grown["data"] == 0 and grown["model"] == 1 and grown["fsdp"] == 2
    assert colours(["pipe", "data", "model"])["pipe"] == 3  # a colour no name has yet
    assert colours(["model"]) == {"model": 1}
    # two names that never met hold the same slot only once all seven colours are taken
    seven = colours(["a", "b", "c"])
    assert set(seven.values()) == {4, 5, 6}
    late = colours(["x", "y"])
    assert late == {"x": 0, "y": 1}  # the first free in this mesh (data and model are not)
    met = colours(["data", "x"])
    assert met["data"] == 0 and met["x"] != 0  # data was named first and keeps blue
    assert colours(["data", "x"]) == met  # and x keeps its new slot from then on


def test_the_usual_axis_names_get_the_same_colours_in_any_process():
    # a render from the command line meets the 3-D mesh first; the window met data and
    # model before the preset added pipe: both draw each axis in one colour
    fresh, window = AxisPalette(), AxisPalette()
    window.slots_for(("data", "model"))
    mesh = ("pipe", "data", "model")
    assert fresh.slots_for(mesh) == window.slots_for(mesh) == {"pipe": 3, "data": 0, "model": 1}
    assert AxisPalette().slots_for(("x", "y")) == {"x": 0, "y": 1}
    assert AxisPalette().slots_for(("x", "data")) == {"data": 0, "x": 1}


def test_a_preview_of_a_new_name_gives_it_no_colour_for_good():
    slots = AxisPalette()
    slots.slots_for(("data", "model"))
    assert slots.slots_for(("data", "model", "new"), remember=False)["new"] == 2
    assert "new" not in slots.slots
    assert axis_color(("data", "model", "typing"), "typing", remember=False).isValid()


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


def test_the_changed_and_selected_rings_read_apart_from_each_other_and_from_conflicts():
    from shardscope.viewers.graph.markers import CONFLICT_COLOR, GSPMD_COLOR

    def hue_gap(a: QColor, b: QColor) -> int:
        gap = abs(a.hslHue() - b.hslHue())
        return min(gap, 360 - gap)

    for theme in THEMES.values():
        changed, selected = theme.highlight, theme.selected
        for other in (selected, QColor(CONFLICT_COLOR), QColor(GSPMD_COLOR)):
            assert hue_gap(changed, other) > 30, (theme.name, changed.name(), other.name())
        assert hue_gap(selected, QColor(CONFLICT_COLOR)) > 30
        assert abs(theme.background.lightness() - selected.lightness()) > 40
