"""``render``: draw a view of a program to a PNG or SVG file, without a window."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from shardscope.app.cli.options import (
    add_program_options,
    given_mesh,
    note_mesh_override,
    parse_spec_args,
    positive_number,
    program_mesh,
)
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.spec import Spec

NAME = "render"
HELP = "render the program graph, the mesh or a tensor's tiles to a PNG or SVG file"
LOADS_PROGRAM = True
MAX_WIDTH = 16_384
# Pages of a big graph picture (viewers.graph.pages.PAGE_PIXELS; Qt is imported only when
# the command draws).
PAGE_LIMIT = 8000
# The most pages, and megapixels in all, one graph picture may take: each page of
# PAGE_LIMIT px on a side takes seconds to draw and tens of megabytes to write.
MAX_PAGES = 50
MAX_MEGAPIXELS = 500
# The smallest label an animation's frames may have, in pixels (viewers.graph.pages).
MIN_LABEL = 9


def pixel_width(text: str) -> int:
    """argparse type for ``--width``: whole pixels from 1 to ``MAX_WIDTH``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a whole number: give e.g. 1200"
        ) from None
    if not 1 <= value <= MAX_WIDTH:
        raise argparse.ArgumentTypeError(f"{value} pixels: give a width from 1 to {MAX_WIDTH}")
    return value


def add_arguments(parser) -> None:
    """Options of ``render``."""
    add_program_options(parser)
    parser.add_argument(
        "--view",
        default="graph",
        help="graph, mesh, timeline (every propagation step), tiles:NAME for one tensor's "
        "tile map, conflicts for the factor table of each conflict, or run:NAME to run the "
        "program on the devices and draw each device's values of argument or output NAME "
        "(default: graph)",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="output file: .png or .svg (.gif or .mp4 with --animate). A graph larger than "
        f"{PAGE_LIMIT} px on a side at --scale is split into pages instead of shrunk: "
        "f.png becomes f-1.png, f-2.png, ... (bands along the graph's long side, cut "
        f"between rows of boxes, then equal parts across if still over {PAGE_LIMIT} px), "
        "each titled with the scopes it shows and 'page i of n'; an .svg stays one file",
    )
    parser.add_argument(
        "--scope",
        metavar="NAME",
        help="draw only this scope of the graph (its path as the graph shows it, e.g. "
        "'jvp(layer_3)' or 'jvp(layer_3)/attn'), fully unfolded, with the values it takes "
        "and hands on as input and output nodes",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object: the files written"
    )
    parser.add_argument("--theme", choices=("dark", "light"), default="light")
    parser.add_argument(
        "--scale",
        type=positive_number,
        default=None,
        help="pixels per unit of the graph (default 1.5; with --animate, the smallest scale "
        "at which labels are 9 px high)",
    )
    parser.add_argument(
        "--width",
        type=pixel_width,
        default=None,
        help="width of mesh, tiles, timeline, conflicts and run pictures (default 1200), and "
        "of --animate's frames (labels must stay 9 px high)",
    )
    parser.add_argument(
        "--propagate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="show propagated shardings on the graph's badges (the default); --no-propagate "
        "draws only the shardings given (the program's and --spec), '?' on every other badge",
    )
    parser.add_argument(
        "--gspmd",
        action="store_true",
        help="mark on the graph the values GSPMD shards differently from Shardy (propagates; "
        "compiles the program with GSPMD in a worker)",
    )
    parser.add_argument(
        "--step",
        type=step_number,
        default=None,
        metavar="K",
        help="draw the graph as it stands after propagation step K (implies --propagate); "
        "with --view timeline, mark step K",
    )

    parser.add_argument(
        "--animate",
        action="store_true",
        help="write an animation of the graph stepping through the propagation: "
        "--out f.gif, or f.mp4 (H.264; needs pip install 'shardscope[video]'), of the whole "
        "graph or one --scope, at --width or --scale (by default the smallest size with 9-px "
        "labels); steps that change nothing drawn are left out, and long timelines are "
        "sampled to at most 200 frames",
    )
    parser.add_argument(
        "--fps", type=frames_per_second, default=5.0, help="frames per second of --animate"
    )


def frames_per_second(text: str) -> float:
    """argparse type for ``--fps``: from 0.1 to 50."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number: give e.g. 5") from None
    if not 0.1 <= value <= 50:
        raise argparse.ArgumentTypeError(f"{value}: give from 0.1 to 50 frames per second")
    return value


def step_number(text: str) -> int:
    """argparse type for ``--step``: a whole number from 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a step number: give e.g. 12") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value}: steps are numbered from 0")
    return value


