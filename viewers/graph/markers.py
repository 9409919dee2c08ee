"""Marks laid over the program graph: conflicts, predicted collectives, GSPMD differences,
and the open dimensions and priorities of the user's specs.

``GraphMarkers`` follows one ``GraphView``. Each time the view draws a frame and each
time propagation changes, it hangs small child items on the nodes and badges concerned:

- a red outline and a ``!`` disc on an op whose factors conflict (a folded scope holding
  such ops gets the disc with their count);
- an amber tag listing the collectives of an op (``AG`` all-gather, ``AS`` all-slice,
  ``AR`` all-reduce, ``RS`` reduce-scatter, ``A2A`` all-to-all, ``CP``
  collective-permute): once XLA compiled the propagation, the compiled program's, on the
  op each operand serves (or the op holding it in a loop, checkpoint, nested jit or
  callee); until then Shardy's prediction, whose collectives that finish the program's
  results sit on the return node;
- a purple outline on a badge whose value GSPMD shards differently, with GSPMD's spec
  written beside it;
- a yellow triangle with ``!`` beside an op XLA logged a warning about during the last
  run (``set_warnings``), the warnings as its tooltip;
- ``?`` over a dimension the user left open and ``pN`` over one given priority N;
- a ring in the theme's ``selected`` colour around the badges of the tensor the inspector
  shows (``set_inspected``), drawn again on every new drawing, so it stays on that tensor
  through undo, redo and rebuilds; it sits outside the changed ring (theme
  ``highlight``), so the two read apart by colour and by place.

It reads the session and the view; it never edits either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem
from shiboken6 import isValid

from shardscope.backend.program.placement import NODE_H, NODE_W
from shardscope.backend.propagation.conflicts import conflict_text
from shardscope.backend.propagation.predicted_collectives import collective_text
from shardscope.backend.run.result import compiled_text
from shardscope.backend.sharding.spec import dims_text
from shardscope.viewers.common.colors import text_color_on
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.graph.items import BadgeItem, GraphStyle, NodeItem
from shardscope.viewers.graph.scene import GraphScene

if TYPE_CHECKING:
    from shardscope.backend.analysis.analysis import Analysis
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.program.layout import GraphLayout
    from shardscope.backend.propagation.conflicts import Conflict
    from shardscope.backend.propagation.predicted_collectives import Collective
    from shardscope.backend.run.result import CompiledCollective
    from shardscope.viewers.graph.view import GraphView

CONFLICT_COLOR = "#D64545"
COLLECTIVE_COLOR = "#C77C02"
GSPMD_COLOR = "#A23CC0"
WARNING_COLOR = "#E0B000"
KIND_SHORT = {
    "all_gather": "AG",
    "all_slice": "AS",
    "all_reduce": "AR",
    "reduce_scatter": "RS",
    "all_to_all": "A2A",
    "collective_permute": "CP",
}


class GspmdDifference(Protocol):
    """What a GSPMD difference gives the marks (``backend.gspmd.compare.Difference``)."""

    id: int
    shardy: list[list[str]]
    gspmd: list[list[str]] | None


def short_kind(kind: str) -> str:
    """``AG`` for ``all_gather`` or ``all-gather``."""
    return KIND_SHORT.get(kind.replace("-", "_"), kind)


# ``GraphMarkers.show_result``: follow the session's current result
CURRENT = "current"


class MarkedResult(Protocol):
    """What ``GraphMarkers.show_result`` marks: an ``Analysis``, or the marks of another
    partitioner's shardings (``viewers.graph.pane.PaneResult``, whose ``propagation`` is
    None: the session's compile never replaces its collectives)."""

    @property
    def propagation(self) -> object | None: ...
    @property
    def conflicts(self) -> Sequence[Conflict]: ...
    @property
    def collectives(self) -> Sequence[Collective]: ...
    @property
    def compiled_collectives(self) -> Sequence[CompiledCollective] | None: ...


