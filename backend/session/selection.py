"""What the user has chosen: a tensor, an op, a timeline step, the devices outlined.

``Selection`` is the window's one record of the current choice; the views that show a
choice subscribe to its ``events`` rather than being told by each part of the window that
makes one. Outlined device groups (a collective's groups, chosen in the Collectives or Run
dock) and hovered devices (the devices holding a tile under the mouse) are shown by every
device view at once, so a second device view needs no more wiring than the first. Each
event fires only when its field really changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from psygnal import Signal, SignalGroup

DeviceGroups = tuple[tuple[int, ...], ...]


class SelectionEvents(SignalGroup):
    """Change notifications of a ``Selection``; each carries the field's new value."""

    value = Signal(object)  # int | None
    op = Signal(object)  # int | None
    step = Signal(object)  # int | None
    device_groups = Signal(tuple)  # DeviceGroups
    hovered_devices = Signal(frozenset)  # frozenset[int]


class Selection:
    """The selected value, op and step, and the devices outlined; see the module
    docstring."""

    def __init__(self) -> None:
        self.events = SelectionEvents()
        self._value: int | None = None
        self._op: int | None = None
        self._step: int | None = None
        self._device_groups: DeviceGroups = ()
        self._hovered_devices: frozenset[int] = frozenset()

    @property
    def value(self) -> int | None:
        """The id of the selected tensor, or None."""
        return self._value

    @property
    def op(self) -> int | None:
        """The id of the selected op, or None."""
        return self._op

    @property
    def step(self) -> int | None:
        """The timeline step index shown, or None (the final state)."""
        return self._step

    @property
    def device_groups(self) -> DeviceGroups:
        """The device groups outlined, each a tuple of device ids (empty: none)."""
        return self._device_groups

    @property
    def hovered_devices(self) -> frozenset[int]:
        """The devices holding what the mouse is over (empty: none)."""
        return self._hovered_devices

    def select_value(self, value_id: int | None) -> bool:
        """Select tensor ``value_id`` (None: no tensor); True if it changed."""
        return self._change("_value", None if value_id is None else int(value_id))

    def select_op(self, op_id: int | None) -> bool:
        """Select op ``op_id`` (None: no op); True if it changed."""
        return self._change("_op", None if op_id is None else int(op_id))

    def select_step(self, index: int | None) -> bool:
        """Show timeline step ``index`` (None or a negative index: the final state);
        True if it changed."""
        return self._change("_step", None if index is None or index < 0 else int(index))

    def outline_groups(self, groups: Iterable[Iterable[int]] | None) -> bool:
        """Outline ``groups`` of device ids (None or empty: none); True if it changed."""
        return self._change("_device_groups", tuple(tuple(int(d) for d in g) for g in groups or ()))

    def clear_groups(self) -> bool:
        """Outline no device group; True if some were outlined."""
        return self.outline_groups(())

    def hover_devices(self, devices: Iterable[int] | None) -> bool:
        """Mark ``devices`` as holding what the mouse is over (None or empty: none);
        True if it changed."""
        return self._change("_hovered_devices", frozenset(int(d) for d in devices or ()))

    def _change(self, field: str, new: object) -> bool:
        """Set ``field`` to ``new`` and announce it with the event of its name (less the
        underscore), unless it holds that already."""
        if getattr(self, field) == new:
            return False
        setattr(self, field, new)
        getattr(self.events, field.lstrip("_")).emit(new)
        return True
