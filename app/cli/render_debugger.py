"""What ``render`` draws for the debugger: the factor table of each conflict
(``--view conflicts``) and the graph's marks, with GSPMD's differences when ``--gspmd``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from shardscope.backend.session.document import Session
    from shardscope.viewers.graph.markers import GraphMarkers
    from shardscope.viewers.graph.view import GraphView


def conflicts_sheet(session: Session, width: int) -> QWidget:
    """A widget with every conflict's factor table, laid out ``width`` pixels wide."""
    from shardscope.viewers.debugger.conflicts import conflict_sheet

    result = session.propagation
    if result is None:
        raise ShardscopeError("--view conflicts needs a propagation result: propagation failed")
    return conflict_sheet(result.conflicts, result.graph, width)


def mark_graph(session: Session, view: GraphView, *, gspmd: bool) -> GraphMarkers:
    """Put the graph's marks on ``view``; with ``gspmd``, compile the program with GSPMD
    in a worker and mark the values it shards differently (its warnings go to stderr)."""
    from shardscope.viewers.graph.markers import GraphMarkers

    markers = GraphMarkers(view)
    if gspmd:
        from shardscope.backend.gspmd.compare import compare_gspmd

        result = session.propagation
        if result is None or session.program is None:
            raise ShardscopeError("--gspmd needs a propagation result: propagation failed")
        comparison = compare_gspmd(session.program, result)
        differences = comparison.differences
        for warning in comparison.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if session.program.partitioner == "gspmd":
            _gspmd_first(view, markers, result, differences)
        else:
            markers.set_gspmd(differences)
    return markers


def _gspmd_first(view: GraphView, markers: GraphMarkers, result, differences) -> None:
    """Draw a program GSPMD partitions (torch_xla's) as the window's left pane does:
    the badges hold GSPMD's final shardings, a value Shardy shards otherwise is marked
    with Shardy's, and Shardy's conflicts and collectives are not drawn on it."""
    from PySide6.QtCore import QObject

    from shardscope.viewers.graph.pane import PaneMarks, as_dims, differing, dims_override

    shardy = {v.id: as_dims(v.spec) for v in result.values}
    gspmd = dict(shardy)
    for d in differences:
        if d.gspmd is not None:
            gspmd[d.id] = as_dims(d.gspmd)
    view.graph_scene.set_mode_override(dims_override(gspmd))
    markers.show_result(None)
    marks = PaneMarks(view)
    marks.set_differences(differing(gspmd, shardy), "shardy", gspmd=True)
    # Closed with the markers: they own it.
    QObject.setParent(marks, markers)
