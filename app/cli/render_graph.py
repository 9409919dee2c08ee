"""What ``render`` draws of the program graph: the picture (split into pages when large),
one scope of it, the state at one step, and the animation of every step."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Protocol

from shardscope.app.cli.render_file import write_out
from shardscope.backend.errors import ShardscopeError

# The smallest label an animation's frames may have, in pixels (viewers.graph.pages).
MIN_LABEL = 9


class GraphPictureArgs(Protocol):
    """What drawing the graph reads of ``render``'s parsed options."""

    view: str
    scope: str | None
    theme: str
    scale: float | None
    width: int | None
    gspmd: bool
    step: int | None
    fps: float


def playback_at(session, step: int | None):
    """A playback of the session's propagation; a one-line error for a ``step`` it lacks."""
    from shardscope.backend.session.playback import Playback

    result = session.propagation
    playback = Playback(result.timeline, result.graph)
    last = result.timeline.last_index
    if step is not None:
        if last < 0:
            raise ShardscopeError(
                f"--step {step}: propagation of {session.program.name} took no steps; "
                "drop --step, or shard an input with --spec so that axes flow"
            )
        if step > last:
            raise ShardscopeError(
                f"--step {step}: {session.program.name} has steps 0 to {last}; give one of those"
            )
    return playback


def _show_step(session, graph, step: int):
    """Put ``graph`` at propagation step ``step``: badges, the step's edges and its op."""
    from shardscope.viewers.graph.step_overlay import StepOverlay, playback_override

    playback = playback_at(session, step)
    playback.seek_step(step, quiet=True)
    overlay = StepOverlay(graph)
    overlay.set_spec_override(playback_override(playback, session.specs), None)
    overlay.show_steps(playback.steps())
    return overlay


def check_animate(args: GraphPictureArgs, out: Path) -> None:
    """A one-line error for ``--animate`` with what it cannot draw or write."""
    if out.suffix.lower() not in (".gif", ".mp4"):
        raise ShardscopeError(
            f"--animate writes a GIF or an MP4: give --out a .gif or .mp4 name, not {out.name}"
        )
    if out.suffix.lower() == ".mp4":
        from shardscope.viewers.graph.video import MISSING, have_av

        if not have_av():
            raise ShardscopeError(f"--animate: {MISSING}")
    if args.view != "graph":
        raise ShardscopeError(
            f"--animate draws the graph: drop --view {args.view} (or use --view graph)"
        )
    if args.step is not None:
        raise ShardscopeError("--animate draws every step: drop --step")
    if args.width is not None and args.scale is not None:
        raise ShardscopeError("--animate takes a --width or a --scale: drop one")


def animate(session, args: GraphPictureArgs, path: Path) -> None:
    """Write the animation of the graph stepping through the propagation to ``path``."""
    from shardscope.app.cli.render_debugger import mark_graph
    from shardscope.viewers.graph.movie import WARN_BYTES, MovieDrawer, plan_movie
    from shardscope.viewers.graph.view import GraphView

    result = session.propagation
    if result is None or result.timeline.last_index < 0:
        raise ShardscopeError(
            f"--animate: propagation of {session.program.name} took no steps; "
            "shard an input with --spec so that axes flow"
        )
    graph = GraphView(session)
    graph.set_style_theme(args.theme)
    markers = None
    try:
        if args.scope:
            graph.show_scope(scope_path(session, graph, args.scope))
        markers = mark_graph(session, graph, gspmd=args.gspmd)
        playback = playback_at(session, None)
        plan = plan_movie(graph, playback, path, width=args.width, scale=args.scale)
        if plan.label_px < MIN_LABEL:
            raise ShardscopeError(
                f"--animate: labels would be {plan.label_px:.1f} px high at {plan.width} px "
                f"wide: give --width {plan.min_width} or more, or --scope NAME"
            )
        if plan.problem:
            raise ShardscopeError(
                f"--animate: frames of {plan.width}x{plan.height} px are too large to draw: "
                "give --scope NAME or a smaller --width"
            )
        if plan.estimate > WARN_BYTES:
            print(
                f"note: --animate writes about {plan.estimate / 1e6:.0f} MB ({plan.summary()});"
                " --scope NAME or a smaller --width writes less",
                file=sys.stderr,
            )
        title = session.program.name + (f" · {args.scope}" if args.scope else "")
        drawer = MovieDrawer(graph, playback, session.specs, path, plan, fps=args.fps, title=title)
        drawer.finish()
    except ValueError as err:
        raise ShardscopeError(f"--animate: {err}") from None
    finally:
        if markers is not None:
            markers.close()
        graph.close()


