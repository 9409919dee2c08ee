"""Dark and light application themes (Fusion palettes sized for a projector)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

THEME_NAMES = ("dark", "light")

_COLORS = {
    "dark": {
        "window": "#252526",
        "base": "#1E1E1E",
        "alt": "#2A2A2D",
        "text": "#F0F0F0",
        "muted": "#A8A8A8",
        "button": "#333337",
        "highlight": "#2F6FB0",
        "link": "#7FB7FF",
    },
    "light": {
        "window": "#F2F2F2",
        "base": "#FFFFFF",
        "alt": "#F4F6F9",
        "text": "#111111",
        "muted": "#555555",
        "button": "#E6E6E6",
        "highlight": "#2F6FB0",
        "link": "#0B57A4",
    },
}


def palette_for(name: str) -> QPalette:
    """The QPalette of theme ``name`` (``dark`` or ``light``)."""
    c = {k: QColor(v) for k, v in _COLORS[name].items()}
    pal = QPalette()
    role = QPalette.ColorRole
    pal.setColor(role.Window, c["window"])
    pal.setColor(role.WindowText, c["text"])
    pal.setColor(role.Base, c["base"])
    pal.setColor(role.AlternateBase, c["alt"])
    pal.setColor(role.Text, c["text"])
    pal.setColor(role.Button, c["button"])
    pal.setColor(role.ButtonText, c["text"])
    pal.setColor(role.ToolTipBase, c["base"])
    pal.setColor(role.ToolTipText, c["text"])
    pal.setColor(role.PlaceholderText, c["muted"])
    pal.setColor(role.Highlight, c["highlight"])
    pal.setColor(role.HighlightedText, QColor("#FFFFFF"))
    pal.setColor(role.Link, c["link"])
    for group_role in (role.WindowText, role.Text, role.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, group_role, c["muted"])
    return pal


def apply_theme(app: QApplication, name: str) -> str:
    """Switch the whole application to theme ``name``; returns the name applied."""
    name = name if name in THEME_NAMES else "dark"
    app.setStyle("Fusion")
    app.setPalette(palette_for(name))
    return name


def projector_font(app: QApplication, point_size: float = 10.5) -> None:
    """A slightly larger UI font, readable when the window is projected."""
    font = QFont(app.font())
    if font.pointSizeF() < point_size:
        font.setPointSizeF(point_size)
        app.setFont(font)
