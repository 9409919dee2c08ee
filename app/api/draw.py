"""Draw a saved session's program graph, propagated, to an SVG file, offscreen.

Run as ``python -m shardscope.app.api.draw SESSION OUT.svg [SCALE]`` (with
``QT_QPA_PLATFORM=offscreen``): ``Inspection._repr_svg_`` runs it in its own process so Qt
never loads into the caller's interpreter. Opening the session runs no code: its program
is data.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast


def draw(session_path: Path, out: Path, scale: float = 1.0) -> None:
    """Propagate the session's program with its mesh and specs and draw the graph."""
    from PySide6.QtWidgets import QApplication

    from shardscope.app.window.theme import apply_theme
    from shardscope.backend.propagation.propagate import propagate
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.saved_program import unpack_program
    from shardscope.viewers.graph.graph_panel import export_view
    from shardscope.viewers.graph.view import GraphView

    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_theme(app, "light")
    state = Session.read(session_path)
    program = unpack_program(cast(dict, state["program"]), str(state["source"]), str(session_path))
    session = Session()
    session.set_program(program, state=state)
    session.set_propagation(
        propagate(program, session.mesh, session.specs_for_propagation(), strict=False)
    )
    graph = GraphView(session)
    graph.set_style_theme("light")
    export_view(graph, out, scale=scale)
    graph.close()


def main(argv: list[str]) -> int:
    """Entry point: ``SESSION OUT [SCALE]``."""
    session, out = Path(argv[0]), Path(argv[1])
    scale = float(argv[2]) if len(argv) > 2 else 1.0
    draw(session, out, scale)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
