"""What ``render --view run:NAME`` draws: the program run on the devices (the window's
runner), then the heat maps of argument or output NAME, one per device, laid out like
the mesh."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from shardscope.backend.session.document import Session


def run_names(session: Session) -> list[str]:
    """The names ``run:NAME`` accepts: the program's arguments, then its results."""
    program = session.program
    return [*program.arg_names, *(f"result[{i}]" for i in range(len(program.result_names)))]


def heatmap_sheet(session: Session, name: str, width: int, timeout: float) -> QWidget:
    """Run the session's program with its mesh and specs and draw ``name``'s heat maps
    ``width`` pixels wide. Raises ``ShardscopeError`` for an unknown name (before
    running) and whatever the run reports."""
    from shardscope.backend.run.dispatch import run_program
    from shardscope.viewers.run.heatmap import HeatmapView
    from shardscope.viewers.run.run_panel import run_mesh

    names = run_names(session)
    if name not in names:
        raise ShardscopeError(
            f"--view run:{name}: {session.program.name} has no argument or output named "
            f"{name!r}; use one of {', '.join(names)}"
        )
    result = run_program(
        session.program,
        session.mesh,
        session.specs_for_propagation(),
        timeout=timeout,
        runs=1,
        reference=False,
        hosts=session.hosts.count if session.hosts.multi else None,
    )
    mesh = run_mesh(result)
    view = HeatmapView()
    view.resize(width, 400)
    view.set_tensor(
        result.tensor(name),
        mesh.axis_sizes if mesh is not None else (),
        list(mesh.device_order) if mesh is not None else None,
    )
    view.resize(width, view.sizeHint().height())
    return view