class ConflictMarkItem(QGraphicsItem):
    """A node's conflict mark: red outline around an op's card (not a folded scope's) and
    a disc with ``!`` or the number of conflicts at its top-right corner."""

    R = 9.0

    def __init__(self, conflicts: list[Conflict], style: GraphStyle, *, folded: bool) -> None:
        super().__init__()
        self.conflicts = conflicts
        self.style = style
        self.folded = folded
        n = len(conflicts)
        self.text = "!" if n == 1 and not folded else str(n)
        where = "ops of this scope" if folded else "this op"
        lines = [f"{n} conflict{'s' if n != 1 else ''} on {where}:"]
        lines += [f"  {conflict_text(c)}" for c in conflicts[:12]]
        if n > 12:
            lines.append(f"  … {n - 12} more in the Conflicts dock")
        self.setToolTip("\n".join(lines))
        self.setZValue(5)

    def _disc(self) -> QRectF:
        c = (NODE_W / 2 - 2, -NODE_H / 2 + 1)
        return QRectF(c[0] - self.R, c[1] - self.R, 2 * self.R, 2 * self.R)

    def boundingRect(self) -> QRectF:
        card = QRectF(-NODE_W / 2 - 6, -NODE_H / 2 - 6, NODE_W + 12, NODE_H + 12)
        return card.united(self._disc()).adjusted(-2, -2, 2, 2)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        color = QColor(CONFLICT_COLOR)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        if not self.folded:
            painter.setPen(QPen(color, 2.2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            rect = QRectF(-NODE_W / 2 - 4, -NODE_H / 2 - 4, NODE_W + 8, NODE_H + 8)
            painter.drawRoundedRect(rect, 8, 8)
        painter.setPen(QPen(QColor("#FFFFFF"), 1.2))
        painter.setBrush(QBrush(color))
        painter.drawEllipse(self._disc())
        font = QFont(self.style.small)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("#FFFFFF"))
        painter.drawText(self._disc(), Qt.AlignmentFlag.AlignCenter, self.text)


class CollectiveMarkItem(QGraphicsItem):
    """An amber tag on a node's top edge naming the collectives of the op: the compiled
    program's (``compiled``) or Shardy's prediction. A kind that comes more than once
    carries its count (``AG×2``)."""

    H = 16.0

    def __init__(
        self,
        collectives: Sequence[Collective | CompiledCollective],
        style: GraphStyle,
        graph: ProgramGraph | None,
        *,
        compiled: bool = False,
    ) -> None:
        super().__init__()
        self.collectives = list(collectives)
        self.style = style
        self.compiled = compiled
        counts: dict[str, int] = {}
        for c in collectives:
            short = short_kind(c.kind)
            counts[short] = counts.get(short, 0) + 1
        self.text = "⇄ " + "·".join(
            f"{k}×{n}" if n > 1 and compiled else k for k, n in counts.items()
        )
        width = QFontMetricsF(style.small).horizontalAdvance(self.text) + 10
        self._rect = QRectF(-NODE_W / 2 + 8, -NODE_H / 2 - self.H / 2 - 1, width, self.H)
        n = len(collectives)
        what = "in the compiled program (XLA)" if compiled else "Shardy predicts (before compiling)"
        lines = [f"{n} collective{'s' if n != 1 else ''} {what}:"]
        lines += [
            "  " + (compiled_text(c) if compiled else collective_text(c, graph))  # type: ignore[arg-type]
            for c in collectives[:12]
        ]
        if len(collectives) > 12:
            lines.append(f"  … {len(collectives) - 12} more in the Collectives dock")
        self.setToolTip("\n".join(lines))
        self.setZValue(5)

    def boundingRect(self) -> QRectF:
        return self._rect.adjusted(-1, -1, 1, 1)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(COLLECTIVE_COLOR))
        painter.drawRoundedRect(self._rect, self.H / 2, self.H / 2)
        painter.setFont(self.style.small)
        painter.setPen(QColor("#FFFFFF"))
        painter.drawText(self._rect, Qt.AlignmentFlag.AlignCenter, self.text)


