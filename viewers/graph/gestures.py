"""What the mouse does on the graph besides dropping axes: a double click enters or
unfolds, a right click offers the node's or the frame's actions, the wheel zooms, and a
click selects.

``Gestures`` watches the view's viewport (an event filter) and the scene's selection, and
acts through the view's own navigation methods and signals: a selected badge or input
emits ``valueSelected``, a selected op ``opSelected`` (and its first result's
``valueSelected``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QMenu, QWidget

from shardscope.backend.program.layout import region_names
from shardscope.viewers.graph.items import BadgeItem, NodeItem, ScopeBoxItem

if TYPE_CHECKING:
    from PySide6.QtCore import QPoint, SignalInstance

    from shardscope.backend.program.layout import GraphLayout
    from shardscope.backend.session.document import Session

# The zoom factor per eighth of a degree the wheel turns.
WHEEL_ZOOM = 1.0015


class GraphView(Protocol):
    """What gestures use of the graph view."""

    session: Session
    layout_: GraphLayout | None
    valueSelected: SignalInstance
    opSelected: SignalInstance

    def viewport(self) -> QWidget: ...
    def scene(self) -> QGraphicsScene: ...
    def itemAt(self, pos: QPoint) -> QGraphicsItem | None: ...
    def set_expanded(self, path: str, expanded: bool, *, background: bool = False) -> None: ...
    def enter_op(self, op_id: int, region: int | None = None) -> bool: ...
    def expand_all(self) -> None: ...
    def collapse_all(self) -> None: ...
    def zoom(self, factor: float) -> None: ...


def node_menu(view: GraphView, item: NodeItem) -> QMenu:
    """Actions on a node: enter each region or the callee, unfold, fold its scopes."""
    menu = QMenu(view.viewport())
    node = item.node
    graph = view.session.graph
    if node.kind == "scope":
        menu.addAction(
            f"Expand {node.scope}",
            lambda: view.set_expanded(node.scope, True, background=True),
        )
    if node.op is not None:
        op = graph.ops[node.op]
        if op.callee and op.callee in graph.functions:
            menu.addAction(f"Enter @{op.callee}", lambda: view.enter_op(op.id))
        for i, name in enumerate(region_names(op)):
            menu.addAction(f"Enter {name}", lambda i=i: view.enter_op(op.id, i))
    if node.scope and node.kind == "op":
        parts = node.scope.split("/")
        for k in range(len(parts), 0, -1):
            path = "/".join(parts[:k])
            menu.addAction(
                f"Fold {path}", lambda p=path: view.set_expanded(p, False, background=True)
            )
    if menu.actions():
        menu.addSeparator()
    _add_fold_all(view, menu)
    return menu


def background_menu(view: GraphView) -> QMenu:
    """Actions on the whole frame (a right-click off the nodes)."""
    menu = QMenu(view.viewport())
    _add_fold_all(view, menu)
    return menu


def _add_fold_all(view: GraphView, menu: QMenu) -> None:
    menu.addAction("Expand all scopes", view.expand_all)
    menu.addAction("Collapse all scopes", view.collapse_all)


class Gestures(QObject):
    """See the module docstring."""

    def __init__(self, view: GraphView) -> None:
        super().__init__(view.viewport())
        self.view = view
        view.viewport().installEventFilter(self)
        view.scene().selectionChanged.connect(self._on_selection)

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseButtonDblClick:
            return self._double_click(event)
        if kind == QEvent.Type.ContextMenu:
            return self._context_menu(event)
        if kind == QEvent.Type.Wheel:
            self.view.zoom(WHEEL_ZOOM ** event.angleDelta().y())
            event.accept()
            return True
        return False

    def _double_click(self, event) -> bool:
        view = self.view
        item = view.itemAt(event.position().toPoint())
        if isinstance(item, NodeItem):
            node = item.node
            if node.kind == "scope":
                view.set_expanded(node.scope, True, background=True)
            elif node.op is not None:
                view.enter_op(node.op)
            event.accept()
            return True
        if isinstance(item, ScopeBoxItem):
            view.set_expanded(item.box.path, False, background=True)
            event.accept()
            return True
        return False

    def _context_menu(self, event) -> bool:
        view = self.view
        item = view.itemAt(event.pos())
        if isinstance(item, NodeItem):
            node_menu(view, item).exec(event.globalPos())
        elif item is None and view.layout_ is not None:
            background_menu(view).exec(event.globalPos())
        else:
            return False
        event.accept()
        return True

    def _on_selection(self) -> None:
        view = self.view
        try:
            items = view.scene().selectedItems()
        except RuntimeError:
            return
        for item in items:
            if isinstance(item, BadgeItem) and item.value_id is not None:
                view.valueSelected.emit(item.value_id)
                return
            if isinstance(item, NodeItem):
                node = item.node
                if node.kind == "input" and node.value is not None:
                    view.valueSelected.emit(node.value)
                elif node.op is not None:
                    view.opSelected.emit(node.op)
                    op = view.session.graph.ops[node.op]
                    if op.results:
                        view.valueSelected.emit(op.results[0])
                return