def scope_path(session, view, name: str) -> str:
    """The scope of ``view``'s frame called ``name``; a ShardscopeError names close ones."""
    import difflib

    from shardscope.backend.program.layout import FrameIndex, all_scopes

    graph = session.graph
    paths = all_scopes(graph, FrameIndex(graph), view.frame)
    if name in paths:
        return name
    if not paths:
        raise ShardscopeError(
            f"--scope {name!r}: {session.program.name} has no named scopes; drop --scope"
        )
    close = difflib.get_close_matches(name, paths, n=5, cutoff=0.5)
    close = close or [p for p in paths if "/" not in p][:5]
    raise ShardscopeError(
        f"--scope {name!r} is not a scope of {session.program.name}: "
        f"try {', '.join(repr(p) for p in close)}"
    )


def _check_size(width: float, height: float, scale: float, out: Path, pages: int | None) -> None:
    """A one-line ``ShardscopeError`` when a graph of ``width`` x ``height`` units drawn at
    ``scale`` (``--scale``) would take more than ``pages.MAX_MEGAPIXELS`` (or, given,
    ``pages`` more than ``pages.MAX_PAGES``): before anything is drawn or written."""
    from shardscope.viewers.graph import pages as paging

    if out.suffix.lower() == ".svg":
        return  # one file, at most render.PAGE_LIMIT px on a side (export_view)
    fits = paging.fitting_scale(width, height, scale, pages)
    if fits is None:
        return
    megapixels = max(width, 1.0) * max(height, 1.0) * scale**2 / 1e6
    size = f"{pages} pages" if pages is not None else f"{megapixels:.3g} megapixels"
    raise ShardscopeError(
        f"--scale {scale:g} would draw the graph as {size}, over the {paging.MAX_PAGES} pages "
        f"and {paging.MAX_MEGAPIXELS} megapixels render writes: give --scale {fits:g} or less, "
        f"--scope NAME for part of the graph, or an .svg --out"
    )


def draw_graph(session, args: GraphPictureArgs, out: Path) -> list[Path]:
    """Draw the graph (one ``--scope`` of it, at ``--step``) to ``out`` or, too large for
    one page, to numbered pages; returns the files written."""
    from shardscope.app.cli.render_debugger import mark_graph
    from shardscope.viewers.graph.pages import plan_pages, write_picture
    from shardscope.viewers.graph.view import GraphView

    scale = args.scale
    assert scale is not None, "render gives --scale its default before drawing the graph"
    graph = GraphView(session)
    graph.set_style_theme(args.theme)
    overlay = markers = None
    try:
        if args.scope:
            graph.show_scope(scope_path(session, graph, args.scope))
        rect = graph.scene().sceneRect()
        _check_size(rect.width(), rect.height(), scale, out, None)
        markers = mark_graph(session, graph, gspmd=args.gspmd)
        overlay = _show_step(session, graph, args.step) if args.step is not None else None
        title = session.program.name + (f" · {args.scope}" if args.scope else "")
        pages = plan_pages(graph, scale, title)
        rect = graph.scene().sceneRect()
        _check_size(rect.width(), rect.height(), scale, out, len(pages))
        return write_picture(graph, pages, scale, out, write_out)
    finally:
        if overlay is not None:
            overlay.close()
        if markers is not None:
            markers.close()
        graph.close()
