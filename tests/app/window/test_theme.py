"""Dark and light themes for the whole application, and a font readable on a projector."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette

from shardscope.app.window.theme import THEME_NAMES, apply_theme, palette_for, projector_font
from shardscope.viewers.graph.markers import SelectedMarkItem

ROLE = QPalette.ColorRole


@pytest.fixture
def app(qapp):
    """The application; its style, palette and font are put back afterwards."""
    style, palette, font = qapp.style().name(), QPalette(qapp.palette()), QFont(qapp.font())
    yield qapp
    qapp.setStyle(style)
    qapp.setPalette(palette)
    qapp.setFont(font)


def lightness(palette: QPalette, role, group=QPalette.ColorGroup.Active) -> int:
    return palette.color(group, role).lightness()


@pytest.mark.parametrize("name", THEME_NAMES)
def test_text_contrasts_with_its_background(name):
    pal = palette_for(name)
    dark = name == "dark"
    for background, text in [
        (ROLE.Window, ROLE.WindowText),
        (ROLE.Base, ROLE.Text),
        (ROLE.Button, ROLE.ButtonText),
    ]:
        assert (lightness(pal, background) < 128) is dark, background
        assert (lightness(pal, text) < 128) is not dark, text
        assert abs(lightness(pal, background) - lightness(pal, text)) > 150


@pytest.mark.parametrize("name", THEME_NAMES)
def test_disabled_text_is_muted(name):
    pal = palette_for(name)
    disabled = QPalette.ColorGroup.Disabled
    assert pal.color(disabled, ROLE.Text) != pal.color(ROLE.Text)
    assert pal.color(disabled, ROLE.Text) == pal.color(ROLE.PlaceholderText)


def test_switching_the_application_between_dark_and_light(app):
    assert apply_theme(app, "dark") == "dark"
    assert app.style().name().lower() == "fusion"
    assert app.palette().color(ROLE.Window) == palette_for("dark").color(ROLE.Window)
    assert lightness(app.palette(), ROLE.Base) < 128
    assert apply_theme(app, "light") == "light"
    assert app.palette().color(ROLE.Window) == palette_for("light").color(ROLE.Window)
    assert lightness(app.palette(), ROLE.Base) > 128


def test_an_unknown_theme_falls_back_to_dark(app):
    assert apply_theme(app, "solarized") == "dark"
    assert app.palette().color(ROLE.Base) == palette_for("dark").color(ROLE.Base)


def test_projector_font_enlarges_small_fonts_only(app):
    small = QFont(app.font())
    small.setPointSizeF(8.0)
    app.setFont(small)
    projector_font(app)
    assert app.font().pointSizeF() == 10.5
    large = QFont(app.font())
    large.setPointSizeF(14.0)
    app.setFont(large)
    projector_font(app)
    assert app.font().pointSizeF() == 14.0


# -- the graph's rings, as the user meets them ------------------------------------------
def ring_pixels(view, item, color) -> int:
    """How many pixels of ``color`` the view draws inside ``item``'s scene rectangle."""
    rect = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
    image = view.viewport().grab(rect).toImage()
    want = QColor(color).rgb()
    return sum(
        1
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).rgb() == want
    )


@pytest.mark.parametrize("name", THEME_NAMES)
def test_the_selected_ring_follows_the_inspected_tensor_through_undo_and_redo(
    make_window, qtbot, drop_axis, name, app
):
    window = make_window("example:conflict")
    was = window.theme
    if window.theme != name:
        window.menu_actions["toggle_theme"].trigger()
    try:
        selected_ring_story(window, qtbot, drop_axis)
    finally:
        if window.theme != was:
            window.menu_actions["toggle_theme"].trigger()


