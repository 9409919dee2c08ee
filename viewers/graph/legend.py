"""The legend of the graph's badges and marks, drawn with the very items the graph uses.

``BadgeLegend`` is a small window listing each thing a badge or node can show: a spec
the user set, one from the program's code, one propagation decided, one not known yet,
the selection, open dimensions and priorities, conflicts, collectives, GSPMD
differences, XLA's warnings from a run, the timeline's step ring and step edges (in the
colour of the axis the step moves), the ring on what the last edit changed and, side by
side, the values on which the two panes differ. The rings and edges are drawn with the
widths and colours ``StepOverlay`` and ``GraphMarkers`` draw with. ``LegendButton`` sits
in the graph's corner and opens it; the entries name the shown program's partitioners
(``viewers.common.partitioners``: a torch_xla capture's own is GSPMD).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QDialog,
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.program.placement import NODE_H, NODE_W, Node
from shardscope.backend.propagation.conflicts import Conflict, Proposal
from shardscope.backend.propagation.predicted_collectives import Collective
from shardscope.viewers.common.colors import axis_color
from shardscope.viewers.common.partitioners import JAX, Partitioners, partitioners
from shardscope.viewers.graph.flow_items import OverlayItem
from shardscope.viewers.graph.items import BadgeItem, GraphStyle, NodeItem
from shardscope.viewers.graph.markers import (
    CollectiveMarkItem,
    ConflictMarkItem,
    GspmdMarkItem,
    SelectedMarkItem,
    SpecNotesItem,
    WarningMarkItem,
)
from shardscope.viewers.graph.step_overlay import (
    CHANGED_ALPHA,
    CHANGED_PAD,
    CHANGED_WIDTH,
    EDGE_WIDTH,
    RING_WIDTH,
)

if TYPE_CHECKING:
    from shardscope.viewers.graph.view import GraphView

AXES = ("data", "model")
ROW = 58.0
TEXT_X = 250.0
# the axis the legend's timeline step moves
STEP_AXIS = "model"


def _sample_conflict() -> Conflict:
    return Conflict(
        0,
        "stablehlo.add",
        "i",
        16,
        {"operand-0": [0], "operand-1": [0], "result-0": [0]},
        [Proposal("operand-0", None, ("data",), "x"), Proposal("operand-1", None, ("model",), "y")],
        (),
        "longest common prefix",
    )


def _sample_collective() -> Collective:
    return Collective(0, "stablehlo.add", "all_gather", ("data",), None, ((), ()), 1536, 4)


KINDS_TEXT = (
    "AG all-gather, AS all-slice, AR all-reduce, RS reduce-scatter,\n"
    "A2A all-to-all, CP collective-permute; AG×2: two of them"
)


def collectives_entry(names: Partitioners) -> str:
    """What a collective tag means, for a program whose partitioners ``names`` names."""
    if not names.foreign:
        return (
            "collectives of the op, the compiled program's (Shardy's prediction until XLA has\n"
            f"compiled it): {KINDS_TEXT}"
        )
    return (
        f"collectives of the op, the compiled program's ({names.framework}'s own compile with "
        f"{names.own}\nas the script ran it, or shardscope's of an edit; Shardy's prediction "
        f"until compiled):\n{KINDS_TEXT}"
    )


def gspmd_entry(names: Partitioners) -> str:
    """What a GSPMD mark means, for a program whose partitioners ``names`` names."""
    if not names.foreign:
        return "GSPMD shards it differently: Shardy's spec inside, GSPMD's beside"
    return (
        f"{names.gspmd} shards it differently: the spec of\n{names.shardy} inside, GSPMD's beside"
    )


class LegendScene(QGraphicsScene):
    """One row per entry: a real badge or node at the left, what it means at the right."""

    def __init__(
        self, style: GraphStyle, parent: QObject | None = None, names: Partitioners = JAX
    ) -> None:
        super().__init__(parent)
        self.style = style
        self.names = names
        self.entries: list[str] = []
        # the sample item of some entries, by name (the rings and edges drawn here)
        self.samples: dict[str, QGraphicsItem] = {}
        self._y = 30.0
        self._badge_entries()
        self._mark_entries()
        self._step_entries()
        self.setSceneRect(self.itemsBoundingRect().adjusted(-20, -20, 20, 20))

    def _badge_entries(self) -> None:
        """Badges by where their spec came from, the selected and changed ones, and the
        notes over a dim."""
        style = self.style
        self._badge("user", (("data",), ()), "a spec you set (solid dark border)")
        self._badge("code", (("data",), ()), "a spec from the program's own code (dashed border)")
        self._badge("propagated", (("data",), ()), "decided by propagation (thin border)")
        self._badge("none", None, "? : not known until propagation runs")
        selected = self._badge(
            "user", (("model",), ()), "the selected tensor, the one the Tensor dock shows"
        )
        selected.setFlag(BadgeItem.GraphicsItemFlag.ItemIsSelectable)
        selected.setSelected(True)
        self.samples["selected"] = SelectedMarkItem(selected, style)
        changed = self._badge(
            "propagated", (("data",), ()), "changed by the last edit (filled ring)"
        )
        self.samples["changed"] = self._changed_ring(changed)
        chip = self._badge("user", (("data",), ()), "", text_y=None)
        SpecNotesItem(chip, {0: "?", 1: "p0"}, style)
        self._text("? over a dim: left open for propagation;  pN: priority N (0 first)")

    def _mark_entries(self) -> None:
        """The marks on ops and badges: conflicts, collectives, GSPMD's differences and
        XLA's warnings."""
        style = self.style
        self._node(
            "add",
            lambda node: ConflictMarkItem([_sample_conflict()], style, folded=False),
            "conflict: its operands propose incompatible axes (see the Conflicts dock)",
        )
        self._node(
            "layer",
            lambda node: ConflictMarkItem([_sample_conflict()] * 2, style, folded=True),
            "a folded scope holding ops with conflicts (their number)",
            kind="scope",
        )
        self._node(
            "dot_general",
            lambda node: CollectiveMarkItem([_sample_collective()], style, None),
            collectives_entry(self.names),
        )
        gspmd = self._badge("propagated", ((), ()), "", text_y=None)
        GspmdMarkItem(gspmd, "[_, _]", "[data, _]", style)
        self._text(gspmd_entry(self.names))
        self._node(
            "tanh",
            lambda node: WarningMarkItem(["an XLA warning"], style),
            "XLA logged a warning about the op in the last run (hover it; Run dock lists them)",
        )

    def _step_entries(self) -> None:
        """A timeline step's ring and edges, and the other pane's difference side by side."""
        style = self.style
        axis = axis_color(AXES, STEP_AXIS)
        self._node(
            "dot_general",
            lambda node: None,
            f"timeline step: the op it works on, ringed in the colour of the axis it\n"
            f"moves ({STEP_AXIS} here; one ring per axis)",
        )
        self.samples["step-ring"] = self._step_ring(axis)
        self.samples["step-flow"] = self._step_flow(axis)
        self._text(f"timeline step: the edges the axis flows along, in its colour ({STEP_AXIS})")
        other = self._badge("propagated", (("data",), ()), "", text_y=None)
        GspmdMarkItem(
            other, "[data, _]", "[_, _]", style, label="before", color=style.theme.highlight
        )
        self._text("side by side: the other pane differs (its spec beside; purple against GSPMD)")

    def _text(self, text: str) -> None:
        item = QGraphicsSimpleTextItem(text)
        item.setFont(self.style.font)
        item.setBrush(self.style.theme.foreground)
        item.setPos(TEXT_X, self._y - item.boundingRect().height() / 2)
        self.addItem(item)
        self.entries.append(text)
        self._y += ROW

    def _badge(self, origin: str, dims, text: str, *, text_y: float | None = 0.0) -> BadgeItem:
        badge = BadgeItem((0,), self.style)
        badge.set_spec(dims, origin, AXES, "")
        badge.setPos(90, self._y)
        self.addItem(badge)
        if text_y is not None:
            self._text(text)
        return badge

    def _node(self, label: str, mark, text: str, *, kind: str = "op") -> None:
        self._y += 6
        node = Node(f"legend:{label}", kind, label, "f32[16x32]" if kind == "op" else "2 ops")
        node.x, node.y = NODE_W / 2 + 6, self._y
        item = NodeItem(0, node, self.style)
        item.setFlag(NodeItem.GraphicsItemFlag.ItemIsSelectable, False)
        self.addItem(item)
        made = mark(node)
        if made is not None:
            made.setParentItem(item)
        self._last_node = node
        self._text(text)
        self._y += 6

    def _changed_ring(self, badge: BadgeItem) -> OverlayItem:
        color = QColor(self.style.theme.highlight)
        path = QPainterPath()
        pad = CHANGED_PAD
        path.addRoundedRect(badge.sceneBoundingRect().adjusted(-pad, -pad, pad, pad), 7, 7)
        item = OverlayItem(path, 1.0)
        item.setPen(QPen(color, CHANGED_WIDTH))
        fill = QColor(color)
        fill.setAlpha(CHANGED_ALPHA)
        item.setBrush(fill)
        item.setZValue(2.9)
        item.setData(0, "changed")
        self.addItem(item)
        return item

    def _step_ring(self, color: QColor) -> OverlayItem:
        node = self._last_node
        pad = 6
        path = QPainterPath()
        path.addRoundedRect(
            QRectF(
                node.x - NODE_W / 2 - pad,
                node.y - NODE_H / 2 - pad,
                NODE_W + 2 * pad,
                NODE_H + 2 * pad,
            ),
            10,
            10,
        )
        item = OverlayItem(path, 1.0)
        item.setPen(QPen(color, RING_WIDTH))
        item.setZValue(2.5)
        item.setData(0, "step-ring")
        self.addItem(item)
        return item

    def _step_flow(self, color: QColor) -> OverlayItem:
        y = self._y
        path = QPainterPath(QPointF(20, y - 10))
        path.cubicTo(QPointF(80, y - 10), QPointF(100, y + 10), QPointF(170, y + 10))
        pen = QPen(color, EDGE_WIDTH)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        item = OverlayItem(path, 1.0)
        item.setPen(pen)
        item.setData(0, "step-flow")
        self.addItem(item)
        return item


