"""Writing what ``render`` draws to a file: all of it or nothing, with a one-line error."""

from __future__ import annotations

from pathlib import Path

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import write_drawn


def write_out(out: Path, draw) -> None:
    """Draw into a scratch file, then write it to ``out`` atomically (``write_drawn``):
    Qt's writers do not all report a failed write, and a failed one must leave no empty
    file behind; a FIFO, device or folder at ``out`` is refused before anything is
    drawn."""
    write_drawn(out, draw, "use a .png or .svg name in a writable folder with free space")


def save_widget(widget, path: Path) -> None:
    """Save ``widget`` as drawn: an .svg as vector items, anything else as a bitmap."""
    # Qt (here and in render and run) is imported only by the command that draws.
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtGui import QPainter

    if path.suffix.lower() == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        gen = QSvgGenerator()
        gen.setFileName(str(path))
        gen.setSize(widget.size())
        gen.setViewBox(QRect(0, 0, widget.width(), widget.height()))
        painter = QPainter(gen)
        widget.render(painter, QPoint(0, 0))
        painter.end()
        return
    if not widget.grab().save(str(path)):
        raise ShardscopeError(f"cannot write {path}: use a .png or .svg name in a writable folder")
