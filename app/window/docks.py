"""The window's docks as a registry: each dock is one ``DockSpec``, built by ``build_docks``.

A spec says what the dock shows (a factory for its widget), its title and object name
(saved layouts find docks by object name, so names never change), its area, and where it
sits in the default layout (below another dock, or tabbed with one) at what initial size.
A factory is given the window's models (``DockContext``: the session and the selection),
and a widget that shows them subscribes to them itself; this module only places them.

The graph keeps at least ``GRAPH_SHARE`` of the window in each dimension (``graph_share``
measures it): the default heights of the bottom docks shrink to leave it that much of the
height (``_apply_sizes``; the side columns' 750 px leave it half the width of windows from
1,500 px wide), a dock given room after a run (``make_room``) takes no more of the graph's
height than that, and a dock whose contents could grow wide (``DockSpec.cut_wide``) cuts
them instead of widening its column. Both side columns run the window's full height (they
own the bottom corners), so the Mesh, Program, Tensor, Source and Provenance docks all get
readable heights while the bottom docks sit under the graph. Once the window is laid
out, each side column is split as a whole (``_column_heights``), so that a new window and
``reset_layout``, which puts every dock back where ``build_docks`` put it, look the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QFrame, QMainWindow, QScrollArea, QUndoView, QWidget

from shardscope.backend.session.document import Session
from shardscope.backend.session.selection import Selection
from shardscope.viewers.common.messages import MessagesView
from shardscope.viewers.debugger.collectives_view import CollectivesView
from shardscope.viewers.debugger.conflicts import ConflictsView
from shardscope.viewers.debugger.gspmd import GspmdView
from shardscope.viewers.mesh.editor import MeshEditor
from shardscope.viewers.mesh.palette import SpecPalette
from shardscope.viewers.program.outline import ProgramOutline
from shardscope.viewers.program.source_view import SourceView
from shardscope.viewers.run.run_panel import RunPanel
from shardscope.viewers.tensor.inspector import TensorInspector
from shardscope.viewers.timeline.provenance_view import ProvenanceView
from shardscope.viewers.timeline.timeline_panel import TimelinePanel

W = TypeVar("W", bound=QWidget)

VERTICAL = Qt.Orientation.Vertical
LEFT = Qt.DockWidgetArea.LeftDockWidgetArea
RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea


@dataclass(frozen=True)
class DockContext:
    """What a dock's factory is given: the window's models, for its widget to follow, and
    whether the session propagates after each edit on its own (``propagating()``: a dock
    without a propagation then says one is on its way)."""

    session: Session
    selection: Selection
    propagating: Callable[[], bool] = lambda: False


def plain(widget: Callable[[], W]) -> Callable[[DockContext], W]:
    """The factory of a widget that follows none of the window's models."""
    return lambda _context: widget()


@dataclass(frozen=True)
class DockSpec:
    """One dock: what it shows, its names, and its place in the default layout."""

    title: str
    name: str  # the object name saved layouts restore the dock by
    area: Qt.DockWidgetArea
    factory: Callable[[DockContext], QWidget]
    below: str | None = None  # split off the bottom of this dock (by name)
    tabify_with: str | None = None  # share this dock's place, as one more tab
    width: int | None = None
    height: int | None = None
    scrolls: bool = False  # wrap the widget in a vertical scroll area
    in_view_menu: bool = True
    min_lines: int | None = None  # the widget's smallest height, in lines of its text
    on_top: bool = False  # the tab its group shows in the default layout
    # its contents never widen the dock (and narrow the graph): a line too long for the
    # dock is cut at its edge
    cut_wide: bool = False


def mesh_editor(context: DockContext) -> MeshEditor:
    """The mesh editor, showing the session's mesh and the selection's devices."""
    return MeshEditor(session=context.session, selection=context.selection)


def spec_palette(context: DockContext) -> SpecPalette:
    """The chips of the session's mesh axes."""
    return SpecPalette(session=context.session)


def run_panel(context: DockContext) -> RunPanel:
    """The Run dock, following the session's program and edits and choosing collectives'
    device groups in the selection."""
    return RunPanel(session=context.session, selection=context.selection)


def conflicts_view(context: DockContext) -> ConflictsView:
    """The Conflicts dock, following the session's propagation."""
    return ConflictsView(session=context.session, propagating=context.propagating)


def collectives_view(context: DockContext) -> CollectivesView:
    """The Collectives dock, following the session's analysis as it is compiled and
    priced."""
    return CollectivesView(session=context.session, propagating=context.propagating)


