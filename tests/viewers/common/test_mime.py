"""Drag payloads: a mesh axis (or replicated) and a device cell's mesh position."""

from PySide6.QtCore import QMimeData

from shardscope.viewers.common.mime import (
    AXIS_MIME,
    axis_from_mime,
    axis_mime_data,
    device_from_mime,
    device_mime_data,
)


def test_axis_mime_round_trip():
    ok, axis = axis_from_mime(axis_mime_data("model"))
    assert (ok, axis) == (True, "model")
    ok, axis = axis_from_mime(axis_mime_data(None))
    assert (ok, axis) == (True, None)
    data = axis_mime_data("replicated")
    assert bytes(data.data(AXIS_MIME).data()) == b""

    foreign = QMimeData()
    foreign.setText("model")
    assert axis_from_mime(foreign) == (False, None)


def test_device_mime_round_trip():
    assert device_from_mime(device_mime_data(5)) == 5
    assert device_from_mime(axis_mime_data("model")) is None
    assert device_from_mime(None) is None


def test_drop_hint_says_replace_or_append(qapp):
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QDropEvent

    from shardscope.viewers.common.mime import appends, drop_hint

    assert drop_hint(("data",), "model", False) == "replace data \u2192 model (Shift: append)"
    assert drop_hint(("data", "x"), "model", True) == "append model \u2192 data+x+model"
    assert drop_hint((), "model", False) == drop_hint(("data",), None, True) == ""
    mime = axis_mime_data("model")
    for held, expected in (
        (Qt.KeyboardModifier.NoModifier, False),
        (Qt.KeyboardModifier.ShiftModifier, True),
        (Qt.KeyboardModifier.ControlModifier, True),
        (Qt.KeyboardModifier.AltModifier, False),
    ):
        event = QDropEvent(
            QPointF(1, 1), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, held
        )
        assert appends(event) is expected
