"""File > Export view as PNG / SVG: the graph view written to an image file."""

from __future__ import annotations

from pathlib import Path

from shardscope.app.window.file_context import FileContext, FilePart
from shardscope.app.window.file_dialogs import choose_file
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import write_drawn
from shardscope.viewers.graph.graph_panel import export_view
from shardscope.viewers.graph.view import GraphView


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
        """Write the graph view to ``path`` (PNG or SVG by its suffix)."""
        try:
            write_drawn(
                path,
                lambda scratch: export_view(self.graph, scratch),
                "choose a .png or .svg name in a writable folder",
            )
        except ShardscopeError as exc:
            self.messages.error(str(exc))
            return False
        except (OSError, ValueError) as exc:
            self.messages.error(f"cannot export {path}: {exc}")
            return False
        self.messages.add(f"exported {path}")
        return True
