"""The window's docks as a registry: each dock is one ``DockSpec``, built by ``build_docks``.

A spec says what the dock shows (a factory for its widget), its title and object name
(saved layouts find docks by object name, so names never change), its area, and where it
sits in the default layout (below another dock, or tabbed with one) at what initial size.
The window wires the built widgets to the session; this module only places them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QFrame, QMainWindow, QScrollArea, QUndoView, QWidget

from shardscope.viewers.common.messages import MessagesView
from shardscope.viewers.debugger.collectives import CollectivesView
from shardscope.viewers.debugger.conflicts import ConflictsView
from shardscope.viewers.debugger.gspmd import GspmdView
from shardscope.viewers.mesh.editor import MeshEditor
from shardscope.viewers.mesh.palette import SpecPalette
from shardscope.viewers.program.outline import ProgramOutline
from shardscope.viewers.program.source_view import SourceView
from shardscope.viewers.run.panel import RunPanel
from shardscope.viewers.tensor.inspector import TensorInspector
from shardscope.viewers.timeline.panel import TimelinePanel
from shardscope.viewers.timeline.provenance_view import ProvenanceView

W = TypeVar("W", bound=QWidget)

LEFT = Qt.DockWidgetArea.LeftDockWidgetArea
RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea


@dataclass(frozen=True)
class DockSpec:
    """One dock: what it shows, its names, and its place in the default layout."""

    title: str
    name: str  # the object name saved layouts restore the dock by
    area: Qt.DockWidgetArea
    factory: Callable[[], QWidget]
    below: str | None = None  # split off the bottom of this dock (by name)
    tabify_with: str | None = None  # share this dock's place, shown on top of it
    width: int | None = None
    height: int | None = None
    scrolls: bool = False  # wrap the widget in a vertical scroll area
    in_view_menu: bool = True


def history_view() -> QUndoView:
    """The undo history list; the window gives it its undo stack."""
    view = QUndoView()
    view.setEmptyLabel("<loaded>")
    return view


# Registry order is the order of the View menu's dock toggles.
DOCKS: tuple[DockSpec, ...] = (
    # The left and right columns stand above the bottom docks, so their smallest heights
    # cap the bottom docks' height: docks whose content is tall scroll instead of
    # reserving it (the Run dock needs the height after a run).
    # The mesh grid is what a user draws on first: it gets its height, the Program dock
    # below takes what is left.
    DockSpec("Mesh", "dock_mesh", LEFT, MeshEditor, width=300, height=360, scrolls=True),
    DockSpec("Spec palette", "dock_palette", LEFT, SpecPalette, below="dock_mesh"),
    # Scrolls rather than squeezing the tile grid when the dock is short: wrapped
    # sharding texts need more height at narrow widths than the dock first reserved.
    DockSpec("Tensor", "dock_tensor", RIGHT, TensorInspector, width=420, height=620, scrolls=True),
    DockSpec("Source", "dock_source", RIGHT, SourceView, below="dock_tensor", height=220),
    DockSpec("Messages", "dock_messages", BOTTOM, MessagesView, height=120),
    # Split from the messages before they are tabbed: splitting a tabbed dock would take
    # it out of its tab group.
    DockSpec(
        "Timeline",
        "dock_timeline",
        BOTTOM,
        TimelinePanel,
        below="dock_messages",
        height=150,
        scrolls=True,
    ),
    DockSpec("History", "dock_history", LEFT, history_view, below="dock_palette"),
    DockSpec(
        "Program", "dock_program", LEFT, ProgramOutline, tabify_with="dock_history", scrolls=True
    ),
    # The debugger's docks share the messages' place.
    DockSpec("Conflicts", "dock_conflicts", BOTTOM, ConflictsView, tabify_with="dock_messages"),
    DockSpec(
        "Collectives", "dock_collectives", BOTTOM, CollectivesView, tabify_with="dock_conflicts"
    ),
    DockSpec("GSPMD vs Shardy", "dock_gspmd", BOTTOM, GspmdView, tabify_with="dock_collectives"),
    DockSpec("Run", "dock_run", BOTTOM, RunPanel, tabify_with="dock_gspmd"),
    DockSpec(
        "Provenance", "dock_provenance", RIGHT, ProvenanceView, below="dock_source", height=200
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

    def widget(self, name: str, kind: type[W]) -> W:
        """The widget dock ``name`` shows (inside its scroll area, if it has one)."""
        widget = self._widgets[name]
        if not isinstance(widget, kind):
            raise TypeError(f"dock {name} shows a {type(widget).__name__}, not a {kind.__name__}")
        return widget

    def toggle_actions(self) -> list[QAction]:
        """The show/hide actions of the docks listed in the View menu, in registry order."""
        return [self.by_name[s.name].toggleViewAction() for s in self.specs if s.in_view_menu]


def build_docks(window: QMainWindow, specs: Sequence[DockSpec] = DOCKS) -> Docks:
    """Create every dock of ``specs`` on ``window`` and arrange the default layout."""
    docks = Docks(specs)
    for spec in specs:
        widget = spec.factory()
        dock = QDockWidget(spec.title, window)
        dock.setObjectName(spec.name)
        dock.setWidget(_scrolling(widget) if spec.scrolls else widget)
        window.addDockWidget(spec.area, dock)
        docks.add(spec, dock, widget)
    for spec in specs:
        dock = docks[spec.name]
        if spec.below is not None:
            window.splitDockWidget(docks[spec.below], dock, Qt.Orientation.Vertical)
        if spec.tabify_with is not None:
            window.tabifyDockWidget(docks[spec.tabify_with], dock)
            dock.raise_()
    _apply_sizes(window, docks)
    # With two tab groups Qt forgets sizes given before the window is first shown (the
    # tensor dock came out 163 px wide instead of 420): they are given again then, unless
    # the window restored a saved layout meanwhile (``Docks.restored``).
    window.installEventFilter(_SizesOnFirstShow(window, docks))
    return docks


# The share of the window's height a dock given room (``make_room``) gets, and below
# which share it is given it.
ROOM = 0.5
ROOM_BELOW = 0.45


def make_room(window: QMainWindow, dock: QDockWidget) -> None:
    """Show ``dock`` on top of its tab group and, where it is docked and shorter than
    ``ROOM_BELOW`` of the window, give it ``ROOM`` of the window's height (the docks
    beside it in its area give up theirs)."""
    dock.show()
    dock.raise_()
    if dock.isFloating():
        return
    height = window.height()
    if dock.height() < ROOM_BELOW * height:
        window.resizeDocks([dock], [int(ROOM * height)], Qt.Orientation.Vertical)


def _apply_sizes(window: QMainWindow, docks: Docks) -> None:
    specs = docks.specs
    widths = {s.name: s.width for s in specs if s.width is not None}
    heights = {s.name: s.height for s in specs if s.height is not None}
    for sizes, orientation in (
        (widths, Qt.Orientation.Horizontal),
        (heights, Qt.Orientation.Vertical),
    ):
        window.resizeDocks([docks[n] for n in sizes], list(sizes.values()), orientation)


def _apply_bottom_heights(window: QMainWindow, docks: Docks) -> None:
    """The heights of the bottom docks that have no tabs again, once the window is laid
    out: the columns above them ask for more height than a short window has, and given
    with theirs the timeline kept only its smallest height (84 px instead of 150 in a
    1400x900 window). Resizing a dock of a tab group as well undid it."""
    for spec in docks.specs:
        dock = docks[spec.name]
        if spec.area == BOTTOM and spec.height is not None and not window.tabifiedDockWidgets(dock):
            window.resizeDocks([dock], [spec.height], Qt.Orientation.Vertical)


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
            _apply_bottom_heights(self.main, self.docks)
        self.deleteLater()


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
