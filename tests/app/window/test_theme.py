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
