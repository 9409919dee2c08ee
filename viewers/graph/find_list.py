"""Find as you type: the find box's matches listed under it, live, and revealed on choice.

``FindList`` is the list; ``Finder`` ties it to a find box, a status label and a
``GraphView``: each edit of the query (after a short pause) runs the backend's
``find`` (see ``shardscope.backend.session.find`` for the query language), the status
label counts the matches by kind, and choosing one (a click, or Enter in the box, which
then steps through them) closes the list and reveals it: enters the function that holds
it and unfolds the scopes that hide it; Down in the box lists the matches again. ``reveal`` does that for one match.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QListWidgetItem, QWidget

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.layout import Frame, relative_scopes
from shardscope.backend.program.locations import split_name_path
from shardscope.backend.session.find import FindResult, Match, find

if TYPE_CHECKING:
    from shardscope.viewers.graph.view import GraphView

# Rows listed at most (the counts cover every match).
MAX_ROWS = 300
TYPING_PAUSE_MS = 120
MARKS = {"scope": "▸", "op": "◆", "tensor": "▭", "callee": "@"}


def match_text(match: Match) -> str:
    """One row: kind mark, name, and what tells it apart (scope, shape, op count)."""
    detail = match.detail
    if match.kind == "scope":
        detail = f"{match.count} op{'s' if match.count != 1 else ''} · {match.detail}"
    mark = MARKS[match.kind] if match.kind != "callee" else ""
    return f"{mark} {match.label}    {detail}".strip()


class FindList(QListWidget):
    """The matches of one query; ``chosen`` carries the picked ``Match``."""

    chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.matches: list[Match] = []
        self.setObjectName("find_list")
        self.setUniformItemSizes(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.itemActivated.connect(self._on_item)
        self.itemClicked.connect(self._on_item)

    def show_result(self, result: FindResult) -> None:
        self.clear()
        self.matches = result.matches[:MAX_ROWS]
        for i, match in enumerate(self.matches):
            item = QListWidgetItem(match_text(match))
            item.setData(Qt.ItemDataRole.UserRole, i)
            item.setToolTip(match.detail)
            self.addItem(item)
        more = len(result.matches) - len(self.matches)
        if more > 0:
            item = QListWidgetItem(f"… {more} more: type more to narrow")
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.addItem(item)

    def rows(self) -> list[str]:
        """What the list shows, row by row."""
        return [self.item(i).text() for i in range(self.count())]

    def _on_item(self, item: QListWidgetItem) -> None:
        i = item.data(Qt.ItemDataRole.UserRole)
        if i is not None:
            self.chosen.emit(self.matches[i])

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentItem():
            self._on_item(self.currentItem())
            return
        super().keyPressEvent(event)


class Finder(QObject):
    """Runs the find box's query as the user types and reveals what they choose."""

    def __init__(self, box: QLineEdit, status: QLabel, view: GraphView, parent: QWidget) -> None:
        super().__init__(parent)
        self.box = box
        self.status = status
        self.view = view
        self.panel = parent
        self.list = FindList(parent)
        self.list.hide()
        self.list.chosen.connect(self.choose)
        self.result: FindResult | None = None
        self._row = -1
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.search)
        box.textEdited.connect(lambda _text: self._timer.start())
        box.textChanged.connect(self._on_text)
        box.returnPressed.connect(self.next)
        box.installEventFilter(self)
        self.list.installEventFilter(self)

    @property
    def pending(self) -> bool:
        """Typed but not searched yet (the pause after a key has not passed)."""
        return self._timer.isActive()

    def _on_text(self, text: str) -> None:
        if not text.strip():
            self._timer.stop()
            self.search()
        elif not self._timer.isActive():
            self._timer.start()

    def search(self) -> FindResult | None:
        """Run the box's query now; list and count what it finds."""
        self._timer.stop()
        self._row = -1
        text = self.box.text()
        session = self.view.session
        if not text.strip() or session.graph is None:
            self.result = None
            self.status.setText("")
            self.list.hide()
            return None
        try:
            result = find(
                session.graph, text, spec_of=session.display_spec, result=session.propagation
            )
        except ShardscopeError as exc:
            self.result = None
            self.status.setText(str(exc))
            self.list.hide()
            return None
        self.result = result
        self.status.setText(result.summary())
        self.list.show_result(result)
        if result.matches:
            self._place_list()
        else:
            self.list.hide()
        return result

    def next(self) -> bool:
        """Enter in the box: reveal the selected match, else the one after the last."""
        if self._timer.isActive() or self.result is None:
            self.search()
        if self.result is None or not self.list.matches:
            return False
        self._row = (self._row + 1) % len(self.list.matches)
        self.list.setCurrentRow(self._row)
        return self.choose(self.list.matches[self._row])

    def choose(self, match: Match) -> bool:
        """Reveal ``match``; the status says so when it cannot be shown."""
        if match in self.list.matches:
            self._row = self.list.matches.index(match)
        came_from_list = self.list.hasFocus()
        self.list.hide()  # picked: the graph shows it, uncovered
        if came_from_list:
            self.box.setFocus()  # Enter steps on, Down lists the matches again
        shown = reveal(self.view, match)
        if not shown:
            self.status.setText(f"{match.label} is not drawn in any frame")
        return shown

    def _place_list(self) -> None:
        box = self.box
        width = max(box.width(), 460)
        rows = min(self.list.count(), 14)
        height = rows * max(18, self.list.sizeHintForRow(0)) + 2 * self.list.frameWidth() + 4
        corner = box.mapTo(self.panel, QPoint(box.width(), box.height() + 2))
        x = max(0, min(corner.x() - width, self.panel.width() - width))
        self.list.setGeometry(x, corner.y(), width, height)
        self.list.show()
        self.list.raise_()

    def _hide_unless_focused(self) -> None:
        if not (self.box.hasFocus() or self.list.hasFocus()):
            self.list.hide()

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.FocusOut:
            # the user went elsewhere (the graph, a dock): the list stops covering it
            QTimer.singleShot(0, self._hide_unless_focused)
            return False
        if event.type() != QEvent.Type.KeyPress:
            return False
        key = event.key()
        if key == Qt.Key.Key_Escape and self.list.isVisible():
            self.list.hide()
            if obj is self.list:
                self.box.setFocus()
            return True
        if obj is self.box and key == Qt.Key.Key_Down and self.result and self.list.matches:
            self._place_list()
            self.list.setFocus()
            self.list.setCurrentRow(max(0, self._row))
            return True
        return False


