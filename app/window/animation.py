"""File > Export propagation as GIF: the animation ``render --animate`` writes, for what the
graph view shows (its frame and unfolded scopes), drawn on a view of its own off screen so
the window's view, its step and its selection stay as they were."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow

from shardscope.backend.session.playback import Playback
from shardscope.viewers.graph.animation import write_gif
from shardscope.viewers.graph.markers import GraphMarkers
from shardscope.viewers.graph.view import GraphView


class GifExport:
    """See the module docstring. ``window`` is the main window: its session, graph view,
    theme, messages and status bar."""

    def __init__(self, window: QMainWindow) -> None:
        self.window = window

    def ask(self) -> None:
        program = self.window.session.program
        name = (program.name if program else "propagation") + ".gif"
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Export propagation as GIF", name, "GIF (*.gif)"
        )
        if path:
            self.export(path)

    def export(self, path: str | Path) -> bool:
        """Write the animation to ``path``; a problem is one line in Messages."""
        window = self.window
        session = window.session
        path = Path(path)
        if path.suffix.lower() != ".gif":
            path = path.with_name(path.name + ".gif")
        result = session.propagation
        if session.program is None:
            window.messages.error("cannot export a GIF: open a program first")
            return False
        if result is None:
            window.messages.error("cannot export a GIF: propagate first (F5)")
            return False
        if result.timeline.last_index < 0:
            window.messages.error(
                "cannot export a GIF: propagation took no steps; shard an input so that axes flow"
            )
            return False
        window.statusBar().showMessage(f"drawing the propagation into {path.name}…")
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        view = GraphView(session)
        markers = None
        try:
            view.set_style_theme(window.theme)
            view.show_like(window.graph)
            markers = GraphMarkers(view)
            summary = write_gif(view, Playback(result.timeline, result.graph), session.specs, path)
        except (OSError, ValueError) as exc:
            window.messages.error(f"cannot export {path}: {exc}")
            window.statusBar().clearMessage()
            return False
        finally:
            if markers is not None:
                markers.close()
            view.close()
            view.deleteLater()
            QApplication.restoreOverrideCursor()
        what = f"{summary.frames} frames, {summary.width}x{summary.height}"
        window.messages.add(f"exported {path} ({what})")
        window.statusBar().showMessage(f"exported {path.name} ({what})", 4000)
        return True
