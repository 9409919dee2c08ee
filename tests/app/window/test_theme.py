"""Dark and light themes for the whole application, and a font readable on a projector."""

import pytest
from PySide6.QtGui import QFont, QPalette

from shardscope.app.window.theme import THEME_NAMES, apply_theme, palette_for, projector_font

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
