"""File > Export view as PNG / SVG: the graph view written to an image file.

An SVG is one file. A raster picture is drawn with the view's labels at their own size;
a graph too large for one picture of ``pages.PAGE_PIXELS`` on a side is split into
pages as ``render`` splits it (``NAME-1.png`` and on), shrunk first where that keeps its
labels legible and its pages within ``render``'s bounds, and refused, naming what fits,
where nothing does: never shrunk into an unreadable picture.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from shardscope.app.window.file_context import FileContext, FilePart
from shardscope.app.window.file_dialogs import choose_file
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import write_drawn
from shardscope.viewers.graph import pages as paging
from shardscope.viewers.graph.view import GraphView

# The scale a raster export draws at: labels as the view draws them at 100%.
EXPORT_SCALE = 1.0


class ViewExporter(FilePart):
    """Writes the graph view to the file the user picks, named for the program."""

    def __init__(self, context: FileContext, graph: GraphView) -> None:
        super().__init__(context)
        self.graph = graph

    def ask_export(self, fmt: str) -> None:
        """Ask for a ``fmt`` (``png`` or ``svg``) file, suggesting the program's name, and
        export to it."""
        program = self.session.program
        name = (program.name if program else "graph") + f".{fmt}"
        chosen = choose_file(
            self.window,
            self.settings,
            "exports",
            f"Export view as {fmt.upper()}",
            f"{fmt.upper()} (*.{fmt})",
            save_as=name,
            suffix=fmt,
        )
        if chosen:
            self.export(chosen[0])

    def export(self, path: str | Path) -> bool:
        """Write the graph view to ``path`` (PNG or SVG by its suffix; a large PNG as
        numbered pages beside it)."""
        path = Path(path)
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            written = self._write(path)
        except ShardscopeError as exc:
            self.messages.fail(str(exc))
            return False
        except (OSError, ValueError) as exc:
            self.messages.fail(f"cannot export {path}: {exc}")
            return False
        finally:
            QApplication.restoreOverrideCursor()
        if len(written) == 1:
            self.messages.add(f"exported {written[0]}")
        else:
            self.messages.add(
                f"exported {path.name} as {len(written)} pages, too large for one picture "
                f"with legible labels: {written[0]} to {written[-1].name}"
            )
        return True

    def _write(self, path: Path) -> list[Path]:
        """Write ``path`` or its pages; the files written. A ``ValueError`` names what fits
        when the picture would be too large."""
        if path.suffix.lower() == ".svg":
            scale, pages = EXPORT_SCALE, []
        else:
            scale, pages = self._plan()
        return paging.write_picture(self.graph, pages, scale, path, _write)

    def _plan(self) -> tuple[float, list[paging.Page]]:
        """The scale and pages of the raster picture: at ``EXPORT_SCALE``, or smaller where
        that is needed to keep within the pages and megapixels ``render`` writes and keeps
        labels ``MIN_LABEL_PIXELS`` high; a ``ValueError`` when no scale does."""
        view = self.graph
        program = self.session.program
        title = program.name if program else "graph"
        rect = view.scene().sceneRect()
        legible = paging.MIN_LABEL_PIXELS / paging.label_pixels(view, 1.0)
        scale = EXPORT_SCALE
        pages = paging.plan_pages(view, scale, title)
        for _ in range(3):
            fits = paging.fitting_scale(rect.width(), rect.height(), scale, len(pages))
            if fits is None:
                return scale, pages
            if fits < legible:
                break
            scale = fits
            pages = paging.plan_pages(view, scale, title)
        fewest = paging.plan_pages(view, legible, title)
        raise ValueError(
            f"the graph as drawn ({rect.width():.0f}x{rect.height():.0f}) takes "
            f"{len(fewest)} pages of {paging.PAGE_PIXELS} px with legible labels, over the "
            f"{paging.MAX_PAGES} pages and {paging.MAX_MEGAPIXELS} megapixels an export "
            "writes: collapse some scopes (View > Collapse all scopes), or export as SVG"
        )


def _write(path: Path, draw) -> None:
    """Draw into a scratch file and write it to ``path`` atomically (``write_drawn``)."""
    write_drawn(path, draw, "choose a .png or .svg name in a writable folder")