class WarningMarkItem(QGraphicsItem):
    """A yellow triangle with ``!`` just left of a node's card: XLA warned about the op
    (or, on a folded scope, about ops inside it) while compiling or running it."""

    S = 18.0

    def __init__(self, messages: list[str], style: GraphStyle) -> None:
        super().__init__()
        self.messages = messages
        self.style = style
        n = len(messages)
        lines = [f"XLA warning{'s' if n != 1 else ''} from the last run:"]
        lines += ["  " + (m if len(m) <= 300 else m[:300] + "…") for m in messages[:8]]
        if n > 8:
            lines.append(f"  … {n - 8} more in the Run dock")
        self.setToolTip("\n".join(lines))
        self.setZValue(6)

    def _triangle(self) -> QPolygonF:
        x, y = -NODE_W / 2 - self.S - 3, -self.S / 2
        return QPolygonF(
            [QPointF(x + self.S / 2, y), QPointF(x + self.S, y + self.S), QPointF(x, y + self.S)]
        )

    def boundingRect(self) -> QRectF:
        return self._triangle().boundingRect().adjusted(-2, -2, 2, 2)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(QColor("#5A4500"), 1.0))
        painter.setBrush(QColor(WARNING_COLOR))
        triangle = self._triangle()
        painter.drawPolygon(triangle)
        font = QFont(self.style.small)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("#000000"))
        painter.drawText(
            triangle.boundingRect().adjusted(0, 3, 0, 0), Qt.AlignmentFlag.AlignCenter, "!"
        )


class GspmdMarkItem(QGraphicsItem):
    """A purple outline around a badge whose value GSPMD shards differently, with
    GSPMD's spec written beside it (the badge itself shows Shardy's).

    Side by side, the same mark says a value differs from the other pane: ``label``
    names what is written beside (``before``, ``Shardy``...), ``color`` is the changed
    badges' highlight unless one pane is GSPMD's, and ``tooltip`` says what differs.

    The written spec sits right of the badge, or left of it where the right side would
    leave the drawing (it could not be scrolled to); a second mark on the same badge
    writes its spec one line below the first instead of over it."""

    ROW = 17.0

    def __init__(
        self,
        badge: BadgeItem,
        shardy: str,
        gspmd: str,
        style: GraphStyle,
        *,
        label: str = "GSPMD",
        color: QColor | str = GSPMD_COLOR,
        tooltip: str | None = None,
    ) -> None:
        super().__init__()  # on the badge once placed: the scene then measures it placed
        self.style = style
        self.shardy = shardy
        self.gspmd = gspmd
        self.color = QColor(color)
        self.text = f"{label} {gspmd}"
        self._badge = badge
        self.setToolTip(
            tooltip
            or f"GSPMD and Shardy shard this value differently\nShardy: {shardy}\nGSPMD: {gspmd}"
        )
        self.setZValue(-0.5)
        self.row = self._free_row()
        self._place = self._placed()
        self.setParentItem(badge)

    def _free_row(self) -> int:
        """The lowest line beside the badge no other mark of it writes on."""
        taken = {
            c.row
            for c in self._badge.childItems()
            if isinstance(c, GspmdMarkItem) and c is not self and hasattr(c, "row")
        }
        return next(r for r in range(len(taken) + 1) if r not in taken)

    def _placed(self) -> QRectF:
        """Right of the badge, else left of it, where the spec stays inside the drawing
        and clear of the other badges (right of it where neither side is)."""
        rect = self._badge.boundingRect()
        width = QFontMetricsF(self.style.small).horizontalAdvance(self.text) + 10
        y = rect.center().y() - 7.5 + self.row * self.ROW
        sides = [
            QRectF(rect.right() + 4, y, width, 15),
            QRectF(rect.left() - 4 - width, y, width, 15),
        ]
        scene = self._badge.scene()
        if not isinstance(scene, GraphScene):  # a drawing with edges it keeps (not a legend)
            return sides[0]
        bounds = scene.sceneRect()
        inside = [s for s in sides if bounds.contains(self._badge.mapRectToScene(s))]
        for side in inside:
            spot = self._badge.mapRectToScene(side)
            if not any(
                isinstance(item, BadgeItem) and item is not self._badge
                for item in scene.items(spot)
            ):
                return side
        return inside[0] if inside else sides[0]

    def _label(self) -> QRectF:
        return self._place

    def boundingRect(self) -> QRectF:
        return self._badge.boundingRect().adjusted(-4, -4, 4, 4).united(self._label())

    def paint(self, painter: QPainter, option, widget=None) -> None:
        color = self.color
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(color, 2.2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(self._badge.boundingRect().adjusted(-2, -2, 2, 2), 6, 6)
        label = self._label()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(label, 4, 4)
        painter.setFont(self.style.small)
        painter.setPen(text_color_on(color))
        painter.drawText(label, Qt.AlignmentFlag.AlignCenter, self.text)


class SelectedMarkItem(QGraphicsItem):
    """A solid ring in the theme's ``selected`` colour around a badge: the tensor the
    inspector shows. It lies outside the changed ring (drawn 4 px around the badge), so
    the two never cover each other."""

    PAD = 8.0
    WIDTH = 2.5

    def __init__(self, badge: BadgeItem, style: GraphStyle) -> None:
        super().__init__(badge)
        self.style = style
        self._badge = badge
        self.color = QColor(style.theme.selected)
        self.setData(0, "selected")
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(-0.4)

    def _ring(self) -> QRectF:
        p = self.PAD
        return self._badge.boundingRect().adjusted(-p, -p, p, p)

    def boundingRect(self) -> QRectF:
        w = self.WIDTH
        return self._ring().adjusted(-w, -w, w, w)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(self.color, self.WIDTH))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(self._ring(), 9, 9)