def reveal(view: GraphView, match: Match) -> bool:
    """Show ``match`` in ``view``: enter the function that holds it if need be, unfold
    what hides it, select and centre it."""
    graph = view.session.graph
    if graph is None:
        return False
    if match.kind == "tensor" and match.value is not None:
        if view.select_value(match.value, center=True):
            return True
        _enter_function(view, graph.values[match.value].function)
        return view.select_value(match.value, center=True)
    if match.op is None:
        return False
    op = graph.ops[match.op]
    if match.kind == "scope" and match.scope:
        _enter_function(view, op.function, only_if_outside=match.op)
        return reveal_scope(view, match.scope, match.op)
    if view.select_op(match.op, center=True):
        return True
    _enter_function(view, op.function)
    return view.select_op(match.op, center=True)


def _enter_function(view: GraphView, function: str, only_if_outside: int | None = None) -> None:
    """Make ``function`` the shown frame: back to it if it is on the breadcrumb, else
    enter it. With ``only_if_outside``, stay where that op is already drawn."""
    if only_if_outside is not None and frame_holds(view, only_if_outside):
        return
    target = Frame(function)
    if view.frame == target:
        return
    frames = view.frames
    if target in frames:
        view.back(len(frames) - 1 - frames.index(target))
    else:
        view.enter(target)


def frame_holds(view: GraphView, op_id: int) -> bool:
    """Whether op ``op_id`` is one of the frame ``view`` shows' own ops."""
    if view.index is None or view.frame is None:
        return False
    return op_id in set(view.index.frame_ops(view.frame))


def reveal_scope(view: GraphView, scope: str, op_id: int) -> bool:
    """Show ``scope`` (as the program names it), a scope of op ``op_id`` of the frame
    ``view`` shows: unfold the scopes around it, select its node (its first node when it
    is unfolded) and centre it. Falls back on the op when the scope is not one of the
    frame's."""
    graph = view.session.graph
    ops = view.index.frame_ops(view.frame) if view.index is not None else []
    if op_id not in set(ops):
        return view.select_op(op_id, center=True)
    rel = relative_scopes(graph, ops)[op_id]
    cut = len(split_name_path(graph.ops[op_id].scope)) - len(rel)
    parts = split_name_path(scope)[cut:]
    if not parts or tuple(parts) != rel[: len(parts)]:
        return view.select_op(op_id, center=True)
    path = "/".join(parts)
    if len(parts) > 1:
        view.set_expanded("/".join(parts[:-1]), True)
    layout = view.layout_
    n = layout.node_by_key(f"scope:{path}")
    if n is None:  # unfolded: its first node
        n = next(
            (
                i
                for i, node in enumerate(layout.nodes)
                if node.scope == path or (node.scope or "").startswith(path + "/")
            ),
            None,
        )
    if n is None:
        return False
    item = view.nodes[n]
    view.scene().clearSelection()
    item.setSelected(True)
    view.centerOn(item)
    return True