def selected_ring_story(window, qtbot, drop_axis) -> None:
    view = window.graph
    theme = view.style_.theme
    assert theme.selected != theme.highlight  # two colours: selected, changed
    x = window.session.graph.value_by_name("x").id
    badge = view.badge_for(x)
    view.centerOn(badge)
    qtbot.mouseClick(
        view.viewport(),
        Qt.MouseButton.LeftButton,
        pos=view.mapFromScene(badge.sceneBoundingRect().center()),
    )
    assert window.selected_value == x

    def rings():
        return [
            m
            for b in view.graph_scene.badges_of(x)
            for m in b.childItems()
            if isinstance(m, SelectedMarkItem)
        ]

    assert rings()
    count = window.propagation.count
    drop_axis(window, x, 1, "model")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    changed = window.timeline.overlay.change_items
    assert changed and all(c.pen().color() == theme.highlight for c in changed)
    (ring,) = rings()
    assert ring.color == theme.selected and ring.isVisible()
    # drawn: the selected ring's colour is on screen around x, beside the changed ring's
    qtbot.wait(50)
    assert ring_pixels(view, ring, theme.selected) > 40
    assert ring_pixels(view, ring, theme.highlight) > 20
    count = window.propagation.count
    qtbot.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    assert window.session.spec(x).dims[1].axes == ()
    assert window.selected_value == x
    (ring,) = rings()
    qtbot.wait(50)
    assert ring_pixels(view, ring, theme.selected) > 40
    count = window.propagation.count
    qtbot.keyClick(
        view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    assert window.session.spec(x).dims[1].axes == ("model",)
    assert len(rings()) == 1


# -- axis colours, keyed by name ----------------------------------------------------------
def color_count(widget_or_image, color) -> int:
    image = widget_or_image if hasattr(widget_or_image, "pixelColor") else None
    if image is None:
        image = widget_or_image.grab().toImage()
    want = QColor(color).rgb()
    return sum(
        1
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).rgb() == want
    )


def model_colours(window, y: int) -> dict[str, object]:
    """What the user sees of ``model``'s colour in each view, and whether it is drawn."""
    from shardscope.viewers.graph.legend import BadgeLegend

    view = window.graph
    badge = view.badge_for(y)
    view.centerOn(badge)
    chip = window.palette_widget.chip("model")
    editor = window.mesh_editor
    row = editor.mesh.axis_names.index("model")
    decoration = editor.table.item(row, editor.NAME_COL).data(Qt.ItemDataRole.DecorationRole)
    out = {"palette": chip.color.name(), "editor": QColor(decoration).name()}
    legend = BadgeLegend(view.style_, window)
    legend.show()
    out["legend drawn"] = color_count(legend.view.viewport(), chip.color) > 20
    legend.close()
    chip_rect = view.mapFromScene(badge.sceneBoundingRect()).boundingRect()
    out["graph drawn"] = color_count(view.viewport().grab(chip_rect).toImage(), chip.color) > 20
    out["palette drawn"] = color_count(chip, chip.color) > 20
    window.select_value(y)
    slot = window.inspector.slot(0)
    out["inspector drawn"] = color_count(slot, chip.color) > 20
    return out


def test_a_preset_that_adds_and_moves_axes_keeps_models_colour_everywhere(make_window, wait_idle):
    window = make_window("example:conflict")
    wait_idle(window)
    y = window.session.graph.value_by_name("y").id  # sharded on model
    before = model_colours(window, y)
    assert before["palette"] == before["editor"]
    assert all(before[k] for k in before if k.endswith("drawn")), before
    combo = window.mesh_editor.preset_combo
    # fsdp comes in where model was: model moves from the 2nd axis to the 3rd
    combo.activated.emit(combo.findText("3-D data=2,fsdp=2,model=2"))
    assert window.session.mesh.axis_names == ("data", "fsdp", "model")
    wait_idle(window)
    assert window.session.spec(y).dims[0].axes == ("model",)
    after = model_colours(window, y)
    assert after == before
    fsdp = window.palette_widget.chip("fsdp").color
    data = window.palette_widget.chip("data").color
    assert len({fsdp.name(), data.name(), after["palette"]}) == 3
    # and back to a 2-D mesh in the other order
    combo.activated.emit(combo.findText("TPU 2x4 (v5e-8)"))
    combo.activated.emit(combo.findText("2-D data=2,model=4"))
    wait_idle(window)
    assert model_colours(window, y)["palette"] == before["palette"]