def history_view(_context: DockContext) -> QUndoView:
    """The undo history list; the window gives it its undo stack."""
    view = QUndoView()
    view.setEmptyLabel("<loaded>")
    return view


# Registry order is the order of the View menu's dock toggles.
DOCKS: tuple[DockSpec, ...] = (
    # Docks whose content is tall scroll instead of reserving its height: the side columns
    # share theirs among several docks, and the Run dock needs the height after a run.
    # The mesh grid is what a user draws on first: it gets the height that shows the
    # axes and a grid of four rows of devices, the Program dock below takes what is left.
    DockSpec("Mesh", "dock_mesh", LEFT, mesh_editor, width=330, height=390, scrolls=True),
    DockSpec("Spec palette", "dock_palette", LEFT, spec_palette, below="dock_mesh"),
    # Scrolls rather than squeezing the tile grid when the dock is short: wrapped
    # sharding texts need more height at narrow widths than the dock first reserved.
    DockSpec(
        "Tensor", "dock_tensor", RIGHT, plain(TensorInspector), width=420, height=480, scrolls=True
    ),
    # The header names the file and op in full: a long path must not widen the column.
    DockSpec(
        "Source",
        "dock_source",
        RIGHT,
        plain(SourceView),
        below="dock_tensor",
        height=150,
        cut_wide=True,
    ),
    DockSpec("Messages", "dock_messages", BOTTOM, plain(MessagesView), height=170),
    # Split from the messages before they are tabbed: splitting a tabbed dock would take
    # it out of its tab group.
    DockSpec(
        "Timeline",
        "dock_timeline",
        BOTTOM,
        plain(TimelinePanel),
        below="dock_messages",
        height=150,
        scrolls=True,
    ),
    DockSpec("History", "dock_history", LEFT, history_view, below="dock_palette"),
    DockSpec(
        "Program",
        "dock_program",
        LEFT,
        plain(ProgramOutline),
        tabify_with="dock_history",
        scrolls=True,
        on_top=True,
    ),
    # The debugger's docks share the messages' place.
    DockSpec(
        "Conflicts",
        "dock_conflicts",
        BOTTOM,
        conflicts_view,
        tabify_with="dock_messages",
        on_top=True,
    ),
    DockSpec(
        "Collectives",
        "dock_collectives",
        BOTTOM,
        collectives_view,
        tabify_with="dock_conflicts",
    ),
    DockSpec(
        "GSPMD vs Shardy", "dock_gspmd", BOTTOM, plain(GspmdView), tabify_with="dock_collectives"
    ),
    DockSpec("Run", "dock_run", BOTTOM, run_panel, tabify_with="dock_gspmd"),
    # A chain of steps per axis: readable only with a dozen lines, never fewer than eight.
    DockSpec(
        "Provenance",
        "dock_provenance",
        RIGHT,
        plain(ProvenanceView),
        below="dock_source",
        height=300,
        min_lines=8,
    ),
)


class Docks:
    """The docks built from a registry, by object name, with the widgets they show."""

    def __init__(self, specs: Sequence[DockSpec]) -> None:
        self.specs = tuple(specs)
        self.by_name: dict[str, QDockWidget] = {}
        self._widgets: dict[str, QWidget] = {}
        # Set by the window once it restored a saved layout: the default sizes then stay
        # unapplied.
        self.restored = False

    def __getitem__(self, name: str) -> QDockWidget:
        return self.by_name[name]

    def add(self, spec: DockSpec, dock: QDockWidget, widget: QWidget) -> None:
        self.by_name[spec.name] = dock
        self._widgets[spec.name] = widget

    def show(self, name: str) -> None:
        """Show dock ``name`` on top of its tab group."""
        self.by_name[name].show()
        self.by_name[name].raise_()

    def widget(self, name: str, kind: type[W]) -> W:
        """The widget dock ``name`` shows (inside its scroll area, if it has one)."""
        widget = self._widgets[name]
        if not isinstance(widget, kind):
            raise TypeError(f"dock {name} shows a {type(widget).__name__}, not a {kind.__name__}")
        return widget

    def toggle_actions(self) -> list[QAction]:
        """The show/hide actions of the docks listed in the View menu, in registry order."""
        return [self.by_name[s.name].toggleViewAction() for s in self.specs if s.in_view_menu]


