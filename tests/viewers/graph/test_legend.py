"""The badge legend: opened from the button in the graph's corner, it shows each mark
with the graph's own items and says what it means."""

from PySide6.QtCore import Qt

from shardscope.viewers.graph.items import BadgeItem, NodeItem
from shardscope.viewers.graph.legend import LegendButton
from shardscope.viewers.graph.markers import (
    CollectiveMarkItem,
    ConflictMarkItem,
    GspmdMarkItem,
    SpecNotesItem,
    WarningMarkItem,
)


def test_the_corner_button_opens_the_legend(panel_for, qtbot, render_dir, count_colors):
    session, panel = panel_for("example:conflict")
    view = panel.view
    button = LegendButton(view)
    port = view.viewport()
    assert button.isVisible()
    assert button.geometry().bottom() < port.height() and button.x() < 20
    panel.resize(1200, 800)
    qtbot.waitUntil(lambda: button.geometry().bottom() >= port.height() - 12)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = button.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.addWidget(dialog)
    scene = dialog.legend
    entries = "\n".join(scene.entries)
    for words in (
        "you set",
        "program's own code",
        "propagation",
        "selected",
        "open",
        "priority",
        "conflict",
        "folded scope",
        "collectives",
        "GSPMD",
        "XLA logged a warning",
        "the other pane differs",
    ):
        assert words in entries, words
    items = scene.items()
    kinds = {type(i) for i in items}
    assert {
        BadgeItem,
        NodeItem,
        ConflictMarkItem,
        CollectiveMarkItem,
        GspmdMarkItem,
        SpecNotesItem,
        WarningMarkItem,
    } <= kinds
    origins = {i.origin for i in items if isinstance(i, BadgeItem)}
    assert {"user", "code", "propagated", "none"} <= origins
    assert any(i.isSelected() for i in items if isinstance(i, BadgeItem))
    image = dialog.grab()
    image.save(str(render_dir / "legend.png"))
    assert count_colors(image) > 20
    # Opening it again replaces the window rather than stacking another.
    first = dialog
    button.open_legend()
    assert button.dialog is not first
    qtbot.addWidget(button.dialog)
