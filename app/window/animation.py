"""File > Export propagation animation: the animation ``render --animate`` writes (GIF, or MP4
where PyAV is installed), for what the graph view shows (its frame and unfolded scopes),
drawn on a view of its own off screen so the window's view, its step and its selection stay
as they were.

Frames are drawn one per timer tick on the GUI thread (the scene can only be drawn there),
so the window keeps handling events between them; a progress dialog counts them and its
Cancel stops the export. The file is encoded in the thread pool and written whole once
done: a cancelled or failed export leaves no file.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMainWindow, QProgressDialog

from shardscope.backend.session.playback import Playback
from shardscope.viewers.graph.animation import AnimationDrawer
from shardscope.viewers.graph.markers import GraphMarkers
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
        self._drawer: AnimationDrawer | None = None
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

    def ask(self) -> None:
        program = self.window.session.program
        name = (program.name if program else "propagation") + ".gif"
        path, chosen = QFileDialog.getSaveFileName(
            self.window, "Export propagation animation", name, FILTERS
        )
        if path:
            if Path(path).suffix.lower() not in (".gif", ".mp4"):
                path += ".mp4" if "mp4" in (chosen or "") else ".gif"
            self.export(path)

    def export(self, path: str | Path) -> bool:
        """Start writing the animation to ``path`` (.gif or .mp4; another name gets .gif);
        False, with one line in Messages, if it cannot start."""
        window = self.window
        session = window.session
        path = Path(path)
        if path.suffix.lower() not in (".gif", ".mp4"):
            path = path.with_name(path.name + ".gif")
        kind = path.suffix[1:].upper()
        result = session.propagation
        if self.busy:
            window.messages.error(f"cannot export {path.name}: an export is still running")
            return False
        if session.program is None:
            window.messages.error(f"cannot export a {kind}: open a program first")
            return False
        if result is None:
            window.messages.error(f"cannot export a {kind}: propagate first (F5)")
            return False
        if result.timeline.last_index < 0:
            window.messages.error(
                f"cannot export a {kind}: propagation took no steps; shard an input so that "
                "axes flow"
            )
            return False
        view = GraphView(session)
        view.set_style_theme(window.theme)
        view.show_like(window.graph)
        markers = GraphMarkers(view)
        try:
            drawer = AnimationDrawer(
                view, Playback(result.timeline, result.graph), session.specs, path
            )
        except ValueError as exc:
            markers.close()
            view.close()
            view.deleteLater()
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

    def _encode(self, drawer: AnimationDrawer) -> None:
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

    def _write(self, drawer: AnimationDrawer, data: bytes) -> None:
        path = drawer.path
        try:
            path.write_bytes(data)
        except OSError as exc:
            try:
                if path.is_file():
                    path.unlink()
            except OSError:
                pass
            self._fail(f"cannot export {path}: {exc.strerror or exc}")
            return
        width, height = drawer.size
        what = f"{drawer.drawn} frames, {width}x{height}"
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
        if self._markers is not None:
            self._markers.close()
        if self._view is not None:
            self._view.close()
            self._view.deleteLater()
        self._drawer = self._view = self._markers = None
        self._encoding = False
        if self.progress is not None:
            progress, self.progress = self.progress, None
            progress.canceled.disconnect(self.cancel)
            progress.close()
            progress.deleteLater()
