"""The export dialog's choices, as a user makes them: scope list, format, region."""

from PySide6.QtCore import QPoint, Qt

from shardscope.app.window.export_dialog import ExportDialog, selected_scope
from shardscope.backend.session.playback import Playback


def _dialog(window):
    result = window.session.propagation
    dialog = ExportDialog(window, Playback(result.timeline, result.graph))
    dialog.show()
    return dialog


def test_scopes_are_listed_in_natural_order_and_picking_one_replans(make_window, qtbot):
    window = make_window("example:transformer?layers=12")
    dialog = _dialog(window)
    try:
        tops = [s for s in dialog.scopes if "/" not in s]
        assert tops.index("jvp(layer_2)") < tops.index("jvp(layer_10)")
        assert selected_scope(window.graph) is None and dialog.whole_button.isChecked()
        whole = dialog.plan
        dialog.scope_box.setCurrentText("jvp(layer_2)")  # picking a scope chooses "Scope"
        assert dialog.scope_button.isChecked()
        layer = dialog.plan
        assert layer.shown_steps < whole.shown_steps and layer.problem is None
        assert layer.label_px >= 9 and dialog.width_box.value() == layer.width
        assert f"{layer.frames} frames" in dialog.info.text()
        # MP4 is offered only where PyAV is; its item says how to get it
        item = dialog.format_box.model().item(1)
        from shardscope.viewers.graph.video import have_av

        assert item.isEnabled() == have_av()
        if not have_av():
            assert "shardscope[video]" in item.toolTip()
        qtbot.mouseClick(
            dialog.whole_button,
            Qt.MouseButton.LeftButton,
            pos=QPoint(8, dialog.whole_button.height() // 2),
        )
        assert dialog.plan.source == whole.source
    finally:
        dialog.reject()
    assert dialog._view is None
