"""Side by side: the graph area split into two synchronised panes (View ▸ Side by side).

The left pane is the window's own graph (everything it does, edits included, works as
before); the right pane is a second graph view on the same program. Each pane's header
chooses what it shows (``viewers.graph.pane.MODES``): now, before the last edit (the
final shardings of the propagation before it, kept by the timeline), Shardy's final
shardings, or GSPMD's (``GspmdComparer``'s comparison, run in the background on demand).
Nothing here propagates again: every mode reads results the window already holds.

The panes scroll, zoom, select and fold together (``ViewSync``; they share one
``Navigation`` and the layouts), and the values on which they differ are marked in both
(``PaneMarks``). Each pane draws the marks the single graph draws for the shardings it
shows: conflict outlines, collective tags, GSPMD and warning marks, and the timeline's
step and changed rings (the right pane has its own ``GraphMarkers`` following the
window's, and its own ``StepOverlay`` following the window's playback). The collective
tags are those of the partitioner whose shardings the pane shows: a GSPMD pane's are
GSPMD's compiled collectives (the comparison's compile), a Shardy pane's are Shardy's
prediction where the session's compile is the framework's own (a torch_xla capture's,
with GSPMD). While a pane shows GSPMD's shardings the panes' difference marks say what
GSPMD shards otherwise, and the GSPMD toggle's marks are not drawn over them. Each pane
has a Legend button in its corner (the left one is the window's). Drops of mesh axes on
the right pane go through the same undoable commands as drops on the left one. Turning
side by side off puts the single graph back as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.partitioners import own_compile, partitioners
from shardscope.viewers.graph.graph_panel import GraphPanel
from shardscope.viewers.graph.legend import LegendButton
from shardscope.viewers.graph.markers import CURRENT, GraphMarkers, MarkedResult
from shardscope.viewers.graph.pane import (
    Dims,
    PaneHeader,
    PaneMarks,
    PaneResult,
    as_dims,
    differing,
    dims_override,
    mode_names,
)
from shardscope.viewers.graph.step_overlay import StepOverlay
from shardscope.viewers.graph.sync import ViewSync

if TYPE_CHECKING:
    from shardscope.app.window.folding import FoldProgress
    from shardscope.app.window.gspmd_compare import GspmdComparer
    from shardscope.app.window.timeline import TimelineController
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.playback import Playback, PlaybackEvent
    from shardscope.viewers.common.messages import MessagesView

RIGHT_TIP = (
    "A second view of the same program. It never changes the program by itself: a mesh "
    "axis dropped here is the same undoable edit as one dropped on the left pane."
)

# why a pane showing the shardings before the last edit has no marks
HIDDEN_MARKS = (
    "Conflict marks, collective tags and the timeline's rings are hidden here: they "
    "belong to the current propagation, and the one before the last edit is not kept."
)
# what the marks of a pane showing GSPMD's shardings are (``{whose}``: whose compile,
# where the program's framework partitions with GSPMD itself)
GSPMD_MARKS = (
    "Collective tags here are GSPMD's compiled collectives{whose}: the compile whose "
    "shardings this pane shows. Shardy's conflict marks and the timeline's rings are "
    "hidden."
)
# what the collective tags of a pane showing Shardy's shardings are, where the session's
# compile is the framework's own
PREDICTED_MARKS = (
    "Collective tags here are Shardy's prediction: the compiled collectives are "
    "{framework}'s own compile, with {partitioner}, tagged in a pane showing now."
)
BEFORE_MARKS = (
    "Conflict marks and collective tags here are those of the propagation before the "
    "last edit; the timeline's rings (the current propagation's steps and changes) are "
    "hidden."
)


class Window(Protocol):
    """The parts of the main window side by side works with."""

    session: Session
    graph_panel: GraphPanel
    theme: str
    gspmd: GspmdComparer
    markers: GraphMarkers
    timeline: TimelineController
    folding: FoldProgress
    messages: MessagesView

    def takeCentralWidget(self) -> QWidget: ...
    def setCentralWidget(self, widget: QWidget) -> None: ...
    def on_spec_dropped(self, value_id: int, dim: int, axis: str | None) -> bool: ...

    def on_axis_appended(self, value_id: int, dim: int, axis: str) -> bool: ...


class Pane(QWidget):
    """A pane: a header over a graph panel."""

    def __init__(self, title: str, panel: GraphPanel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header = PaneHeader(title, self)
        self.panel = panel
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(panel, 1)

    @property
    def view(self):
        return self.panel.view


class SideBySide(QObject):
    """See the module docstring."""

    def __init__(self, window: Window) -> None:
        super().__init__(window)  # type: ignore[arg-type]
        self.window = window
        self.session = window.session
        self.on = False
        self.splitter: QSplitter | None = None
        self.left: Pane | None = None
        self.right: Pane | None = None
        self.sync: ViewSync | None = None
        self.marks: list[PaneMarks] = []
        self.found: dict[int, tuple[Dims, Dims]] = {}  # values the panes differ on
        # the right pane's conflict and collective marks and timeline rings
        self.right_markers: GraphMarkers | None = None
        self.right_overlay: StepOverlay | None = None
        self.right_legend: LegendButton | None = None  # the left pane has the window's
        # the marks last made for a pane's mode, with what they were made of
        self._made: dict[str, tuple[object, PaneResult]] = {}
        self._playback: Playback | None = None  # the window's, followed by the right pane

    # -- on and off ---------------------------------------------------------------------
    def set_on(self, on: bool, modes: tuple[str, str] | None = None) -> None:
        """Split the graph area in two panes (``on``) or put the single graph back;
        ``modes`` gives the left and right panes' modes (else they are chosen here)."""
        on = bool(on)
        if on == self.on:
            if on and modes is not None:
                self.set_modes(modes)
            return
        if on:
            self._open(modes)
        else:
            self._close()
        self.on = on
        action = getattr(self.window, "menu_actions", {}).get("side_by_side")
        if action is not None and action.isChecked() != on:
            action.setChecked(on)

    def set_modes(self, modes: tuple[str, str]) -> None:
        """Show ``modes`` in the left and right panes."""
        if self.left is None or self.right is None:
            return
        for pane, mode in zip((self.left, self.right), modes, strict=True):
            pane.header.set_mode(mode)
        self._refresh()

    def _open(self, modes: tuple[str, str] | None = None) -> None:
        window = self.window
        main = window.graph_panel
        width = main.width()  # the graph area's, which the panes share evenly
        window.takeCentralWidget()
        # opens at the outermost frame, folded (quick), then follows the left pane in
        # slices like any large drawing
        second = GraphPanel(self.session, restore=False, navigation=main.view.navigation)
        second.view.set_style_theme(window.theme)
        second.view.share_layouts(main.view)
        self.left = Pane("Left", main)
        self.right = Pane("Right", second)
        self.right.setToolTip(RIGHT_TIP)
        self.right.header.title.setToolTip(RIGHT_TIP)
        splitter = QSplitter(Qt.Orientation.Horizontal, window)
        splitter.setObjectName("sideBySide")
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.left)
        splitter.addWidget(self.right)
        self.splitter = splitter
        window.setCentralWidget(splitter)
        for widget in (splitter, self.left, self.right, main, second):
            widget.show()  # reparented widgets stay hidden until shown
        splitter.setSizes([width // 2, width - width // 2])
        window.folding.watch(second.view)
        second.view.specDropped.connect(window.on_spec_dropped)
        second.view.axisAppended.connect(window.on_axis_appended)
        second.view.dropRejected.connect(lambda msg: window.messages.add(msg, "warning"))
        self.marks = [PaneMarks(main.view), PaneMarks(second.view)]
        self.right_markers = GraphMarkers(second.view)
        self.right_markers.follow(window.markers)
        self.right_overlay = StepOverlay(second.view)
        self.right_legend = LegendButton(second.view)
        self.sync = ViewSync(main.view, second.view, self)
        ev = self.session.events
        links = self._links = Connections()
        links.connect(ev.program, self._on_program)
        for shown in (ev.propagation, ev.specs, ev.mesh, window.gspmd.compared):
            links.connect(shown, self._refresh)
        # whose compile the session's collectives are decides a Shardy pane's tags
        links.connect(ev.compiled, self._refresh_marks)
        before = window.timeline.before_edit is not None
        if modes is None:
            modes = ("before", "now") if before else ("shardy", "gspmd")
        for pane, mode in zip((self.left, self.right), modes, strict=True):
            pane.header.set_mode(mode)
            pane.header.modeChanged.connect(self._refresh)
        self._name_modes()
        self._refresh()
        self.sync.follow(main.view, second.view)

    def _close(self) -> None:
        window = self.window
        self._links.close()
        window.gspmd.want(False)
        self.sync.close()
        self.sync = None
        for marks in self.marks:
            marks.close()
        self.marks = []
        self._follow_playback(None)
        self.right_markers.close()
        self.right_overlay.close()
        self.right_markers = self.right_overlay = self.right_legend = None
        self._made = {}
        main = window.graph_panel
        main.view.graph_scene.set_mode_override(None)
        window.markers.show_result(CURRENT)
        window.markers.hide_gspmd(False)
        window.timeline.overlay.set_marks_shown(True)
        second = self.right.panel
        window.folding.unwatch(second.view)
        second.view.close()
        splitter = window.takeCentralWidget()
        main.setParent(None)
        window.setCentralWidget(main)
        main.show()
        splitter.deleteLater()
        self.splitter = self.left = self.right = None

    def _on_program(self, _program) -> None:
        # each view opened the program on its own (the left one where a saved session
        # left it): the right one shows what the left one does
        if self.sync is not None and self.session.program is not None:
            self.sync.follow(self.left.view, self.right.view)
        self._name_modes()
        self._refresh()

    def _name_modes(self) -> None:
        """The panes name Shardy's and GSPMD's modes as the program's partitioners."""
        names = partitioners(self.session.program)
        for pane in (self.left, self.right):
            if pane is not None:
                pane.header.set_names(names)
        for marks in self.marks:
            marks.names = names

    def close(self) -> None:
        """The window is closing."""
        if self.on:
            self.set_on(False)

    def restyle(self, theme: str) -> None:
        if self.right is not None:
            self.right.view.set_style_theme(theme)
            self._refresh()

    # -- what each pane shows -----------------------------------------------------------
    @property
    def modes(self) -> tuple[str, str]:
        """The left and right panes' modes (``now``, ``before``, ``shardy``, ``gspmd``)."""
        if self.left is None or self.right is None:
            return ("now", "now")
        return (self.left.header.mode, self.right.header.mode)

    def dims(self, mode: str) -> tuple[dict[int, Dims] | None, str]:
        """The shardings ``mode`` shows, per value, and a note when it cannot show them
        (None: the pane shows the session as it is)."""
        graph = self.session.graph
        if graph is None:
            return None, ""
        result = self.session.propagation
        if mode == "now":
            out = {}
            for value in graph.values:
                spec = self.session.display_spec(value.id)
                if spec is not None:
                    out[value.id] = as_dims(d.axes for d in spec.dims)
            return out, ""
        if mode == "before":
            before = self.window.timeline.before_edit
            if before is None:
                if result is None and self.session.program is not None:
                    return None, "waiting for propagation: showing now"
                return None, "no edit since the last propagation: showing now"
            return {vid: as_dims(d) for vid, d in before.items()}, ""
        if result is None:
            return None, "waiting for propagation: showing now"
        shardy = {v.id: as_dims(v.spec) for v in result.values}
        if mode == "shardy":
            return shardy, ""
        gspmd = self.window.gspmd
        if gspmd.compared_for is not result or gspmd.differences is None:
            if gspmd.comparing:
                return None, "compiling with GSPMD…"
            if gspmd.failed_for is result and gspmd.failure:
                # said here, where the pane waited for it
                return None, f"the GSPMD comparison failed: {gspmd.failure}; showing now"
            return None, "GSPMD comparison unavailable: showing now"
        for d in gspmd.differences:
            if d.gspmd is not None:
                shardy[d.id] = as_dims(d.gspmd)
        return shardy, ""

    def _refresh(self, *_args) -> None:
        if self.left is None or self.right is None:
            return
        modes = self.modes
        self.window.gspmd.want("gspmd" in modes)
        shown: list[dict[int, Dims] | None] = []
        for pane, mode in zip((self.left, self.right), modes, strict=True):
            dims, note = self.dims(mode)
            pane.header.set_note(note)
            override = dims_override(dims) if dims is not None and mode != "now" else None
            pane.view.graph_scene.set_mode_override(override)
            shown.append(dims)
        self._follow_playback(self.window.timeline.playback)
        self.right_overlay.set_changed(self.window.timeline.overlay.changed_values)
        self._show_marks(self.left, modes[0], shown[0] is not None)
        self._show_marks(self.right, modes[1], shown[1] is not None)
        left, right = shown
        gspmd = "gspmd" in modes
        self.found = {}
        if left is None or right is None or modes[0] == modes[1]:
            self.marks[0].set_differences({}, modes[1])
            self.marks[1].set_differences({}, modes[0])
            return
        found = self.found = differing(left, right)
        self.marks[0].set_differences(found, modes[1], gspmd=gspmd)
        self.marks[1].set_differences(
            {v: (b, a) for v, (a, b) in found.items()}, modes[0], gspmd=gspmd
        )

    def _refresh_marks(self, *_args) -> None:
        if self.left is None or self.right is None:
            return
        modes = self.modes
        for pane, mode in zip((self.left, self.right), modes, strict=True):
            self._show_marks(pane, mode, self.dims(mode)[0] is not None)

    def _show_marks(self, pane: Pane, mode: str, overridden: bool) -> None:
        """Each pane carries the marks of the shardings it shows (conflicts, collectives,
        the timeline's rings): the current propagation's, the one before the last edit,
        GSPMD's compiled collectives, Shardy's prediction, or none (and the header's
        tooltip says which). Where a pane shows GSPMD's shardings, the difference marks
        of the panes say what GSPMD shards otherwise: the GSPMD toggle's marks are not
        drawn over them."""
        if pane is self.left:
            markers = self.window.markers
            overlay = self.window.timeline.overlay
        else:
            markers, overlay = self.right_markers, self.right_overlay
        markers.hide_gspmd("gspmd" in self.modes)
        result, rings, tip = self._marked(mode) if overridden else (CURRENT, True, "")
        markers.show_result(result)
        overlay.set_marks_shown(rings)
        pane.header.setToolTip(tip)

    def _marked(self, mode: str) -> tuple[MarkedResult | None | str, bool, str]:
        """What a pane showing ``mode``'s shardings marks: its conflicts and collectives,
        whether the timeline's rings, and the header's tooltip saying so."""
        program = self.session.program
        names = partitioners(program)
        analysis = self.session.analysis
        if mode == "before":
            before = self.window.timeline.before_result
            return before, False, BEFORE_MARKS if before is not None else HIDDEN_MARKS
        comparison = self.window.gspmd.comparison
        if mode == "gspmd" and comparison is not None:
            made = self._made_for(
                mode,
                comparison,
                lambda: PaneResult(program, compiled_collectives=tuple(comparison.collectives)),
            )
            whose = (
                f" (shardscope's recompile of {names.framework}'s module)" if names.foreign else ""
            )
            return made, False, GSPMD_MARKS.format(whose=whose)
        by = None if analysis is None else analysis.compiled_by
        if mode == "shardy" and analysis is not None and own_compile(by):
            made = self._made_for(
                mode,
                analysis.propagation,
                lambda: PaneResult(program, tuple(analysis.conflicts), tuple(analysis.collectives)),
            )
            return made, True, PREDICTED_MARKS.format(framework=by, partitioner=names.own)
        return CURRENT, True, ""

    def _made_for(self, mode: str, source: object, make) -> PaneResult:
        """The marks of ``mode`` made of ``source``: the ones made before for it (the
        markers draw again only for new ones)."""
        made = self._made.get(mode)
        if made is None or made[0] is not source:
            made = self._made[mode] = (source, make())
        return made[1]

    def _follow_playback(self, playback: Playback | None) -> None:
        """The right pane shows the step the window's playback shows (its badges at the
        step, the step's flows and ring), as the left pane does."""
        if playback is self._playback:
            return
        old, self._playback = self._playback, playback
        overlay = self.right_overlay
        if old is not None:
            old.unlisten(self._on_playback)
            if overlay is not None:
                overlay.show_steps([])
                overlay.set_spec_override(None, None if old.active else ())
        if playback is not None:
            playback.listen(self._on_playback)
            if playback.active and overlay is not None:
                self._show_step(playback, None)

    def _on_playback(self, event: PlaybackEvent) -> None:
        if event.kind in ("position", "filter") and self._playback is not None:
            self._show_step(self._playback, event.changed)

    def _show_step(self, playback: Playback, changed) -> None:
        overlay = self.right_overlay
        if overlay is None:
            return
        # the window's scene holds the step's override (set by the timeline first)
        override = self.window.graph_panel.view.graph_scene.spec_override
        overlay.set_spec_override(override if playback.active else None, changed)
        overlay.show_steps(playback.steps() if playback.active else [])

    def describe(self) -> str:
        left, right = self.modes
        names = mode_names(partitioners(self.session.program))
        return f"{names[left]} | {names[right]}"