class SpecNotesItem(QGraphicsItem):
    """``?`` over each dimension the user left open, ``pN`` over one with priority N."""

    def __init__(self, badge: BadgeItem, notes: dict[int, str], style: GraphStyle) -> None:
        super().__init__(badge)
        self.style = style
        self.notes = notes
        fm = QFontMetricsF(style.small)
        self._spots: list[tuple[QRectF, str]] = []
        for dim, text in sorted(notes.items()):
            center = badge.mapFromScene(badge.chip_scene_center(dim))
            w = fm.horizontalAdvance(text) + 6
            top = badge.boundingRect().top() - 11
            self._spots.append((QRectF(center.x() - w / 2, top, w, 12), text))
        self.setZValue(4)

    def boundingRect(self) -> QRectF:
        rect = QRectF()
        for spot, _ in self._spots:
            rect = rect.united(spot)
        return rect.adjusted(-1, -1, 1, 1)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setFont(self.style.small)
        for spot, text in self._spots:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self.style.theme.background)
            painter.drawRoundedRect(spot, 3, 3)
            painter.setPen(self.style.theme.foreground)
            painter.drawText(spot, Qt.AlignmentFlag.AlignCenter, text)


def spec_notes(spec) -> dict[int, str]:
    """Per dim of a user ``Spec``: ``?`` if open, ``pN`` for priority N (both: ``?pN``)."""
    out = {}
    for d, dim in enumerate(spec.dims):
        text = ("?" if dim.is_open else "") + (
            f"p{dim.priority}" if dim.priority is not None else ""
        )
        if text:
            out[d] = text
    return out