def build_docks(
    window: QMainWindow, context: DockContext, specs: Sequence[DockSpec] = DOCKS
) -> Docks:
    """Create every dock of ``specs`` on ``window``, each widget made by its factory from
    ``context``, and arrange the default layout."""
    docks = Docks(specs)
    for spec in specs:
        widget = spec.factory(context)
        if spec.min_lines is not None:
            widget.setMinimumHeight(_lines_height(widget, spec.min_lines))
        if spec.cut_wide:
            # a minimum width of its own stands in for the one its contents ask for
            widget.setMinimumWidth(CUT_WIDE_MIN)
        dock = QDockWidget(spec.title, window)
        dock.setObjectName(spec.name)
        dock.setWidget(_scrolling(widget) if spec.scrolls else widget)
        docks.add(spec, dock, widget)
    _arrange(window, docks)
    _apply_sizes(window, docks)
    # With two tab groups Qt forgets sizes given before the window is first shown (the
    # tensor dock came out 163 px wide instead of 420): they are given again then, unless
    # the window restored a saved layout meanwhile (``Docks.restored``).
    window.installEventFilter(_SizesOnFirstShow(window, docks))
    return docks


def _arrange(window: QMainWindow, docks: Docks) -> None:
    """Dock every dock where the default layout puts it: its area, below or tabbed with
    the dock its spec names, each tab group showing its ``on_top`` dock."""
    window.setCorner(Qt.Corner.BottomRightCorner, RIGHT)
    # The left column too: the mesh grid and the program outline need its height more
    # than the bottom docks need its width.
    window.setCorner(Qt.Corner.BottomLeftCorner, LEFT)
    for spec in docks.specs:
        window.addDockWidget(spec.area, docks[spec.name])
    for spec in docks.specs:
        dock = docks[spec.name]
        if spec.below is not None:
            window.splitDockWidget(docks[spec.below], dock, Qt.Orientation.Vertical)
        if spec.tabify_with is not None:
            window.tabifyDockWidget(docks[spec.tabify_with], dock)
    for spec in docks.specs:
        if spec.on_top:
            docks[spec.name].raise_()


def reset_layout(window: QMainWindow, docks: Docks) -> None:
    """Put every dock back where ``build_docks`` put it, shown, docked and at its default
    size: the window's size stays, the user's arrangement goes."""
    for spec in docks.specs:
        dock = docks[spec.name]
        dock.setFloating(False)
        window.removeDockWidget(dock)
    _arrange(window, docks)
    for spec in docks.specs:
        docks[spec.name].show()
    for spec in docks.specs:  # shown again, each tab group with its default tab on top
        if spec.on_top:
            docks[spec.name].raise_()
    docks.restored = False
    _apply_sizes(window, docks)
    # as on the first show: the bottom docks' heights again once the window is laid out
    QTimer.singleShot(0, window, lambda: _laid_out_sizes(window, docks))


# The smallest width of a dock that cuts what is too wide for it (``DockSpec.cut_wide``).
CUT_WIDE_MIN = 120

# The share of the window's width and height the graph keeps at least, in the default
# layout and when a dock is given room.
GRAPH_SHARE = 0.5
# The share of the window's height a dock given room (``make_room``) asks for, and below
# which share it is given it.
ROOM = 0.5
ROOM_BELOW = 0.45


def make_room(window: QMainWindow, dock: QDockWidget) -> None:
    """Show ``dock`` on top of its tab group and, where it is docked and shorter than
    ``ROOM_BELOW`` of the window, give it up to ``ROOM`` of the window's height: a dock
    in a column takes it from the docks beside it; a bottom or top dock what the graph
    has above ``GRAPH_SHARE`` of the window's height, then what the docks above or below
    it have above ``KEEP_BESIDE`` px (the timeline keeps its controls and step strip)."""
    # The height of its place: a tab behind another keeps a stale geometry.
    group = [dock, *window.tabifiedDockWidgets(dock)]
    shown = [d.height() for d in group if not d.visibleRegion().isEmpty()]
    now = max(shown, default=dock.height())
    dock.show()
    dock.raise_()
    if dock.isFloating():
        return
    height = window.height()
    if now >= ROOM_BELOW * height:
        return
    target = int(ROOM * height)
    if window.dockWidgetArea(dock) not in (BOTTOM, Qt.DockWidgetArea.TopDockWidgetArea):
        window.resizeDocks([dock], [target], VERTICAL)
        return
    central = window.centralWidget()
    spare = central.height() - math.ceil(GRAPH_SHARE * height) if central is not None else 0
    grow = min(target - now, max(0, spare))
    sizes: dict[QDockWidget, int] = {}
    need = target - now - grow
    for other in _stacked_with(window, dock):
        if need <= 0:
            break
        keep = max(other.minimumSizeHint().height(), KEEP_BESIDE)
        give = min(need, max(0, other.height() - keep))
        if give > 0:
            sizes[other] = other.height() - give
            grow, need = grow + give, need - give
    if grow > 0:
        window.resizeDocks([dock, *sizes], [now + grow, *sizes.values()], VERTICAL)


