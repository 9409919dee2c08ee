"""Mesh axes dragged onto the graph's spec badges: which dimension is under the mouse,
its hover mark and tooltip, and the drop the view then announces.

A drop on a dimension of a badge emits the view's ``specDropped`` (the axis replaces the
dimension's axes; None: replicated) or, with Shift or Ctrl held, ``axisAppended``; a drop
anywhere else emits ``dropRejected``. The view never edits the session itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QToolTip, QWidget

from shardscope.viewers.common.mime import appends, axis_from_mime, drop_hint
from shardscope.viewers.graph.items import BadgeItem

if TYPE_CHECKING:
    from PySide6.QtCore import QPoint, QPointF, SignalInstance

    from shardscope.backend.session.document import Session

# Viewport pixels around the mouse in which a drop still finds a badge.
NEAR = 6


class DropView(Protocol):
    """What drops use of the graph view (a ``QGraphicsView``)."""

    session: Session
    specDropped: SignalInstance
    axisAppended: SignalInstance
    dropRejected: SignalInstance

    def scene(self) -> QGraphicsScene: ...
    def mapToScene(self, pos: QPoint) -> QPointF: ...
    def mapToGlobal(self, pos: QPoint) -> QPoint: ...
    def items(self, x: int, y: int, w: int, h: int) -> list[QGraphicsItem]: ...
    def viewport(self) -> QWidget: ...


class BadgeDrops:
    """The drag-and-drop of mesh axes on ``view``'s badges (the view's drag events call
    ``enter``, ``move``, ``leave`` and ``drop``)."""

    def __init__(self, view: DropView) -> None:
        self.view = view
        self.hovered: BadgeItem | None = None  # the badge showing a hover mark

    def forget(self) -> None:
        """The drawing was replaced: the hovered badge is gone with it."""
        self.hovered = None

    def badge_dim_at(self, pos: QPoint) -> tuple[BadgeItem | None, int | None]:
        """The badge and dimension at viewport point ``pos`` (forgiving: the nearest
        badge within a few pixels), or (None, None)."""
        view = self.view
        scene_pos = view.mapToScene(pos)
        for item in view.scene().items(scene_pos):
            if isinstance(item, BadgeItem):
                return item, item.dim_at(scene_pos)
        for item in view.items(pos.x() - NEAR, pos.y() - NEAR, 2 * NEAR, 2 * NEAR):
            if isinstance(item, BadgeItem):
                return item, item.dim_at(scene_pos)
        return None, None

    def _hover(self, badge: BadgeItem | None, dim: int | None) -> None:
        if self.hovered is not None and self.hovered is not badge:
            self.hovered.hover_dim = None
            self.hovered.update()
        self.hovered = badge
        if badge is not None and badge.hover_dim != dim:
            badge.hover_dim = dim
            badge.update()

    def enter(self, event) -> None:
        """A drag came in: taken if it carries a mesh axis."""
        ours, _ = axis_from_mime(event.mimeData())
        if ours:
            event.acceptProposedAction()
        else:
            event.ignore()

    def move(self, event) -> None:
        """Mark the dimension under the mouse and say whether a drop replaces or appends
        to the axes it shows."""
        ours, axis = axis_from_mime(event.mimeData())
        if not ours:
            event.ignore()
            return
        view = self.view
        point = event.position().toPoint()
        badge, dim = self.badge_dim_at(point)
        self._hover(badge, dim)
        if badge is None or dim is None:
            event.ignore()
            return
        event.acceptProposedAction()
        spec = view.session.display_spec(badge.value_id)
        held = spec.dims[dim].axes if spec is not None and dim < len(spec.dims) else ()
        hint = drop_hint(held, axis, appends(event))
        if hint:
            QToolTip.showText(view.mapToGlobal(point), hint, view.viewport())
        else:
            QToolTip.hideText()

    def leave(self) -> None:
        """The drag left the view: no mark, no tooltip."""
        self._hover(None, None)
        QToolTip.hideText()

    def drop(self, event) -> None:
        """Announce the drop on the dimension under the mouse (or refuse it)."""
        ours, axis = axis_from_mime(event.mimeData())
        self.leave()
        if not ours:
            event.ignore()
            return
        view = self.view
        badge, dim = self.badge_dim_at(event.position().toPoint())
        if badge is None or dim is None:
            view.dropRejected.emit("drop a mesh axis on a dimension of a tensor's badge")
            event.ignore()
            return
        event.acceptProposedAction()
        if axis is not None and appends(event):
            view.axisAppended.emit(badge.value_id, dim, axis)
        else:
            view.specDropped.emit(badge.value_id, dim, axis)