class GraphMarkers(QObject):
    """Keeps the marks of one ``GraphView`` in step with its session; see the module
    docstring. ``set_gspmd`` gives the GSPMD differences to show (None: none shown),
    ``set_warnings`` the XLA warnings of the last run by op id. Another view's markers
    can ``follow`` these: they get the same GSPMD differences and warnings (a second
    side-by-side pane marks what the window's graph marks)."""

    def __init__(self, view: GraphView) -> None:
        super().__init__(view)
        self.view = view
        self.session = view.session
        self.differences: dict[int, GspmdDifference] = {}
        self.gspmd_hidden = False  # the differences are kept but not marked
        self.conflict_marks: dict[int, ConflictMarkItem] = {}  # by node index
        self.collective_marks: dict[int, CollectiveMarkItem] = {}
        self.gspmd_marks: dict[int, list[GspmdMarkItem]] = {}  # by value id
        self.note_marks: list[SpecNotesItem] = []
        self.warnings: dict[int, list[str]] = {}  # op id -> XLA's warnings about it
        self.warning_marks: dict[int, WarningMarkItem] = {}  # by node index
        self.followers: list[GraphMarkers] = []
        self.leader: GraphMarkers | None = None
        self.inspected: int | None = None  # the tensor the inspector shows
        self.selected_marks: list[SelectedMarkItem] = []
        # whose conflicts and collectives are marked: the session's current result, or
        # the one the view's shardings come from when it shows another (None: none)
        self.shown_result: MarkedResult | None | str = CURRENT
        view.graph_scene.drawn.connect(self.refresh)
        ev, links = self.session.events, Connections()
        self._links = links
        links.connect(ev.propagation, self._on_propagation_change)
        # The compiled collectives replace the prediction's tags, and only them.
        links.connect(ev.compiled, self._on_compiled)
        # An edit changes only the user's notes; a stale result comes as its own event.
        links.connect(ev.specs, self._on_specs_change)
        links.connect(ev.program, self._on_program)
        self.refresh()

    def close(self) -> None:
        """Stop following the session (the view is going away)."""
        if self.leader is not None:
            self.leader.followers.remove(self)
            self.leader = None
        self._links.close()

    def follow(self, leader: GraphMarkers) -> None:
        """Mark the GSPMD differences and warnings ``leader`` marks, now and after each
        change, until ``close``."""
        self.leader = leader
        leader.followers.append(self)
        self.differences = dict(leader.differences)
        self.warnings = dict(leader.warnings)
        self.inspected = leader.inspected
        self.refresh()

    def set_inspected(self, value_id: int | None) -> None:
        """Ring the badges of ``value_id``, the tensor the inspector shows (None: none)."""
        self.inspected = value_id
        self._remove(self.selected_marks)
        self.selected_marks = []
        if self.view.layout_ is not None and self.session.graph is not None:
            self._mark_inspected(self.view.style_)
        for follower in self.followers:
            follower.set_inspected(value_id)

    def set_gspmd(self, differences: Sequence[GspmdDifference] | None) -> None:
        """Mark the values of ``differences`` (None or empty: no GSPMD marks)."""
        self.differences = {d.id: d for d in differences or ()}
        self.refresh()
        for follower in self.followers:
            follower.set_gspmd(differences)

    def show_result(self, result: MarkedResult | None | str) -> None:
        """Mark the conflicts and collectives of ``result``: ``CURRENT`` (the session's
        analysis, whichever it is), another propagation's analysis, the marks of another
        partitioner's shardings (a ``MarkedResult``), or None (no such marks)."""
        if result is not self.shown_result:
            self.shown_result = result
            self.refresh()

    def hide_gspmd(self, hidden: bool) -> None:
        """Keep the GSPMD differences unmarked (``hidden``: a side-by-side pane marks
        them its own way), or mark them again."""
        if bool(hidden) != self.gspmd_hidden:
            self.gspmd_hidden = bool(hidden)
            self.refresh()

    def set_warnings(self, by_op: dict[int, list[str]] | None) -> None:
        """Mark the ops XLA warned about (op id -> messages; None or empty: no marks)."""
        self.warnings = {int(k): list(v) for k, v in (by_op or {}).items()}
        self.refresh()
        for follower in self.followers:
            follower.set_warnings(by_op)

    def _on_propagation_change(self, _result) -> None:
        self.refresh()

    def _on_program(self, _program) -> None:
        self.set_inspected(None)  # the values of another program

    def _shown(self) -> MarkedResult | None:
        """The analysis whose conflicts and collectives are marked (none of another
        program's: a new program is drawn before the marks' owner hears of it)."""
        shown = self.shown_result
        if shown is CURRENT:
            return self.session.analysis
        if getattr(shown, "for_program", self.session.program) is not self.session.program:
            return None
        return shown  # type: ignore[return-value]

    def _on_compiled(self, analysis: Analysis) -> None:
        shown = self._shown()
        layout = self.view.layout_
        graph = self.session.graph
        # Another partitioner's marks (no propagation of their own) keep their collectives.
        if shown is None or analysis.propagation is not shown.propagation:
            return
        if layout is None or graph is None or not self.view.nodes:
            return
        self._remove(self.collective_marks.values())
        self.collective_marks = {}
        self._mark_result_collectives(layout, graph, analysis, self.view.style_)

    def _on_specs_change(self, _ids) -> None:
        self._remove(self.note_marks)
        self.note_marks = []
        if self.view.layout_ is not None and self.session.graph is not None:
            self._mark_notes(self.view.style_)

    def refresh(self) -> None:
        """Drop every mark and hang them again on the items drawn now."""
        self._clear()
        layout = self.view.layout_
        graph = self.session.graph
        if layout is None or graph is None or not self.view.nodes:
            return
        style = self.view.style_
        result = self._shown()
        if result is not None:
            self._mark_conflicts(layout, graph, result.conflicts, style)
            self._mark_result_collectives(layout, graph, result, style)
        if not self.gspmd_hidden:
            self._mark_gspmd(style)
        self._mark_notes(style)
        self._mark_warnings(layout, graph, style)
        self._mark_inspected(style)

    def _clear(self) -> None:
        marks: list[QGraphicsItem] = [*self.conflict_marks.values()]
        marks += self.warning_marks.values()
        marks += self.collective_marks.values()
        marks += [m for ms in self.gspmd_marks.values() for m in ms]
        marks += self.note_marks
        marks += self.selected_marks
        self._remove(marks)
        self.conflict_marks, self.collective_marks = {}, {}
        self.gspmd_marks, self.note_marks = {}, []
        self.selected_marks = []
        self.warning_marks = {}

    def _remove(self, marks) -> None:
        scene = self.view.graph_scene
        for mark in marks:
            # Items of a frame the scene already cleared are gone with it.
            if isValid(mark) and mark.scene() is scene:
                scene.removeItem(mark)

    def node_of(self, layout: GraphLayout, graph: ProgramGraph, op_id: int | None) -> int | None:
        """The drawn node that shows ``op_id`` (itself, its folded scope, or the op whose
        region or callee holds it); None if this frame does not show it."""
        seen = 0
        while op_id is not None and seen < 10_000:
            n = layout.node_of_op.get(op_id)
            if n is not None:
                return n
            op_id = graph.ops[op_id].parent
            seen += 1
        return None

    def _return_node(self, layout: GraphLayout, graph: ProgramGraph) -> int | None:
        frame = layout.frame
        if frame.op is not None or frame.function != graph.main:
            return None
        for i, node in enumerate(layout.nodes):
            if node.kind == "output":
                return i
        return None

    def _attach(self, node: int, item: QGraphicsItem) -> None:
        item.setParentItem(self.view.nodes[node])

    def _mark_conflicts(self, layout, graph, conflicts: list[Conflict], style) -> None:
        by_node: dict[int, list[Conflict]] = {}
        for c in conflicts:
            n = self.node_of(layout, graph, c.op)
            if n is not None:
                by_node.setdefault(n, []).append(c)
        for n, found in by_node.items():
            mark = ConflictMarkItem(found, style, folded=layout.nodes[n].kind != "op")
            self._attach(n, mark)
            self.conflict_marks[n] = mark

    def _mark_result_collectives(self, layout, graph, result: MarkedResult, style) -> None:
        if result.compiled_collectives is not None:
            self._mark_compiled(layout, graph, result.compiled_collectives, style)  # type: ignore[arg-type]
        else:
            self._mark_collectives(layout, graph, result.collectives, style)

    def _mark_compiled(self, layout, graph, compiled: list[CompiledCollective], style) -> None:
        """Each compiled collective on the node of the op holding it, else on the node of
        each op its operands serve (once per node)."""
        by_node: dict[int, list[CompiledCollective]] = {}
        for c in compiled:
            ops = [c.holder] if c.holder is not None else [t.op for t in c.tensors]
            nodes = {self.node_of(layout, graph, op) for op in ops if op is not None}
            for n in sorted(n for n in nodes if n is not None):
                by_node.setdefault(n, []).append(c)
        for n, found in by_node.items():
            mark = CollectiveMarkItem(found, style, graph, compiled=True)
            self._attach(n, mark)
            self.collective_marks[n] = mark

    def _mark_collectives(self, layout, graph, collectives: list[Collective], style) -> None:
        by_node: dict[int, list[Collective]] = {}
        for c in collectives:
            n = (
                self.node_of(layout, graph, c.op)
                if c.op is not None
                else self._return_node(layout, graph)
            )
            if n is not None:
                by_node.setdefault(n, []).append(c)
        for n, found in by_node.items():
            mark = CollectiveMarkItem(found, style, graph)
            self._attach(n, mark)
            self.collective_marks[n] = mark

    def _mark_warnings(self, layout, graph, style) -> None:
        by_node: dict[int, list[str]] = {}
        for op_id, messages in self.warnings.items():
            if not 0 <= op_id < len(graph.ops):
                continue
            n = self.node_of(layout, graph, op_id)
            if n is not None:
                by_node.setdefault(n, []).extend(messages)
        for n, messages in by_node.items():
            mark = WarningMarkItem(messages, style)
            self._attach(n, mark)
            self.warning_marks[n] = mark

    def _mark_gspmd(self, style) -> None:
        scene = self.view.graph_scene
        for vid, diff in self.differences.items():
            for badge in scene.badges_of(vid):
                if badge.value_id is None:
                    continue
                mark = GspmdMarkItem(badge, dims_text(diff.shardy), dims_text(diff.gspmd), style)
                self.gspmd_marks.setdefault(vid, []).append(mark)

    def _mark_inspected(self, style) -> None:
        vid = self.inspected
        graph = self.session.graph
        if vid is None or graph is None or not 0 <= vid < len(graph.values):
            return
        for badge in self.view.graph_scene.badges_of(vid):
            if badge.value_id == vid:
                self.selected_marks.append(SelectedMarkItem(badge, style))

    def _mark_notes(self, style) -> None:
        for badge in self.view.badges:
            vid = badge.value_id
            spec = self.session.spec(vid) if vid is not None else None
            if spec is None or len(badge.dims) != len(spec.dims):
                continue
            notes = spec_notes(spec)
            if notes:
                self.note_marks.append(SpecNotesItem(badge, notes, style))

    # -- queries (tests, the legend) -------------------------------------------------------
    def conflicted_nodes(self) -> dict[int, NodeItem]:
        """The node items that carry a conflict mark, by node index."""
        return {n: self.view.nodes[n] for n in self.conflict_marks}

    def gspmd_values(self) -> set[int]:
        """Ids of the values whose badges carry a GSPMD mark."""
        return set(self.gspmd_marks)
