"""The main window: the program graph in the centre, docks around it, every edit undoable.

The window owns one ``Session`` (the document) and wires the parts around it: the docks
(``docks``), the menus (``menus``), opening and saving (``files``), when propagation
runs (``propagation``), the pricing of its analysis (``pricing``), the GSPMD comparison
(``gspmd_compare``) and the rows chosen in the debugger's docks (``reveal``). It turns the viewers' intents (an axis dropped on a tensor
dimension, a mesh edited, a context-menu choice) into backend commands pushed through
``UndoBridge``, and keeps the inspector, outline and source view on the selection.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSize, QTimer
from PySide6.QtGui import QCloseEvent, QUndoStack
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QUndoView

from shardscope.app.window.animation import GifExport
from shardscope.app.window.display import remote_display
from shardscope.app.window.docks import DockContext, build_docks, make_room, reset_layout
from shardscope.app.window.files import FileHandler
from shardscope.app.window.folding import FoldProgress
from shardscope.app.window.gspmd_compare import GspmdComparer
from shardscope.app.window.help import WindowHelp
from shardscope.app.window.menus import build_menus
from shardscope.app.window.panes import SideBySide
from shardscope.app.window.pricing import Pricer
from shardscope.app.window.propagation import PropagationScheduler
from shardscope.app.window.reveal import Revealer
from shardscope.app.window.run import DeviceRuns
from shardscope.app.window.settings import Settings
from shardscope.app.window.tasks import TaskRunner
from shardscope.app.window.theme import apply_theme
from shardscope.app.window.timeline import TimelineController
from shardscope.app.window.undo import UndoBridge
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.registry import cancel_workers
from shardscope.backend.program.graph import Value
from shardscope.backend.program.load import DEFAULT_TIMEOUT, Program
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.session.document import Session
from shardscope.backend.session.edits import (
    ClearDim,
    Command,
    CommandStack,
    SetDcn,
    SetDimOpen,
    SetDimPriority,
    SetDimSpec,
    SetHosts,
    SetMesh,
)
from shardscope.backend.session.persistence import new_recovery_path
from shardscope.backend.session.selection import Selection
from shardscope.backend.sharding.mesh import Mesh
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.messages import ErrorBanner, MessagesView
from shardscope.viewers.debugger.collectives_view import CollectivesView
from shardscope.viewers.debugger.conflicts import ConflictsView
from shardscope.viewers.graph.graph_panel import GraphPanel
from shardscope.viewers.graph.legend import LegendButton
from shardscope.viewers.graph.markers import GraphMarkers
from shardscope.viewers.mesh.editor import MeshEditor
from shardscope.viewers.mesh.palette import SpecPalette
from shardscope.viewers.program.outline import ProgramOutline
from shardscope.viewers.program.source_view import SourceView
from shardscope.viewers.run.run_panel import RunPanel
from shardscope.viewers.tensor.inspector import TensorInspector
from shardscope.viewers.timeline.provenance_view import ProvenanceView
from shardscope.viewers.timeline.timeline_panel import TimelinePanel

# The docks showing Shardy's propagation, by their titles, and what they are called for a
# program another partitioner (GSPMD) compiles.
SHARDY_DOCKS = {
    "dock_timeline": "Timeline",
    "dock_conflicts": "Conflicts",
    "dock_provenance": "Provenance",
}
SHARDY_VIEW = "Shardy's view of the same annotations"


class MainWindow(QMainWindow):
    """shardscope's window; see the module docstring."""

    def __init__(
        self,
        *,
        settings: Settings | None = None,
        recovery: Path | str | None = None,
        auto_propagate: bool | None = None,
        load_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.session = Session(recovery=recovery if recovery is not None else new_recovery_path())
        self.qundo = QUndoStack(self)
        self.undo = UndoBridge(CommandStack(self.session), self.qundo)
        self.runner = TaskRunner(self)
        self.selection = Selection()
        # the session's and the selection's signals the window listens to, undone on close
        self._links = Connections()
        self.theme = self.settings.theme()

        self.setObjectName("MainWindow")
        self.setDockNestingEnabled(True)
        self.graph_panel = GraphPanel(self.session, self)
        self.graph = self.graph_panel.view
        self.setCentralWidget(self.graph_panel)
        context = DockContext(
            self.session, self.selection, propagating=lambda: self.propagation.auto
        )
        self.docks = build_docks(self, context)
        self.mesh_editor = self.docks.widget("dock_mesh", MeshEditor)
        self.palette_widget = self.docks.widget("dock_palette", SpecPalette)
        self.inspector = self.docks.widget("dock_tensor", TensorInspector)
        self.source_view = self.docks.widget("dock_source", SourceView)
        self.messages = self.docks.widget("dock_messages", MessagesView)
        # a failed open or run-again shows over the graph, Messages in front
        self.error_banner = ErrorBanner(self, self.messages)
        self._links.connect(self.session.events.program, lambda _p: self.error_banner.dismiss())
        self.outline = self.docks.widget("dock_program", ProgramOutline)
        self.docks.widget("dock_history", QUndoView).setStack(self.qundo)
        self.files = FileHandler(
            self,
            session=self.session,
            undo=self.undo,
            runner=self.runner,
            settings=self.settings,
            messages=self.messages,
            graph=self.graph,
            load_timeout=load_timeout,
        )
        self.propagation = PropagationScheduler(
            self.session,
            self.runner,
            self.settings,
            self.messages,
            self.statusBar(),
            auto=auto_propagate,
            parent=self,
        )
        # An edit, an undo or a redo is whole once the stack's index moves: its
        # propagation starts then, while the views still repaint what it changed.
        self.qundo.indexChanged.connect(lambda _index: self.propagation.flush())
        self._build_debugger()
        self.run = DeviceRuns(
            self.session,
            self.runner,
            self.docks.widget("dock_run", RunPanel),
            self.selection,
            self.messages,
            self.statusBar(),
            show_dock=lambda: self.docks.show("dock_run"),
            make_room=lambda: make_room(self, self.docks["dock_run"]),
            show_warnings=self.markers.set_warnings,
            reveal_op=self._outline_op,
            allow_code=lambda program: self.files.allow_session_code(program, "Run on devices"),
            parent=self,
        )
        self.timeline = TimelineController(
            self.session,
            self.graph,
            self.docks.widget("dock_timeline", TimelinePanel),
            self.docks.widget("dock_provenance", ProvenanceView),
            self._refresh_inspector_at_step,
            parent=self,
        )
        self.help = WindowHelp(self)
        remote = remote_display(os.environ)
        if remote:
            self.messages.add(
                f"the display is remote: {remote}; busy indicators show their text and "
                "Cancel button without the moving bar, whose frames would cross the network"
            )
        self.gif_export = GifExport(self)
        self.folding = FoldProgress(self, self.runner, self.messages)
        self.folding.watch(self.graph)
        self.panes = SideBySide(self)
        self.menu_actions = build_menus(self, self.qundo, self.docks.toggle_actions())
        self._connect()
        self.status = QLabel("")
        self.statusBar().addPermanentWidget(self.status)
        geometry, state = self.settings.window_state()
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1500, 950)
        if state is not None:
            self.docks.restored = self.restoreState(state)
        self.set_theme(self.theme)
        self.files.update_title()
        self.help.first_run()

    def _build_debugger(self) -> None:
        """The graph's marks and badge legend, and the work behind the debugger's docks
        (which follow the session themselves): the pricing of the analysis, the GSPMD
        comparison, and the revealing of the rows chosen in them."""
        self.markers = GraphMarkers(self.graph)
        # a failed compile: the dock that waited for it comes up, saying why
        self.propagation.compiler.compileFailed.connect(
            lambda _reason: self.docks.show("dock_collectives")
        )
        self.legend_button = LegendButton(self.graph)
        self.conflicts = self.docks.widget("dock_conflicts", ConflictsView)
        self.collectives = self.docks.widget("dock_collectives", CollectivesView)
        self.pricer = Pricer(self.session, self.settings, self.messages, self.collectives)
        self.gspmd = GspmdComparer(
            self.session, self.runner, self.docks, self.markers, self.messages, self.statusBar()
        )
        self.reveal = Revealer(self)

    def _connect(self) -> None:
        ev = self.session.events
        links = self._links
        links.connect(ev.program, self._on_program_change)
        links.connect(ev.mesh, self._on_mesh_change)
        links.connect(ev.specs, self._on_specs_change)
        links.connect(ev.propagation, self._on_propagation_change)
        links.connect(ev.final_specs, self._on_final_specs)
        self.graph.specDropped.connect(self.on_spec_dropped)
        self.graph.axisAppended.connect(self.on_axis_appended)
        self.graph.dropRejected.connect(lambda msg: self.messages.add(msg, "warning"))
        self.graph.valueSelected.connect(self.select_value)
        self.graph.opSelected.connect(self.select_op)
        self.outline.valueSelected.connect(self._outline_value)
        self.outline.opSelected.connect(self._outline_op)
        self.graph.viewStateChanged.connect(lambda state: self.session.update_view(**state))
        self.mesh_editor.meshEdited.connect(self.on_mesh_edited)
        self.mesh_editor.hostsEdited.connect(lambda count: self.on_hosts_edited(SetHosts(count)))
        self.mesh_editor.dcnEdited.connect(lambda a, f: self.on_hosts_edited(SetDcn(a, f)))
        self.mesh_editor.validationMessage.connect(
            lambda msg: msg and self.messages.add(msg, "warning")
        )
        self.inspector.specDropped.connect(self.on_spec_dropped)
        self.inspector.axisAppended.connect(self.on_axis_appended)
        self.inspector.specMenuAction.connect(self.on_spec_menu)
        # hovering a tile outlines the devices that hold it on the device views
        self.inspector.tile_grid.tileHovered.connect(self.selection.hover_devices)
        self._connect_timeline()

    def _connect_timeline(self) -> None:
        timeline = self.timeline
        timeline.panel.filterRejected.connect(lambda msg: self.messages.add(msg, "warning"))
        self.inspector.dimSelected.connect(timeline.select)
        timeline.provenance_view.valueClicked.connect(self._outline_value)
        timeline.provenance_view.conflictClicked.connect(self._show_conflict_op)
        timeline.stepShown.connect(self.conflicts.show_step)

    def _show_conflict_op(self, index: int) -> None:
        result = self.session.propagation
        if result is not None and 0 <= index < len(result.conflicts):
            self._outline_op(result.conflicts[index].op)

    def _refresh_inspector_at_step(self, changed: frozenset[int] | None) -> None:
        if changed is None or self.selected_value in changed:
            self._refresh_inspector()

    # -- entry points for launch and scripts ----------------------------------------------
    def open_program(self, source: str, state: dict | None = None) -> bool:
        """Load ``source`` off the GUI thread; the session changes only if it loads (False:
        the user cancelled at the unsaved-edits prompt)."""
        return self.files.open_program(source, state)

    def open_session(self, path: str | Path) -> bool:
        """Open a saved session file."""
        return self.files.open_session(path)

    def restore_state(self, state: dict) -> None:
        """Reopen a recovered (unsaved) session."""
        self.files.restore_state(state)

    # -- intents -> commands ------------------------------------------------------------
    def push(self, command: Command) -> bool:
        """Apply an edit; an invalid one is reported in the messages dock and changes nothing."""
        try:
            self.undo.push(command)
        except ShardscopeError as exc:
            self.messages.error(str(exc))
            return False
        self.statusBar().showMessage(command.label, 4000)
        return True

    def on_spec_dropped(self, value_id: int, dim: int, axis: str | None) -> bool:
        """An axis (or "replicated", None) dropped on a tensor dimension: it replaces the
        dimension's axes."""
        if axis is None:
            return self.push(ClearDim(value_id, dim))
        return self.push(SetDimSpec(value_id, dim, axis))

    def on_axis_appended(self, value_id: int, dim: int, axis: str) -> bool:
        """An axis dropped with Shift or Ctrl held: appended after the dimension's axes."""
        return self.push(SetDimSpec(value_id, dim, axis, append=True))

    def on_spec_menu(self, value_id: int, dim: int, action: str, arg: int | None) -> bool:
        """A dimension's context menu: ``open`` / ``closed``, ``priority`` (arg), ``clear``."""
        if action in ("open", "closed"):
            return self.push(SetDimOpen(value_id, dim, action == "open"))
        if action == "priority":
            return self.push(SetDimPriority(value_id, dim, arg))
        if action == "clear":
            return self.push(ClearDim(value_id, dim))
        return False

    def on_mesh_edited(self, mesh: Mesh) -> bool:
        """The mesh editor's new mesh, as one undoable edit (none if nothing changed)."""
        if mesh == self.session.mesh:
            return False
        command = SetMesh(mesh)
        if not self.push(command):
            return False
        if command.notice:
            self.messages.add(command.notice, "warning")
        return True

    def on_hosts_edited(self, command: SetHosts | SetDcn) -> bool:
        """The mesh editor's host count or hosts along an axis, as one undoable edit; a
        refused one is said below the mesh grid too, whose boxes show the layout again."""
        if self.push(command):
            return True
        self.mesh_editor.set_hosts(self.session.hosts)
        messages = self.messages.messages("error")
        self.mesh_editor.show_message(messages[-1] if messages else "")
        return False

    # -- model events -------------------------------------------------------------------
    def _on_program_change(self, program: Program | None) -> None:
        # the Program dock's table reads its spec column from the session: it gets the
        # new graph before anything below draws (a drawing lays the table out, and its
        # old rows are not the new program's values)
        self.outline.set_graph(program.graph if program else None, self.session.spec_text)
        self.files.update_title()
        self.source_view.reset(program.snippets if program and program.from_session else None)
        if program is None:
            return
        graph = program.graph
        # once every view has taken the new program (a view drawn before then would
        # draw from its model of the old one)
        QTimer.singleShot(0, lambda: self._show_program_start(program))
        gspmd = program.partitioner == "gspmd"
        kind = f" · {program.framework}, partitioned by GSPMD" if gspmd else ""
        self.status.setText(f"{len(graph.ops)} ops · {len(graph.values)} tensors{kind}")
        self._label_shardy_docks(gspmd)
        self.inspector.torch_xla = program.framework == "torch_xla"
        self.inspector.sharded_by = dict(program.sharded_by)
        self.selection.select_value(None)
        self.selection.select_op(None)
        self._show_inspector(None)
        self.propagation.schedule()
        if gspmd:
            # GSPMD partitions these programs: its final shardings are the faithful view
            # (left pane, the window's own graph), Shardy's beside them, the values where
            # they differ marked in both.
            self.panes.set_on(True, ("gspmd", "shardy"))

    def _show_program_start(self, program: Program) -> None:
        """The Source dock, before anything is selected, shows the program's file where
        its ops begin: the first selection then moves a highlight in place rather than
        filling an empty dock. Nothing changes if the program went or a line is shown."""
        if self.session.program is not program or self.source_view.path is not None:
            return
        located = [op for op in program.graph.ops if op.source_file and op.source_line]
        own = [op for op in located if op.source_file == program.path]
        first = (own or located or [None])[0]
        if first is not None:
            self.source_view.show_start(first.source_file, first.source_line)

    def _label_shardy_docks(self, gspmd: bool) -> None:
        """Name the docks that show Shardy's propagation as Shardy's view where another
        partitioner compiles the program."""
        for name, title in SHARDY_DOCKS.items():
            self.docks[name].setWindowTitle(f"{title} ({SHARDY_VIEW})" if gspmd else title)

    def _on_mesh_change(self, mesh: Mesh | None) -> None:
        # the mesh editor and the palette follow the session themselves
        self._refresh_inspector()
        self.propagation.schedule()

    def _on_specs_change(self, ids: tuple[int, ...]) -> None:
        self.outline.specs_changed()
        if self.selected_value in ids:
            self._refresh_inspector()
        self.propagation.schedule()

    def _on_propagation_change(self, result: PropagationResult | None) -> None:
        self.outline.specs_changed()
        self._refresh_inspector()

    def _on_final_specs(self) -> None:
        self.outline.specs_changed()
        self._refresh_inspector()

    # -- selection ------------------------------------------------------------------------
    @property
    def selected_value(self) -> int | None:
        """The tensor the inspector shows (the selection's value)."""
        return self.selection.value

    def select_value(self, value_id: int) -> None:
        """Show a tensor in the inspector and its producer's source line (an argument's:
        its parameter's line)."""
        self.selection.select_value(value_id)
        self.markers.set_inspected(self.selected_value)
        self._refresh_inspector()
        self.timeline.select(self.selected_value)
        graph = self.session.graph
        value = graph.values[value_id]
        if value.producer is not None:
            self.select_op(value.producer)
        else:
            # an argument: its own line in the signature, never the last op's
            program = self.session.program
            called = None if value.function == graph.main else value.function
            site = program.def_site if program is not None else None
            path, line = site or (program.path if program is not None else None, None)
            self.source_view.show_argument(path, value.display_name, called, line)

    def _outline_value(self, value_id: int) -> None:
        self.graph.select_value(value_id, center=True)
        self.select_value(value_id)

    def _outline_op(self, op_id: int) -> None:
        self.graph.select_op(op_id, center=True)
        self.select_op(op_id)

    def select_op(self, op_id: int) -> None:
        """Show an op's source line."""
        self.selection.select_op(op_id)
        op = self.session.graph.ops[op_id]
        self.source_view.show_location(op.source_file, op.source_line, op.name)

    def _refresh_inspector(self) -> None:
        vid = self.selected_value
        graph = self.session.graph
        self._show_inspector(graph.values[vid] if graph is not None and vid is not None else None)

    def _show_inspector(self, value: Value | None) -> None:
        spec = self.session.display_spec(value.id) if value is not None else None
        tiles = self.session.laid_out_spec(value.id) if value is not None else None
        at_step = self.timeline.spec_at(value.id) if value is not None else None
        if at_step is not None:
            spec = tiles = at_step
        try:
            self.inspector.set_value(value, self.session.mesh, spec, tiles=tiles)
        except ShardscopeError as exc:
            self.messages.error(str(exc))

    # -- view ---------------------------------------------------------------------------
    def focus_find(self) -> None:
        self.graph_panel.find_box.setFocus()
        self.graph_panel.find_box.selectAll()

    def reset_layout(self) -> None:
        """View > Reset layout: every dock back in its default place and size, and the
        saved layout forgotten."""
        reset_layout(self, self.docks)
        self.settings.forget_dock_state()
        self.statusBar().showMessage("the docks are back in the default layout", 4000)

    def toggle_theme(self) -> None:
        self.set_theme("light" if self.theme == "dark" else "dark")

    def set_theme(self, name: str) -> None:
        """Switch the application to theme ``name`` and remember it."""
        app = QApplication.instance()
        self.theme = apply_theme(app, name)
        self.settings.set_theme(self.theme)
        self.graph.set_style_theme(self.theme)
        self.panes.restyle(self.theme)
        self.messages.restyle()

    def sizeHint(self) -> QSize:
        return QSize(1500, 950)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.files.confirm_unsaved("quitting"):
            event.ignore()
            return
        self.propagation.stop()
        self.settings.save_window_state(self.saveGeometry(), self.saveState())
        self.settings.sync()
        busy = self.run.running or self.run.checking
        if self.files.loading is not None or self.gspmd.comparing or busy:
            # The load may be waiting on a program that hangs, for its whole time limit;
            # a GSPMD compile, a run or a reshard check may take minutes.
            cancel_workers()
        self.folding.cancel()
        self.panes.close()
        self.runner.wait(10_000)
        for part in (self.gspmd, self.reveal, self.pricer, self.markers, self.run, self.timeline):
            part.close()
        self.graph.close()
        self._links.close()
        for dock in (self.mesh_editor, self.palette_widget, self.run.panel, self.conflicts):
            dock.detach()
        self.collectives.detach()
        if os.environ.get("SHARDSCOPE_KEEP_RECOVERY") != "1":
            self.session.discard_recovery()
        super().closeEvent(event)
