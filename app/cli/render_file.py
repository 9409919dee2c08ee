"""Writing what ``render`` draws to a file: all of it or nothing, with a one-line error."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from shardscope.backend.errors import ShardscopeError


def write_out(out: Path, draw) -> None:
    """Draw into a scratch file, then copy it to ``out``: Qt's writers do not all report a
    failed write, and a failed one must leave no empty file behind."""
    problem = "use a .png or .svg name in a writable folder with free space"
    with tempfile.TemporaryDirectory(prefix="shardscope-render-") as folder:
        scratch = Path(folder) / ("render" + out.suffix.lower())
        try:
            draw(scratch)
            data = scratch.read_bytes()
        except OSError as err:
            raise ShardscopeError(f"cannot draw {out}: {err}; {problem}") from None
    if not data:
        raise ShardscopeError(f"cannot draw {out}: Qt wrote nothing; {problem}")
    existed = os.path.lexists(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as file:
            file.write(data)
    except OSError as err:
        if not existed:
            try:
                if out.is_file():
                    out.unlink()
            except OSError:
                pass
        reason = err.strerror or str(err)
        if out.parent.exists() and not out.parent.is_dir():
            reason = f"{out.parent} is a file, not a folder"
        raise ShardscopeError(f"cannot write {out}: {reason}; {problem}") from None


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
