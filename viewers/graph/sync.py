"""Two graph views of one program kept showing the same place.

``ViewSync`` links two ``GraphView`` s: they share one ``Navigation`` (the second view
takes the first's), so entering, leaving, folding or unfolding in one draws the same in
the other (both lay out the same frame the same way, and scene positions match).
Scrolling or zooming one moves the other to the same scene point and zoom; selecting a
node or badge in one selects the same one in the other. Each move is passed on once:
what the follower does while it follows is not passed back. The view the user moved last
leads: when either is resized (a splitter dragged, the window resized), the other is put
back where the leader looks once the sizes settle. Closed, the second view gets a
navigation of its own again.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer

from shardscope.viewers.common.connections import Connections
from shardscope.viewers.graph.items import BadgeItem, NodeItem
from shardscope.viewers.graph.view import GraphView


class ViewSync(QObject):
    """See the module docstring; ``close()`` unlinks the views."""

    def __init__(self, a: GraphView, b: GraphView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.a, self.b = a, b
        self._passing = False  # a move, selection or state is being passed on
        self.leader = a
        self._links = Connections()
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(0)
        self._settle.timeout.connect(
            lambda: self.copy_viewport(self.leader, self.other(self.leader))
        )
        self._shares = b.navigation is not a.navigation  # b takes a's for the link
        if self._shares:
            b.use_navigation(a.navigation)
        self._watched = (a, b, a.viewport(), b.viewport())
        for widget in self._watched:  # the viewport shrinks when scroll bars appear
            widget.installEventFilter(self)
        for src, dst in ((a, b), (b, a)):
            link = self._links.connect
            link(src.viewMoved, lambda s=src, d=dst: self._moved(s, d))
            link(src.scene().selectionChanged, lambda s=src, d=dst: self._selection(s, d))
            link(src.viewStateChanged, lambda _st, s=src, d=dst: self._shown(s, d))
            link(src.foldEnded, lambda outcome, s=src, d=dst: self._followed(s, d, outcome))

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize and watched in self._watched:
            self._settle.start()
        return False

    def close(self) -> None:
        self._settle.stop()
        for widget in self._watched:
            try:
                widget.removeEventFilter(self)
            except RuntimeError:
                pass
        self._links.close()
        if self._shares:
            self._shares = False
            self.b.use_navigation(self.a.navigation.copy())

    def _quiet(self, src: GraphView) -> bool:
        """Whether what ``src`` does now is not passed on: a move, selection or state
        being passed, or ``src`` drawing what the other did."""
        return self._passing or src.following

    def other(self, view: GraphView) -> GraphView:
        return self.b if view is self.a else self.a

    # -- where they look -------------------------------------------------------------------
    def _moved(self, src: GraphView, dst: GraphView) -> None:
        if self._quiet(src) or src.folding:  # a view showing a new drawing is not led
            return
        self.leader = src
        self.copy_viewport(src, dst)

    def copy_viewport(self, src: GraphView, dst: GraphView) -> None:
        """Give ``dst`` the zoom of ``src`` and centre it on the same scene point (while
        both show the same drawing)."""
        if self._passing or src.folding or dst.folding or src.state_key() != dst.state_key():
            return
        self._passing = True
        try:
            dst.setTransform(src.transform())
            dst.centerOn(src.mapToScene(src.viewport().rect().center()))
        finally:
            self._passing = False

    # -- what they show ------------------------------------------------------------------
    def follow(self, src: GraphView, dst: GraphView) -> None:
        """Show in ``dst`` the place the views share (``src``'s), looking where ``src``
        looks once it is drawn."""
        dst.follow_navigation()
        if not dst.folding:  # drawn at once
            self.copy_viewport(src, dst)

    def _shown(self, src: GraphView, dst: GraphView) -> None:
        # ``src`` shows a new place; ``dst`` followed it through the navigation they
        # share: once it shows the same, it looks where ``src`` looks
        if self._quiet(src) or dst.state_key() != src.state_key():
            return
        dst.cancel_fold("dropped")
        self.copy_viewport(src, dst)

    def _followed(self, src: GraphView, dst: GraphView, outcome: str) -> None:
        # ``src`` finished a drawing; if it now matches ``dst``, look where dst looks
        if outcome == "done" and src.state_key() == dst.state_key():
            self.copy_viewport(dst, src)

    # -- selection ---------------------------------------------------------------------------
    def _selection(self, src: GraphView, dst: GraphView) -> None:
        if self._quiet(src):
            return
        try:
            items = src.scene().selectedItems()
        except RuntimeError:
            return
        self._passing = True
        try:
            self.select_like(items, src, dst)
        finally:
            self._passing = False

    @staticmethod
    def select_like(items, src: GraphView, dst: GraphView) -> None:
        """Select in ``dst`` the node or badge ``items`` are in ``src``."""
        scene = dst.scene()
        if not items:
            scene.clearSelection()
            return
        item = items[0]
        same = src.state_key() == dst.state_key() and len(src.nodes) == len(dst.nodes)
        if isinstance(item, NodeItem):
            if same:
                scene.clearSelection()
                dst.nodes[item.index].setSelected(True)
            elif item.node.op is not None:
                dst.select_op(item.node.op)
        elif isinstance(item, BadgeItem):
            badges = src.badges
            at = next((i for i, b in enumerate(badges) if b is item), None)
            if same and at is not None and at < len(dst.badges):
                scene.clearSelection()
                dst.badges[at].setSelected(True)
            elif item.value_id is not None:
                dst.select_value(item.value_id)
