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