class BadgeLegend(QDialog):
    """A window showing the legend (``LegendScene``) for the graph's current style."""

    def __init__(
        self, style: GraphStyle, parent: QWidget | None = None, names: Partitioners = JAX
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Badge legend")
        self.legend = LegendScene(style, self, names)
        self.view = QGraphicsView(self.legend, self)
        self.view.setRenderHints(
            QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing
        )
        self.view.setBackgroundBrush(style.theme.background)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        rect = self.legend.sceneRect()
        self.resize(int(rect.width()) + 30, min(int(rect.height()) + 30, 760))

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        # Taller than its window, it opens at its first rows, not at the middle of them.
        bar = self.view.verticalScrollBar()
        bar.setValue(bar.minimum())


class LegendButton(QToolButton):
    """A small "Legend" button kept in the bottom-left corner of a graph view."""

    def __init__(self, view: GraphView) -> None:
        # A child of the view, over its viewport, not of the viewport: scrolling the
        # viewport moves the viewport's children with its contents.
        super().__init__(view)
        self.graph_view = view
        self.dialog: BadgeLegend | None = None
        self.setText("Legend")
        self.setToolTip("What the badges and marks of the graph mean")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.clicked.connect(self.open_legend)
        view.viewport().installEventFilter(self)
        self._place()
        self.show()

    def open_legend(self) -> BadgeLegend:
        """Show the legend window (built afresh, in the view's current theme, naming the
        shown program's partitioners)."""
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        names = partitioners(self.graph_view.session.program)
        self.dialog = BadgeLegend(self.graph_view.style_, self.window(), names)
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        self.adjustSize()
        port = self.graph_view.viewport().geometry()
        self.move(port.x() + 8, port.bottom() - self.height() - 8)
        self.raise_()
