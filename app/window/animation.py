"""File > Export propagation animation: the animation ``render --animate`` writes (GIF, or MP4
where PyAV is installed), of the whole graph as the view shows it (its frame and unfolded
scopes), of the region the view shows, or of one scope unfolded, at a width whose labels
stay legible (``app.window.export_dialog``), drawn on a view of its own off screen so the
window's view, its step and its selection stay as they were. An export estimated over
``WARN_BYTES`` asks first; its Cancel leaves everything as it was.

Frames are drawn one per timer tick on the GUI thread (the scene can only be drawn there),
so the window keeps handling events between them; a progress dialog counts them and its
Cancel stops the export. Each frame is compressed on the GIF's worker thread while the next
is drawn, the file put together in the task pool and written whole once done: a cancelled
or failed export leaves no file.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QRectF, Qt, QTimer, Signal
from PySide6.QtWidgets import QDialog, QMainWindow, QMessageBox, QProgressDialog

from shardscope.app.window.export_dialog import (
    ExportChoice,
    ExportDialog,
    close_drawing_view,
    drawing_view,
)
from shardscope.app.window.file_dialogs import choose_file
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.session.playback import Playback
from shardscope.viewers.graph.markers import GraphMarkers
from shardscope.viewers.graph.movie import WARN_BYTES, MovieDrawer, plan_movie, write_whole
from shardscope.viewers.graph.view import GraphView

FILTERS = "GIF (*.gif);;MP4 video (*.mp4)"


class GifExport(QObject):
    """See the module docstring. ``window`` is the main window: its session, graph view,
    theme, messages, status bar and task runner. ``finished(ok)`` is emitted when an export
    ends (written, failed or cancelled)."""

    finished = Signal(bool)

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.progress: QProgressDialog | None = None
        self._drawer: MovieDrawer | None = None
        self.dialog: ExportDialog | None = None
        self.confirm: QMessageBox | None = None
        # above this estimate, the export asks before writing
        self.warn_bytes = WARN_BYTES
        self._view: GraphView | None = None
        self._markers: GraphMarkers | None = None
        self._cancelled = False
        self._encoding = False
        self._path_name = ""
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._draw_one)

    @property
    def busy(self) -> bool:
        """Whether an export is drawing or encoding."""
        return self._drawer is not None

    def _cannot(self, kind: str, name: str = "") -> str | None:
        """Why no export can start now (None: it can)."""
        session = self.window.session
        result = session.propagation
        if self.busy:
            return f"cannot export {name or 'an animation'}: an export is still running"
        if session.program is None:
            return f"cannot export a {kind}: open a program first"
        if result is None:
            return f"cannot export a {kind}: propagate first (F5)"
        if result.timeline.last_index < 0:
            return (
                f"cannot export a {kind}: propagation took no steps; shard an input so that "
                "axes flow"
            )
        return None

    def ask(self) -> None:
        """File > Export propagation animation: the options dialog, then the file name,
        then (for a large file) a confirmation; each one's Cancel changes nothing."""
        problem = self._cannot("GIF")
        if problem:
            self.window.messages.error(problem)
            return
        result = self.window.session.propagation
        dialog = ExportDialog(self.window, Playback(result.timeline, result.graph))
        self.dialog = dialog
        dialog.finished.connect(lambda code: self._on_options(dialog, code))
        dialog.open()

    def _on_options(self, dialog: ExportDialog, code: int) -> None:
        self.dialog = None
        dialog.deleteLater()
        if code != QDialog.DialogCode.Accepted:
            return
        choice = dialog.take()
        program = self.window.session.program
        name = program.name if program else "propagation"
        if choice.scope:
            name += "-" + "".join(c if c.isalnum() else "_" for c in choice.scope).strip("_")
        picked = choose_file(
            self.window,
            self.window.settings,
            "exports",
            "Export propagation animation",
            FILTERS,
            save_as=name + choice.suffix,
        )
        if picked is None:
            self._drop(choice)
            return
        path, chosen = picked
        if Path(path).suffix.lower() not in (".gif", ".mp4"):
            path += ".mp4" if "mp4" in (chosen or "") else ".gif"
        plan = choice.plan
        if Path(path).suffix.lower() != plan.suffix:
            plan = plan_movie(
                choice.view, dialog.playback, path, source=choice.region, width=choice.width
            )
        if plan.estimate > self.warn_bytes:
            box = QMessageBox(
                QMessageBox.Icon.Warning,
                "Export propagation animation",
                f"{Path(path).name} would take about {plan.estimate / 1e6:.0f} MB "
                f"({plan.summary()}). Write it anyway?",
                QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
                self.window,
            )
            box.setInformativeText(
                "One scope, the visible region or a smaller width writes a smaller file."
            )
            box.setDefaultButton(QMessageBox.StandardButton.Cancel)
            self.confirm = box

            def answered(button: int) -> None:
                self.confirm = None
                box.deleteLater()
                if button == QMessageBox.StandardButton.Save:
                    self._start(Path(path), choice.view, choice.markers, plan, dialog.playback)
                else:
                    self._drop(choice)

            box.finished.connect(answered)
            box.open()
            return
        self._start(Path(path), choice.view, choice.markers, plan, dialog.playback)

    @staticmethod
    def _drop(choice: ExportChoice) -> None:
        close_drawing_view(choice.view, choice.markers)

    def export(
        self,
        path: str | Path,
        *,
        scope: str | None = None,
        region: QRectF | None = None,
        width: int | None = None,
    ) -> bool:
        """Start writing the animation to ``path`` (.gif or .mp4; another name gets .gif):
        of the whole graph as the window shows it, one ``scope`` unfolded or the scene
        ``region``, ``width`` pixels wide (default: the narrowest with legible labels).
        False, with one line in Messages, if it cannot start."""
        window = self.window
        session = window.session
        path = Path(path)
        if path.suffix.lower() not in (".gif", ".mp4"):
            path = path.with_name(path.name + ".gif")
        problem = self._cannot(path.suffix[1:].upper(), path.name)
        if problem:
            window.messages.error(problem)
            return False
        result = session.propagation
        view, markers = drawing_view(window, window.graph, scope)
        playback = Playback(result.timeline, result.graph)
        try:
            plan = plan_movie(view, playback, path, source=region, width=width)
        except ValueError as exc:
            plan = None
            message = str(exc)
        else:
            message = plan.problem
        if message:
            close_drawing_view(view, markers)
            window.messages.error(f"cannot export {path.name}: {message}")
            return False
        return self._start(path, view, markers, plan, playback)

    def _start(self, path: Path, view, markers, plan, playback: Playback) -> bool:
        window = self.window
        title = window.session.program.name
        if view.within:
            title += f" · {view.within}"
        try:
            drawer = MovieDrawer(view, playback, window.session.specs, path, plan, title=title)
        except ValueError as exc:
            close_drawing_view(view, markers)
            window.messages.error(f"cannot export {path}: {exc}")
            return False
        self._drawer, self._view, self._markers = drawer, view, markers
        self._cancelled = self._encoding = False
        self._path_name = path.name
        progress = QProgressDialog(
            f"Drawing the propagation into {path.name}…", "Cancel", 0, drawer.total, window
        )
        progress.setWindowTitle("Export propagation")
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(0)
        progress.setAutoClose(False)
        progress.setAutoReset(False)
        progress.canceled.connect(self.cancel)
        progress.setValue(0)
        self.progress = progress
        window.statusBar().showMessage(f"drawing the propagation into {path.name}…")
        self._timer.start()
        return True

    def cancel(self) -> None:
        """Stop the export in progress; nothing is written."""
        if self._drawer is None:
            return
        self._cancelled = True
        if not self._encoding:
            # while encoding, the encoder is busy in the pool: its result is dropped instead
            self._drawer.cancel()
        self._end()
        self.window.messages.add(f"export of {self._path_name} cancelled: nothing written")
        self.window.statusBar().showMessage("export cancelled", 4000)
        self.finished.emit(False)

    def _draw_one(self) -> None:
        drawer = self._drawer
        if drawer is None:
            self._timer.stop()
            return
        try:
            more = drawer.draw_next()
        except (OSError, ValueError) as exc:
            self._fail(f"cannot export {drawer.path}: {exc}")
            return
        if self.progress is not None:
            self.progress.setValue(drawer.drawn)
        if more:
            return
        self._timer.stop()
        self._encode(drawer)

    def _encode(self, drawer: MovieDrawer) -> None:
        if self.progress is not None:
            self.progress.setLabelText(f"Encoding {drawer.path.name}…")
            self.progress.setRange(0, 0)
        drawer.release_view()
        self._encoding = True
        encoder = drawer.encoder

        def done(data: bytes, _seconds: float) -> None:
            if self._cancelled or self._drawer is not drawer:
                return
            self._write(drawer, data)

        def failed(message: str) -> None:
            if not self._cancelled and self._drawer is drawer:
                self._fail(f"cannot export {drawer.path}: {message}")

        self.window.runner.start(encoder.encode, done, failed)

    def _write(self, drawer: MovieDrawer, data: bytes) -> None:
        path = drawer.path
        try:
            write_whole(path, data)
        except ShardscopeError as exc:
            self._fail(f"cannot export {path.name}: {exc}")
            return
        width, height = drawer.size
        what = f"{drawer.drawn} frames, {width}x{height} px, {len(data) / 1e6:.1f} MB"
        self._end()
        window = self.window
        window.messages.add(f"exported {path} ({what})")
        window.statusBar().showMessage(f"exported {path.name} ({what})", 4000)
        self.finished.emit(True)

    def _fail(self, message: str) -> None:
        if self._drawer is not None and not self._encoding:
            self._drawer.cancel()
        self._end()
        self.window.messages.error(message)
        self.window.statusBar().clearMessage()
        self.finished.emit(False)

    def _end(self) -> None:
        self._timer.stop()
        if self._view is not None:
            close_drawing_view(self._view, self._markers)
        self._drawer = self._view = self._markers = None
        self._encoding = False
        if self.progress is not None:
            progress, self.progress = self.progress, None
            progress.canceled.disconnect(self.cancel)
            progress.close()
            progress.deleteLater()
