"""Drag-and-drop payloads: a mesh axis (or "replicated") dragged onto a tensor dimension."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt

AXIS_MIME = "application/x-shardscope-axis"
DEVICE_MIME = "application/x-shardscope-device"
# held during an axis drop: append the axis to the dim's axes instead of replacing them
APPEND_MODIFIERS = Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier


def axis_mime_data(axis: str | None) -> QMimeData:
    """MIME data carrying ``axis`` (UTF-8 name); ``None`` or "replicated" is an empty payload."""
    data = QMimeData()
    payload = b"" if axis is None or axis == "replicated" else axis.encode("utf-8")
    data.setData(AXIS_MIME, payload)
    data.setText("replicated" if not payload else axis)  # type: ignore[arg-type]
    return data


def axis_from_mime(mime: QMimeData | None) -> tuple[bool, str | None]:
    """``(is_ours, axis)``: whether ``mime`` carries an axis, and the axis (None = replicated)."""
    if mime is None or not mime.hasFormat(AXIS_MIME):
        return False, None
    payload = bytes(mime.data(AXIS_MIME).data()).decode("utf-8", errors="replace").strip()
    return True, (payload or None)


def appends(event) -> bool:
    """Whether an axis drop ``event`` appends its axis (Shift or Ctrl held) instead of
    replacing the dimension's axes."""
    return bool(event.modifiers() & APPEND_MODIFIERS)


def drop_hint(held: tuple[str, ...], axis: str | None, append: bool) -> str:
    """What dropping ``axis`` on a dimension that holds ``held`` axes does, said while it
    is dragged over it: ``replace data → model (Shift: append)``, ``append model →
    data+model``; empty where there is nothing to replace."""
    if axis is None or not held:
        return ""
    now = "+".join(held)
    if append:
        return f"append {axis} \u2192 {now}+{axis}"
    return f"replace {now} \u2192 {axis} (Shift: append)"


def device_mime_data(position: int) -> QMimeData:
    """MIME data carrying a mesh position (a device cell dragged inside the mesh editor)."""
    data = QMimeData()
    data.setData(DEVICE_MIME, str(int(position)).encode("ascii"))
    return data


def device_from_mime(mime: QMimeData | None) -> int | None:
    """The mesh position carried by ``mime``, or None if it carries none."""
    if mime is None or not mime.hasFormat(DEVICE_MIME):
        return None
    try:
        return int(bytes(mime.data(DEVICE_MIME).data()).decode("ascii"))
    except ValueError:
        return None
