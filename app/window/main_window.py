"""The main window: the program graph in the centre, docks around it, every edit undoable.

The window owns one ``Session`` (the document) and turns the viewers' intents (an axis
dropped on a tensor dimension, a mesh edited, a context-menu choice) into backend
commands pushed through ``shardscope.app.window.undo.UndoBridge``. Loading and propagation run in the
thread pool (``shardscope.app.window.tasks``); their errors go to the messages dock and leave the
session as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QFrame,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QUndoView,
    QWidget,
)

from shardscope.app.window.settings import Settings
from shardscope.app.window.tasks import TaskRunner, load_task, propagate_task, propagation_available
from shardscope.app.window.theme import apply_theme
from shardscope.app.window.undo import UndoBridge
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import DEFAULT_TIMEOUT
from shardscope.backend.session.document import Session
from shardscope.backend.session.edits import (
    ClearDim,
    Command,
    CommandStack,
    SetDimOpen,
    SetDimPriority,
    SetDimSpec,
    SetMesh,
)
from shardscope.backend.session.persistence import recovery_path
from shardscope.viewers.common.messages import MessagesView
from shardscope.viewers.graph.panel import GraphPanel, export_view
from shardscope.viewers.mesh.editor import MeshEditor
from shardscope.viewers.mesh.palette import SpecPalette
from shardscope.viewers.program.outline import ProgramOutline
from shardscope.viewers.program.source_view import SourceView

try:
    from shardscope.viewers.tensor.inspector import TensorInspector
except ImportError:  # the inspector is optional: a placeholder keeps the dock
    TensorInspector = None

PROPAGATE_DELAY_MS = 150


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
        self.load_timeout = load_timeout
        self.session = Session(recovery=recovery if recovery is not None else recovery_path())
        self.qundo = QUndoStack(self)
        self.undo = UndoBridge(CommandStack(self.session), self.qundo)
        self.runner = TaskRunner(self)
        self.session_path: Path | None = None
        self.selected_value: int | None = None
        self.loading: str | None = None
        self.propagations = 0
        self._propagate_generation = 0
        self.theme = self.settings.theme()
        self.can_propagate = propagation_available()
        self.auto_propagate = (
            self.settings.auto_propagate() if auto_propagate is None else auto_propagate
        ) and self.can_propagate
        self._propagate_timer = QTimer(self)
        self._propagate_timer.setSingleShot(True)
        self._propagate_timer.setInterval(PROPAGATE_DELAY_MS)
        self._propagate_timer.timeout.connect(self.propagate_now)

        self.setObjectName("MainWindow")
        self.setDockNestingEnabled(True)
        self.graph_panel = GraphPanel(self.session, self)
        self.graph = self.graph_panel.view
        self.setCentralWidget(self.graph_panel)
        self._build_docks()
        self._build_actions()
        self._connect()
        self.status = QLabel("")
        self.statusBar().addPermanentWidget(self.status)
        geometry, state = self.settings.window_state()
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1500, 950)
        if state is not None:
            self.restoreState(state)
        self.set_theme(self.theme)
        self._update_title()

    # -- construction -------------------------------------------------------------------
    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        right = Qt.DockWidgetArea.RightDockWidgetArea
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        self.mesh_editor = MeshEditor()
        self.palette_widget = SpecPalette()
        if TensorInspector is not None:
            self.inspector = TensorInspector()
        else:
            self.inspector = QLabel("Select a tensor to inspect it")
            self.inspector.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.source_view = SourceView()
        self.messages = MessagesView()
        self.history = QUndoView(self.qundo)
        self.history.setEmptyLabel("<loaded>")
        self.outline = ProgramOutline()
        self.mesh_dock = self._dock("Mesh", "dock_mesh", self.mesh_editor, left)
        self.palette_dock = self._dock("Spec palette", "dock_palette", self.palette_widget, left)
        self.history_dock = self._dock("History", "dock_history", self.history, left)
        self.outline_dock = self._dock("Program", "dock_program", self.outline, left)
        # Scrolls rather than squeezing the tile grid when the dock is short: wrapped
        # sharding texts need more height at narrow widths than the dock first reserved.
        inspector_scroll = QScrollArea()
        inspector_scroll.setWidget(self.inspector)
        inspector_scroll.setWidgetResizable(True)
        inspector_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inspector_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.inspector_dock = self._dock("Tensor", "dock_tensor", inspector_scroll, right)
        self.source_dock = self._dock("Source", "dock_source", self.source_view, right)
        self.messages_dock = self._dock("Messages", "dock_messages", self.messages, bottom)
        self.splitDockWidget(self.mesh_dock, self.palette_dock, Qt.Orientation.Vertical)
        self.splitDockWidget(self.palette_dock, self.history_dock, Qt.Orientation.Vertical)
        self.tabifyDockWidget(self.history_dock, self.outline_dock)
        self.outline_dock.raise_()
        self.splitDockWidget(self.inspector_dock, self.source_dock, Qt.Orientation.Vertical)
        self.resizeDocks(
            [self.mesh_dock, self.inspector_dock], [300, 420], Qt.Orientation.Horizontal
        )
        self.resizeDocks([self.messages_dock], [120], Qt.Orientation.Vertical)
        self.resizeDocks(
            [self.inspector_dock, self.source_dock], [620, 220], Qt.Orientation.Vertical
        )

    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            if isinstance(shortcut, list):
                act.setShortcuts(shortcut)
            else:
                act.setShortcut(shortcut)
        if tip:
            act.setStatusTip(tip)
        act.triggered.connect(slot)
        menu.addAction(act)
        self.addAction(act)
        return act

    def _build_actions(self) -> None:
        bar = self.menuBar()
        K = QKeySequence
        file = bar.addMenu("&File")
        self._action(file, "&Open program…", self.ask_open_program, K.StandardKey.Open)
        self._action(file, "Open &example…", self.ask_open_example, K("Ctrl+Shift+E"))
        self._action(file, "Open &session…", self.ask_open_session, K("Ctrl+Shift+O"))
        self.recent_menu = file.addMenu("Open &recent")
        self._update_recent_menu()
        file.addSeparator()
        self._action(file, "&Save session", self.save_session, K.StandardKey.Save)
        self._action(file, "Save session &as…", self.ask_save_session_as, K("Ctrl+Shift+S"))
        file.addSeparator()
        self._action(file, "Export view as &PNG…", lambda: self.ask_export("png"), K("Ctrl+E"))
        self._action(
            file, "Export view as S&VG…", lambda: self.ask_export("svg"), K("Ctrl+Shift+X")
        )
        file.addSeparator()
        self._action(file, "&Quit", self.close, K.StandardKey.Quit)

        edit = bar.addMenu("&Edit")
        self.undo_action = self.qundo.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(K.StandardKey.Undo)
        self.redo_action = self.qundo.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts([K("Ctrl+Shift+Z"), K("Ctrl+Y")])
        for act in (self.undo_action, self.redo_action):
            edit.addAction(act)
            self.addAction(act)
        edit.addSeparator()
        self._action(edit, "&Find…", self.focus_find, K.StandardKey.Find)

        view = bar.addMenu("&View")
        self._action(view, "&Fit to window", self.graph.fit, K("Ctrl+0"))
        self._action(view, "Show &everything", self.graph.fit_all, K("Ctrl+Shift+0"))
        self._action(view, "Zoom &in", lambda: self.graph.zoom(1.25), [K("Ctrl+="), K("Ctrl++")])
        self._action(view, "Zoom &out", lambda: self.graph.zoom(0.8), K("Ctrl+-"))
        self._action(view, "&Back (leave region)", lambda: self.graph.back(), K("Alt+Left"))
        self._action(view, "&Collapse all scopes", self.graph.collapse_all, K("Ctrl+Shift+C"))
        view.addSeparator()
        self._action(view, "Toggle &dark/light theme", self.toggle_theme, K("Ctrl+T"))
        view.addSeparator()
        for dock in (
            self.mesh_dock,
            self.palette_dock,
            self.inspector_dock,
            self.source_dock,
            self.messages_dock,
            self.history_dock,
        ):
            view.addAction(dock.toggleViewAction())

        run = bar.addMenu("&Propagation")
        self.propagate_action = self._action(run, "&Propagate now", self.propagate_now, K("F5"))
        self.auto_action = self._action(run, "&Automatic after each edit", self._toggle_auto)
        self.auto_action.setCheckable(True)
        self.auto_action.setChecked(self.auto_propagate)
        for act in (self.propagate_action, self.auto_action):
            act.setEnabled(self.can_propagate)

    def _connect(self) -> None:
        ev = self.session.events
        ev.program.connect(self._on_program_change)
        ev.mesh.connect(self._on_mesh_change)
        ev.specs.connect(self._on_specs_change)
        ev.propagation.connect(self._on_propagation_change)
        self.graph.specDropped.connect(self.on_spec_dropped)
        self.graph.dropRejected.connect(lambda msg: self.messages.add(msg, "warning"))
        self.graph.valueSelected.connect(self.select_value)
        self.graph.opSelected.connect(self.select_op)
        self.outline.valueSelected.connect(self._outline_value)
        self.outline.opSelected.connect(self._outline_op)
        self.graph.viewStateChanged.connect(lambda state: self.session.update_view(**state))
        self.mesh_editor.meshEdited.connect(self.on_mesh_edited)
        if hasattr(self.mesh_editor, "validationMessage"):
            self.mesh_editor.validationMessage.connect(
                lambda msg: msg and self.messages.add(msg, "warning")
            )
        if TensorInspector is not None:
            self.inspector.specDropped.connect(self.on_spec_dropped)
            self.inspector.specMenuAction.connect(self.on_spec_menu)
            # hovering a tile outlines the devices that hold it on the mesh editor's grid
            self.inspector.tile_grid.tileHovered.connect(self.mesh_editor.highlight_devices)
        self.qundo.cleanChanged.connect(self._on_clean_changed)

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

    def on_spec_dropped(self, value_id: int, dim: int, axis) -> bool:
        """An axis (or "replicated", None) dropped on a tensor dimension."""
        if axis is None:
            return self.push(ClearDim(value_id, dim))
        return self.push(SetDimSpec(value_id, dim, axis))

    def on_spec_menu(self, value_id: int, dim: int, action: str, arg) -> bool:
        """A dimension's context menu: ``open`` / ``closed``, ``priority`` (arg), ``clear``."""
        if action in ("open", "closed"):
            return self.push(SetDimOpen(value_id, dim, action == "open"))
        if action == "priority":
            return self.push(SetDimPriority(value_id, dim, arg))
        if action == "clear":
            return self.push(ClearDim(value_id, dim))
        return False

    def on_mesh_edited(self, mesh) -> bool:
        if mesh == self.session.mesh:
            return False
        return self.push(SetMesh(mesh))

    # -- model events -------------------------------------------------------------------
    def _on_program_change(self, program) -> None:
        self._update_title()
        if program is None:
            return
        graph = program.graph
        self.status.setText(f"{len(graph.ops)} ops · {len(graph.values)} tensors")
        self.outline.set_graph(graph, self.session.spec_text)
        self.selected_value = None
        self._show_inspector(None)
        self.source_view.show_location(None, None)
        self._schedule_propagation()

    def _on_mesh_change(self, mesh) -> None:
        if self.mesh_editor.mesh != mesh:
            self.mesh_editor.set_mesh(mesh)
        self.palette_widget.set_mesh(mesh)
        self._refresh_inspector()
        self._schedule_propagation()

    def _on_specs_change(self, ids) -> None:
        self.outline.specs_changed()
        if self.selected_value in ids:
            self._refresh_inspector()
        self._schedule_propagation()

    def _on_propagation_change(self, result) -> None:
        self.outline.specs_changed()
        self._refresh_inspector()

    # -- selection ------------------------------------------------------------------------
    def select_value(self, value_id: int) -> None:
        """Show a tensor in the inspector and its producer's source line."""
        self.selected_value = int(value_id)
        self._refresh_inspector()
        graph = self.session.graph
        value = graph.values[value_id]
        if value.producer is not None:
            self.select_op(value.producer)

    def _outline_value(self, value_id: int) -> None:
        self.graph.select_value(value_id, center=True)
        self.select_value(value_id)

    def _outline_op(self, op_id: int) -> None:
        self.graph.select_op(op_id, center=True)
        self.select_op(op_id)

    def select_op(self, op_id: int) -> None:
        op = self.session.graph.ops[op_id]
        self.source_view.show_location(op.source_file, op.source_line, op.name)

    def _refresh_inspector(self) -> None:
        vid = self.selected_value
        graph = self.session.graph
        self._show_inspector(graph.values[vid] if graph is not None and vid is not None else None)

    def _show_inspector(self, value) -> None:
        if TensorInspector is None:
            if value is None:
                self.inspector.setText("Select a tensor to inspect it")
            else:
                self.inspector.setText(
                    f"{value.display_name}\n{value.dtype}{list(value.shape or ())}\n"
                    f"{self.session.spec_text(value.id)}"
                )
            return
        spec = self.session.display_spec(value.id) if value is not None else None
        try:
            self.inspector.set_value(value, self.session.mesh, spec)
        except ShardscopeError as exc:
            self.messages.error(str(exc))

    # -- loading ------------------------------------------------------------------------
    def open_program(self, source: str, state: dict | None = None) -> None:
        """Load ``source`` off the GUI thread; the session changes only if it loads."""
        self.loading = source
        self.statusBar().showMessage(f"loading {source}…")
        self.messages.add(f"loading {source}")

        def done(program, seconds: float) -> None:
            if self.loading != source:
                return  # a newer load superseded this one
            self.loading = None
            self.undo.clear()
            self.session.set_program(program, state=state)
            self.settings.add_recent(source if state is None else str(self.session_path or source))
            self._update_recent_menu()
            self.messages.add(
                f"loaded {program.name}: {len(program.graph.ops)} ops in {seconds:.2f} s"
            )
            self.statusBar().showMessage(f"loaded {program.name}", 4000)

        def failed(message: str) -> None:
            if self.loading == source:
                self.loading = None
            self.messages.error(message)
            self.statusBar().showMessage("loading failed", 4000)

        self.runner.start(load_task(source, self.load_timeout), done, failed)

    def open_session(self, path: str | Path) -> bool:
        try:
            state = Session.read(path)
        except ShardscopeError as exc:
            self.messages.error(str(exc))
            return False
        self.session_path = Path(path)
        self.open_program(state["source"], state)
        return True

    def restore_state(self, state: dict) -> None:
        """Reopen a recovered (unsaved) session."""
        self.messages.add("restoring the unsaved session from the recovery file")
        self.open_program(state["source"], state)

    # -- propagation --------------------------------------------------------------------
    def _schedule_propagation(self) -> None:
        if self.auto_propagate and self.session.program is not None:
            self._propagate_timer.start()

    def _toggle_auto(self, on: bool) -> None:
        self.auto_propagate = bool(on)
        self.settings.set_auto_propagate(self.auto_propagate)
        self._schedule_propagation()

    def propagate_now(self) -> None:
        """Run propagation on the current mesh and specs in the pool; a result that
        arrives after a newer edit is dropped."""
        session = self.session
        if not self.can_propagate or session.program is None or session.mesh is None:
            return
        self._propagate_generation += 1
        generation = self._propagate_generation
        fn = propagate_task(session.program, session.mesh, session.specs_for_propagation())

        def done(result, seconds: float) -> None:
            if generation != self._propagate_generation:
                return
            self.propagations += 1
            session.set_propagation(result)
            for warning in getattr(result, "warnings", [])[:5]:
                self.messages.add(warning, "warning")
            self.statusBar().showMessage(f"propagated in {seconds:.2f} s", 4000)

        def failed(message: str) -> None:
            if generation == self._propagate_generation:
                self.messages.error(f"propagation failed: {message}")

        self.runner.start(fn, done, failed)

    # -- file actions ---------------------------------------------------------------------
    def ask_open_program(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open program", "", "Programs (*.py *.mlir);;All files (*)"
        )
        if path:
            self.open_program(path)

    def ask_open_example(self) -> None:
        from shardscope.backend.program.load import list_examples

        name, ok = QInputDialog.getItem(self, "Open example", "Example:", list_examples(), 0, False)
        if ok and name:
            self.open_program(f"example:{name}")

    def ask_open_session(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open session", "", "shardscope sessions (*.json);;All files (*)"
        )
        if path:
            self.open_session(path)

    def save_session(self) -> bool:
        if self.session_path is None:
            return self.ask_save_session_as()
        return self.save_session_to(self.session_path)

    def ask_save_session_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save session", "session.json", "shardscope sessions (*.json)"
        )
        return self.save_session_to(path) if path else False

    def save_session_to(self, path: str | Path) -> bool:
        if self.session.source is None:
            self.messages.error("nothing to save: open a program first")
            return False
        try:
            self.session.save(path)
        except OSError as exc:
            self.messages.error(f"cannot save {path}: {exc.strerror}")
            return False
        self.session_path = Path(path)
        self.qundo.setClean()
        self.settings.add_recent(str(path))
        self._update_recent_menu()
        self.messages.add(f"saved session {path}")
        return True

    def ask_export(self, fmt: str) -> None:
        name = (self.session.program.name if self.session.program else "graph") + f".{fmt}"
        path, _ = QFileDialog.getSaveFileName(self, f"Export view as {fmt.upper()}", name)
        if path:
            self.export(path)

    def export(self, path: str | Path) -> bool:
        try:
            export_view(self.graph, path)
        except (OSError, ValueError) as exc:
            self.messages.error(f"cannot export {path}: {exc}")
            return False
        self.messages.add(f"exported {path}")
        return True

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        for item in self.settings.recent():
            act = self.recent_menu.addAction(item)
            if item.endswith(".json"):
                act.triggered.connect(lambda _=False, p=item: self.open_session(p))
            else:
                act.triggered.connect(lambda _=False, s=item: self.open_program(s))
        self.recent_menu.setEnabled(bool(self.settings.recent()))

    # -- misc ----------------------------------------------------------------------------
    def focus_find(self) -> None:
        self.graph_panel.find_box.setFocus()
        self.graph_panel.find_box.selectAll()

    def toggle_theme(self) -> None:
        self.set_theme("light" if self.theme == "dark" else "dark")

    def set_theme(self, name: str) -> None:
        app = QApplication.instance()
        self.theme = apply_theme(app, name)
        self.settings.set_theme(self.theme)
        self.graph.set_style_theme(self.theme)
        self.messages.restyle()

    def _on_clean_changed(self, _clean: bool) -> None:
        try:
            self._update_title()
        except RuntimeError:
            pass  # the undo stack is being destroyed with the window

    def _update_title(self) -> None:
        program = self.session.program
        name = program.name if program is not None else (self.loading or "no program")
        dirty = "" if self.qundo.isClean() else " •"
        self.setWindowTitle(f"{name}{dirty} — shardscope")

    def sizeHint(self) -> QSize:
        return QSize(1500, 950)

    def closeEvent(self, event) -> None:
        self._propagate_timer.stop()
        self.settings.save_window_state(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self.runner.wait(10_000)
        self.graph.close()
        ev = self.session.events
        ev.program.disconnect(self._on_program_change)
        ev.mesh.disconnect(self._on_mesh_change)
        ev.specs.disconnect(self._on_specs_change)
        ev.propagation.disconnect(self._on_propagation_change)
        if os.environ.get("SHARDSCOPE_KEEP_RECOVERY") != "1":
            self.session.discard_recovery()
        super().closeEvent(event)


def ask_restore(parent: QWidget | None, state: dict) -> bool:
    """Ask whether to restore a recovered session (env ``SHARDSCOPE_RECOVERY`` answers
    ``restore`` or ``discard`` without asking, for tests and scripts)."""
    answer = os.environ.get("SHARDSCOPE_RECOVERY", "").lower()
    if answer in ("restore", "yes"):
        return True
    if answer in ("discard", "no"):
        return False
    n = len(state.get("specs") or [])
    box = QMessageBox(parent)
    box.setWindowTitle("Restore unsaved session?")
    box.setText(
        f"shardscope did not exit cleanly while editing {state.get('source')} "
        f"({n} tensor spec{'s' if n != 1 else ''}). Restore those edits?"
    )
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
    box.setDefaultButton(QMessageBox.StandardButton.Yes)
    return box.exec() == QMessageBox.StandardButton.Yes