# The height a dock above or below one given room keeps at least.
KEEP_BESIDE = 96


def _stacked_with(window: QMainWindow, dock: QDockWidget) -> list[QDockWidget]:
    """The docks shown above or below ``dock`` in its area (not the tabs of its group)."""
    area = window.dockWidgetArea(dock)
    tabs = set(window.tabifiedDockWidgets(dock))
    span = dock.geometry()
    return [
        other
        for other in window.findChildren(QDockWidget)
        if other is not dock
        and other not in tabs
        and not other.isFloating()
        and window.dockWidgetArea(other) == area
        and not other.visibleRegion().isEmpty()
        and other.geometry().left() < span.right()
        and span.left() < other.geometry().right()
    ]


def graph_share(window: QMainWindow) -> tuple[float, float]:
    """The share of the window's width and height the central widget (the graph) has."""
    central = window.centralWidget()
    if central is None or window.width() <= 0 or window.height() <= 0:
        return 0.0, 0.0
    return central.width() / window.width(), central.height() / window.height()


def _fitted(
    sizes: dict[str, int], room: float, floors: dict[str, int] | None = None
) -> dict[str, int]:
    """``sizes`` scaled down alike, none below its floor, to sum to ``room`` if they can."""
    floors = floors or {}
    total = sum(sizes.values())
    if total <= room or total <= 0:
        return sizes
    floor = sum(floors.get(n, 0) for n in sizes)
    scale = max(room - floor, 0.0) / max(total - floor, 1)
    out = {}
    for name, size in sizes.items():
        low = floors.get(name, 0)
        out[name] = max(low, low + int((size - low) * scale)) if size > low else size
    return out


def _apply_sizes(window: QMainWindow, docks: Docks) -> None:
    """The default widths and heights, the bottom docks' heights shrunk where the window
    is too short to leave the graph ``GRAPH_SHARE`` of its height. The side columns keep
    their widths (the Tensor dock's contents need its 420 px): the graph has half the
    width of windows 1,500 px wide or wider."""
    specs = docks.specs
    widths = {s.name: s.width for s in specs if s.width is not None}
    heights = {s.name: s.height for s in specs if s.height is not None}
    heights.update({n: h for n, h in _bottom_heights(window, docks).items() if n in heights})
    for sizes, orientation in (
        (widths, Qt.Orientation.Horizontal),
        (heights, Qt.Orientation.Vertical),
    ):
        window.resizeDocks([docks[n] for n in sizes], list(sizes.values()), orientation)


def _bottom_heights(window: QMainWindow, docks: Docks) -> dict[str, int]:
    """The default heights of the bottom docks stacked one above the other (not the ones
    tabbed into another's place), fitted to what the graph leaves them: a tab group is as
    tall as its tallest smallest height at least."""
    stacked = [s for s in docks.specs if s.area == BOTTOM and s.tabify_with is None]
    floors = {s.name: _group_floor(docks, s.name) for s in stacked}
    heights = {s.name: max(s.height or 0, floors[s.name]) for s in stacked}
    return _fitted(heights, _bottom_room(window), floors)


def _group(docks: Docks, name: str) -> set[str]:
    """Dock ``name`` and the docks tabbed into its place."""
    group = {name}
    for spec in docks.specs:  # registry order: a dock tabs with one listed before it
        if spec.tabify_with in group:
            group.add(spec.name)
    return group


def _group_floor(docks: Docks, name: str) -> int:
    """The smallest height of dock ``name`` with the docks tabbed into its place."""
    return max(docks[n].minimumSizeHint().height() for n in _group(docks, name))


def _fitting_height(dock: QDockWidget) -> int:
    """The height that shows all of ``dock``'s contents at the dock's width (its title bar
    included), for contents whose height follows their width (wrapped chips, text)."""
    widget = dock.widget()
    if widget is None:
        return dock.minimumSizeHint().height()
    bar = max(0, dock.height() - widget.height())
    if widget.hasHeightForWidth():
        return widget.heightForWidth(widget.width()) + bar
    return widget.minimumSizeHint().height() + bar