def _session(args):
    # Imported when the command runs: every command module is imported to build the
    # parser, and the loading commands should not wait for numpy and jax before their worker starts.
    from shardscope.backend.program.load import load_program
    from shardscope.backend.session.document import Session

    given_mesh(args)  # a bad --mesh or --device-order is told before anything loads
    program = load_program(
        args.program, timeout=args.timeout, while_waiting=getattr(args, "while_loading", None)
    )
    if not args.spec:
        _check_program_specs(program)
    if program.partitioner == "gspmd" and args.view == "graph" and not args.gspmd:
        # GSPMD partitions it (torch_xla): its view is the faithful one, as propagate's.
        args.gspmd = args.propagate = True
    session = Session()
    session.set_program(program)
    mesh = program_mesh(args, program)
    if mesh is not None:
        session.set_mesh(mesh, prune=True)
    for name, spec in parse_spec_args(args.spec).items():
        value = program.graph.value_by_name(name)
        if value is None:
            names = ", ".join(program.arg_names[:6])
            raise ShardscopeError(f"--spec names unknown tensor {name!r}: use one of {names}")
        session.set_spec(value.id, spec)
    if args.propagate:
        from shardscope.backend.propagation.propagate import propagate

        session.set_propagation(
            propagate(program, session.mesh, session.specs_for_propagation(), strict=False)
        )
    return session


def _check_propagate(args) -> None:
    """``--no-propagate`` with an option that shows propagation is a one-line error."""
    if args.propagate:
        return
    given = {
        "--step": args.step is not None,
        "--animate": args.animate,
        "--gspmd": args.gspmd,
        f"--view {args.view}": args.view in ("timeline", "conflicts"),
    }
    needs = next((name for name, on in given.items() if on), None)
    if needs:
        raise ShardscopeError(f"{needs} shows propagation: drop --no-propagate")


def _check_program_specs(program) -> None:
    # The session skips names it cannot place; propagate refuses them, and so does render.
    unknown = program.unknown_spec_names()
    if unknown:
        raise ShardscopeError(
            f"unknown value {unknown[0]!r} in the program's SPECS; valid names: "
            f"{', '.join(program.graph.io_names())} (fix SPECS, or replace it with --spec NAME=SPEC)"
        )


def _write_out(out: Path, draw) -> None:
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


def _save_widget(widget, path: Path) -> None:
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


def _playback(session, step: int | None):
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

    playback = _playback(session, step)
    playback.seek_step(step, quiet=True)
    overlay = StepOverlay(graph)
    overlay.set_spec_override(playback_override(playback, session.specs), None)
    overlay.show_steps(playback.steps())
    return overlay


