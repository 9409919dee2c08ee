"""One tensor dimension in the inspector: its size and axis chips, a drop target for mesh
axes, with a context menu for open/closed and priority.

A dropped axis replaces the dim's axes (``dropped``); held Shift or Ctrl during the drop
appends it after them instead (``appended``), making a tuple such as ``data+model``. While
an axis is dragged over a dim that holds axes, a tooltip by the pointer says which the
drop will do."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QMenu, QSizePolicy, QToolTip, QWidget

from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import DimSpec
from shardscope.viewers.common.colors import axis_color, theme_for
from shardscope.viewers.common.mime import appends, axis_from_mime, drop_hint
from shardscope.viewers.mesh.palette import paint_chip

PRIORITIES = (0, 1, 2, 3)


class DimSlot(QWidget):
    """One tensor dim: its size and axis chips; accepts axis drops, offers a context menu."""

    dropped = Signal(int, object)  # dim, axis (None: replicated): replaces the dim's axes
    appended = Signal(int, str)  # dim, axis: added after the dim's axes (Shift or Ctrl held)
    menuAction = Signal(int, str, object)
    clicked = Signal(int)  # dim: the user picked this dimension (for its provenance)

    def __init__(self, dim: int, size: int | None, parent: QWidget | None = None):
        super().__init__(parent)
        self.dim = dim
        self.size = size
        self.spec = DimSpec()
        self.mesh: Mesh | None = None
        self._drag_over = False
        self._drop_hint = ""  # what the dragged axis would do, while one is over the dim
        self.setAcceptDrops(True)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.DefaultContextMenu)
        self.setToolTip(
            f"dim {dim}: drop a mesh axis here to shard it on that axis (it replaces the "
            "dim's axes; hold Shift or Ctrl while dropping to append it); right-click for "
            "open/closed and priority"
        )

    def set_dim_spec(self, spec: DimSpec, mesh: Mesh | None) -> None:
        if (spec, mesh) == (self.spec, self.mesh):
            return
        self.spec = spec
        self.mesh = mesh
        self.updateGeometry()
        self.update()

    def set_size(self, size: int | None) -> None:
        """The dim's length (another tensor of the same rank)."""
        if size == self.size:
            return
        self.size = size
        self.updateGeometry()
        self.update()

    def _chips(self) -> list[tuple[str, str | None]]:
        if not self.spec.axes:
            return [("?" if self.spec.is_open else "replicated", None)]
        chips = [(a, a) for a in self.spec.axes]
        if self.spec.is_open:
            chips.append(("?", None))
        return chips

    def _header(self) -> str:
        size = "" if self.size is None else f" \u00b7 {self.size}"
        prio = "" if self.spec.priority is None else f" \u00b7 p{self.spec.priority}"
        return f"dim {self.dim}{size}{prio}"

    def sizeHint(self) -> QSize:
        fm = QFontMetrics(self.font())
        chips_w = sum(fm.horizontalAdvance(t) + 18 for t, _ in self._chips()) + 6 * len(
            self._chips()
        )
        width = max(fm.horizontalAdvance(self._header()) + 16, chips_w + 12, 90)
        return QSize(width, fm.height() * 2 + 22)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event) -> None:
        theme = theme_for(self)
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fm = QFontMetrics(self.font())
        frame = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        pen = QPen(theme.highlight if self._drag_over else theme.grid, 2 if self._drag_over else 1)
        if self.spec.is_open:
            pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(frame, 6, 6)
        p.setPen(theme.muted)
        p.drawText(
            QRectF(8, 3, frame.width() - 12, fm.height() + 2),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            self._header(),
        )
        x = 6.0
        y = fm.height() + 8
        for text, axis in self._chips():
            w = fm.horizontalAdvance(text) + 18
            color = axis_color(self.mesh if self.mesh is not None else (), axis)
            paint_chip(
                p,
                QRectF(x, y, w, fm.height() + 6),
                text,
                color,
                dashed=axis is None,
                outline=theme.foreground,
            )
            x += w + 6
        p.end()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self.dim)
            event.accept()
            return
        super().mousePressEvent(event)

    def drop_hint(self, axis: str | None, append: bool) -> str:
        """What dropping ``axis`` would do, as the tooltip says it during the drag."""
        return drop_hint(self.spec.axes, axis, append)

    def _track_drag(self, event) -> bool:
        ours, axis = axis_from_mime(event.mimeData())
        hint = self.drop_hint(axis, appends(event)) if ours else ""
        if (ours, hint) != (self._drag_over, self._drop_hint):
            self._drag_over, self._drop_hint = ours, hint
            self.update()
        # the slot keeps its size (the inspector repaints only what changes): the hint
        # shows beside the pointer
        if hint:
            QToolTip.showText(self.mapToGlobal(event.position().toPoint()), hint, self)
        else:
            QToolTip.hideText()
        if ours:
            event.acceptProposedAction()
        else:
            event.ignore()
        return ours

    def dragEnterEvent(self, event) -> None:
        self._track_drag(event)

    def dragMoveEvent(self, event) -> None:
        self._track_drag(event)

    def dragLeaveEvent(self, event) -> None:
        self._drag_over, self._drop_hint = False, ""
        QToolTip.hideText()
        self.update()

    def dropEvent(self, event) -> None:
        self._drag_over, self._drop_hint = False, ""
        QToolTip.hideText()
        self.update()
        ours, axis = axis_from_mime(event.mimeData())
        if not ours:
            event.ignore()
            return
        event.acceptProposedAction()
        if axis is not None and appends(event):
            self.appended.emit(self.dim, axis)
        else:
            self.dropped.emit(self.dim, axis)

    def build_menu(self) -> QMenu:
        """The context menu: open/closed, priority p0..p3 or none, clear."""
        menu = QMenu(self)
        group = QActionGroup(menu)
        for label, value in (("Closed", "closed"), ("Open (?)", "open")):
            act = menu.addAction(label)
            act.setCheckable(True)
            act.setChecked(self.spec.is_open == (value == "open"))
            act.setData(f"{value}:")
            group.addAction(act)
        menu.addSeparator()
        prio_menu = menu.addMenu("Priority")
        prio_group = QActionGroup(prio_menu)
        for value in (None, *PRIORITIES):
            act = prio_menu.addAction("none" if value is None else f"p{value}")
            act.setCheckable(True)
            act.setChecked(self.spec.priority == value)
            act.setData("priority:" + ("" if value is None else str(value)))
            prio_group.addAction(act)
        menu.addSeparator()
        clear = menu.addAction("Clear (replicate)")
        clear.setData("clear:")
        # QMenu.triggered also reports actions of submenus, so one handler serves all.
        menu.triggered.connect(self._on_menu_triggered)
        return menu

    def _on_menu_triggered(self, action: QAction) -> None:
        # Never a bool as the object argument: PySide6 6.12 drops a reference to True/False
        # passed through Signal(object), which aborts the interpreter later.
        kind, _, arg = str(action.data() or "").partition(":")
        if kind == "priority":
            self.menuAction.emit(self.dim, "priority", int(arg) if arg else None)
        elif kind in ("open", "closed", "clear"):
            self.menuAction.emit(self.dim, kind, None)

    def contextMenuEvent(self, event) -> None:
        self.build_menu().exec(event.globalPos())