def _group_height(docks: Docks, name: str) -> int:
    """The height dock ``name``'s place has: that of the tab shown there (a tab behind
    another keeps a stale geometry)."""
    shown = [docks[n] for n in _group(docks, name) if not docks[n].visibleRegion().isEmpty()]
    return max((d.height() for d in shown), default=docks[name].height())


def _bottom_room(window: QMainWindow) -> float:
    """The height the bottom docks may share: what the graph leaves of the window's height
    under the menu bar and status bar."""
    bars = window.menuBar().sizeHint().height() + window.statusBar().sizeHint().height()
    tabs = 40  # a tab bar and the splitters
    return (1 - GRAPH_SHARE) * window.height() - bars - tabs


def _laid_out_sizes(window: QMainWindow, docks: Docks) -> None:
    """The default sizes again once the docks are laid out, then the bottom docks'
    heights once more, then each side column split as a whole (in that order: a change of
    the bottom docks' height splits the columns afresh)."""
    _apply_sizes(window, docks)

    def bottom() -> None:
        _apply_bottom_heights(window, docks)
        QTimer.singleShot(0, window, columns)

    def columns() -> None:
        for area in (LEFT, RIGHT):
            heights = _column_heights(docks, area)
            window.resizeDocks([docks[n] for n in heights], list(heights.values()), VERTICAL)

    QTimer.singleShot(0, window, bottom)


def _column_heights(docks: Docks, area: Qt.DockWidgetArea) -> dict[str, int]:
    """Heights for the docks stacked in side column ``area`` that add up to the column's
    height, so that Qt splits it the same way whatever it held before: each dock its
    spec's height, one without a height the height that shows its contents, the last the
    rest; where the column is too short the docks with a height give up theirs alike."""
    stacked = [
        s
        for s in docks.specs
        if s.area == area and s.tabify_with is None and not docks[s.name].isHidden()
    ]
    total = sum(_group_height(docks, s.name) for s in stacked)
    floors = {s.name: _group_floor(docks, s.name) for s in stacked}
    free = [s for s in stacked if s.height is None]
    last = free[-1].name if free else None
    heights: dict[str, int] = {}
    for spec in stacked:
        if spec.height is not None:
            heights[spec.name] = spec.height
        elif spec.name != last:
            heights[spec.name] = max(floors[spec.name], _fitting_height(docks[spec.name]))
    if last is None:
        return _fitted(heights, total, floors)
    room = total - floors[last]
    heights = _fitted(heights, room, floors)
    heights[last] = max(floors[last], total - sum(heights.values()))
    return {s.name: heights[s.name] for s in stacked}


def _apply_bottom_heights(window: QMainWindow, docks: Docks) -> None:
    """The heights of the bottom docks that have no tabs again, once the window is laid
    out: the columns above them ask for more height than a short window has, and given
    with theirs the timeline kept only its smallest height (84 px instead of 150 in a
    1400x900 window). Resizing a dock of a tab group as well undid it."""
    specs = {s.name: s for s in docks.specs}
    for name, height in _bottom_heights(window, docks).items():
        dock = docks[name]
        if specs[name].height is not None and not window.tabifiedDockWidgets(dock):
            window.resizeDocks([dock], [height], Qt.Orientation.Vertical)


class _SizesOnFirstShow(QObject):
    def __init__(self, window: QMainWindow, docks: Docks) -> None:
        super().__init__(window)
        self.main = window
        self.docks = docks

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(obj, QMainWindow):
            obj.removeEventFilter(self)
            if self.docks.restored:
                self.deleteLater()
            else:
                _apply_sizes(obj, self.docks)
                QTimer.singleShot(0, self._once_laid_out)
        return False

    def _once_laid_out(self) -> None:
        if not self.docks.restored:
            _laid_out_sizes(self.main, self.docks)
        self.deleteLater()


def _lines_height(widget: QWidget, lines: int) -> int:
    """The height ``lines`` lines of ``widget``'s text take, with its frame and margins."""
    frame = 2 * widget.frameWidth() if isinstance(widget, QFrame) else 0
    return lines * widget.fontMetrics().lineSpacing() + frame + 12


def _scrolling(widget: QWidget) -> QScrollArea:
    scroll = QScrollArea()
    scroll.setWidget(widget)
    scroll.setWidgetResizable(True)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    # always there: a scroll bar that comes and goes when the contents' height crosses the
    # dock's narrows or widens them, and every line is laid out and repainted again
    scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    # Three lines of text at the least (a scroll area's own smallest size is taller).
    scroll.setMinimumHeight(3 * scroll.fontMetrics().height())
    return scroll