def _draw_timeline(session, args, path: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from shardscope.viewers.common.colors import THEMES
    from shardscope.viewers.timeline.picture import draw_timeline

    playback = _playback(session, args.step)
    image = draw_timeline(
        playback,
        session.mesh.axis_names,
        THEMES[args.theme],
        width=max(args.width, 800),
        title=session.program.name,
        mark=args.step,
    )
    if path.suffix.lower() == ".svg":
        raise ShardscopeError("--view timeline draws a picture: use a .png or .jpg name")
    if not image.save(str(path)):
        raise OSError(f"Qt could not write {path.name}")
    QApplication.processEvents()


def _check_animate(args, out: Path) -> None:
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


def _animate(session, args, path: Path) -> None:
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
        playback = _playback(session, None)
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


def _paged(out: Path, count: int) -> list[Path]:
    return [out.with_name(f"{out.stem}-{i}{out.suffix}") for i in range(1, count + 1)]


def _check_size(width: float, height: float, args, out: Path, pages: int | None) -> None:
    """A one-line ``ShardscopeError`` when a graph of ``width`` x ``height`` units drawn at
    ``--scale`` would take more than ``MAX_MEGAPIXELS`` (or, given, ``pages`` more than
    ``MAX_PAGES``): before anything is drawn or written."""
    if out.suffix.lower() == ".svg":
        return  # one file, at most PAGE_LIMIT px on a side (export_view)
    area = max(width, 1.0) * max(height, 1.0)
    megapixels = area * args.scale**2 / 1e6
    if megapixels <= MAX_MEGAPIXELS and (pages is None or pages <= MAX_PAGES):
        return
    fits = (MAX_MEGAPIXELS * 1e6 / area) ** 0.5
    if pages is not None and megapixels <= MAX_MEGAPIXELS:
        fits = args.scale * MAX_PAGES / pages
    fits = float(f"{fits * 0.95:.2g}")
    size = f"{pages} pages" if pages is not None else f"{megapixels:.3g} megapixels"
    raise ShardscopeError(
        f"--scale {args.scale:g} would draw the graph as {size}, over the {MAX_PAGES} pages "
        f"and {MAX_MEGAPIXELS} megapixels render writes: give --scale {fits:g} or less, "
        f"--scope NAME for part of the graph, or an .svg --out"
    )


def _draw_graph(session, args, out: Path) -> list[Path]:
    from shardscope.app.cli.render_debugger import mark_graph
    from shardscope.viewers.graph.pages import page_image, plan_pages
    from shardscope.viewers.graph.panel import export_view
    from shardscope.viewers.graph.view import GraphView

    graph = GraphView(session)
    graph.set_style_theme(args.theme)
    overlay = markers = None
    try:
        if args.scope:
            graph.show_scope(scope_path(session, graph, args.scope))
        rect = graph.scene().sceneRect()
        _check_size(rect.width(), rect.height(), args, out, None)
        markers = mark_graph(session, graph, gspmd=args.gspmd)
        overlay = _show_step(session, graph, args.step) if args.step is not None else None
        title = session.program.name + (f" · {args.scope}" if args.scope else "")
        pages = plan_pages(graph, args.scale, title)
        rect = graph.scene().sceneRect()
        _check_size(rect.width(), rect.height(), args, out, len(pages))
        if len(pages) == 1 or out.suffix.lower() == ".svg":
            _write_out(out, lambda path: export_view(graph, path, scale=args.scale))
            return [out]
        files = _paged(out, len(pages))

        def draw(page):
            def write(path: Path) -> None:
                if not page_image(graph, page, args.scale).save(str(path)):
                    raise OSError(f"Qt could not write {path.name}")

            return write

        for file, page in zip(files, pages, strict=True):
            _write_out(file, draw(page))
        return files
    finally:
        if overlay is not None:
            overlay.close()
        if markers is not None:
            markers.close()
        graph.close()


def render(args) -> list[Path]:
    """Render what ``args`` asks for and return the files written (several when a graph
    is split into pages)."""
    from PySide6.QtWidgets import QApplication

    from shardscope.app.window.theme import apply_theme

    out = Path(args.out)
    if args.animate:
        _check_animate(args, out)
    elif out.suffix.lower() not in (".png", ".svg", ".jpg", ".jpeg"):
        raise ShardscopeError(f"--out {out} must end in .png or .svg")
    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_theme(app, args.theme)
    view = args.view
    if args.gspmd and view != "graph":
        raise ShardscopeError("--gspmd marks the graph: use it with --view graph")
    if args.scope and view != "graph":
        raise ShardscopeError("--scope draws one scope of the graph: use it with --view graph")
    if not args.animate:
        args.scale = 1.5 if args.scale is None else args.scale
        args.width = 1200 if args.width is None else args.width
    _check_propagate(args)
    session = _session(args)
    files = [out]
    if args.animate:
        _write_out(out, lambda path: _animate(session, args, path))
    elif view == "graph":
        files = _draw_graph(session, args, out)
    elif view == "conflicts":
        from shardscope.app.cli.render_debugger import conflicts_sheet

        sheet = conflicts_sheet(session, args.width)
        app.processEvents()
        _write_out(out, lambda path: _save_widget(sheet, path))
    elif view == "timeline":
        _write_out(out, lambda path: _draw_timeline(session, args, path))
    elif view == "mesh":
        from shardscope.viewers.mesh.editor import MeshEditor

        editor = MeshEditor()
        editor.set_mesh(session.mesh)
        editor.resize(max(360, args.width // 2), max(360, args.width // 2))
        app.processEvents()
        _write_out(out, lambda path: _save_widget(editor, path))
    elif view.startswith("tiles:"):
        from shardscope.viewers.tensor.tile_grid import TileGridView

        name = view.split(":", 1)[1]
        value = session.graph.value_by_name(name)
        if value is None or value.shape is None:
            names = ", ".join(session.program.arg_names[:6])
            raise ShardscopeError(f"--view tiles:{name}: no such tensor; use one of {names}")
        spec = session.display_spec(value.id)
        grid = TileGridView()
        grid.set_tensor(value.shape, session.mesh, spec if spec is not None else Spec())
        grid.resize(args.width, int(args.width * 0.7))
        app.processEvents()
        _write_out(out, lambda path: _save_widget(grid, path))
    elif view.startswith("run:"):
        from shardscope.app.cli.render_run import heatmap_sheet

        sheet = heatmap_sheet(session, view.split(":", 1)[1], args.width, args.timeout)
        app.processEvents()
        _write_out(out, lambda path: _save_widget(sheet, path))
    else:
        raise ShardscopeError(
            f"--view {view!r} is unknown: use graph, mesh, timeline, tiles:NAME, conflicts or "
            "run:NAME"
        )
    note_mesh_override(session.program, args.mesh)
    return files


def run(args) -> int:
    """Render offscreen (no display needed)."""
    from shardscope.app.window.display import display_problem

    if display_problem() or not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    files = render(args)
    if args.json:
        print(json.dumps({"files": [str(f) for f in files], "pages": len(files)}))
    elif len(files) == 1:
        print(f"wrote {files[0]}")
    else:
        print(f"wrote {len(files)} pages: {', '.join(str(f) for f in files)}")
    return 0
