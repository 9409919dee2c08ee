"""``render``: draw a view of a program to a PNG or SVG file, without a window."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Protocol

from shardscope.app.cli.options import (
    LAY_OUT_HOSTS_HELP,
    HostsArgs,
    ProgramArgs,
    add_hosts_options,
    add_program_options,
    given_mesh,
    hosts_of,
    note_mesh_override,
    parse_spec_args,
    positive_number,
    program_mesh,
)
from shardscope.app.cli.render_file import save_widget, write_out
from shardscope.app.cli.render_graph import (
    GraphPictureArgs,
    animate,
    check_animate,
    draw_graph,
    playback_at,
)
from shardscope.backend.errors import ShardscopeError, shortened
from shardscope.backend.files import shown_path
from shardscope.backend.sharding.spec import Spec

NAME = "render"
HELP = "render the program graph, the mesh or a tensor's tiles to a PNG or SVG file"
LOADS_PROGRAM = True
MAX_WIDTH = 16_384
# Pages of a big graph picture (viewers.graph.pages.PAGE_PIXELS; Qt is imported only when
# the command draws).
PAGE_LIMIT = 8000


class RenderArgs(ProgramArgs, HostsArgs, GraphPictureArgs, Protocol):
    """What ``render`` reads of its parsed options."""

    out: str
    json: bool
    propagate: bool
    animate: bool


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
    _add_picture_options(parser)
    _add_propagation_options(parser)
    _add_animation_options(parser)
    add_hosts_options(
        parser,
        hosts_help=LAY_OUT_HOSTS_HELP + ": --view mesh draws the hosts, and --view run:NAME "
        "runs on them",
    )


def _add_picture_options(parser) -> None:
    """What to draw, where, and how large."""
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


def _add_propagation_options(parser) -> None:
    """Which propagation the graph shows."""
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


def _add_animation_options(parser) -> None:
    """``--animate`` and its frame rate."""
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


def _session(args: RenderArgs):
    # Imported when the command runs: every command module is imported to build the
    # parser, and the loading commands should not wait for numpy and jax before their worker starts.
    from shardscope.backend.program.load import load_program
    from shardscope.backend.session.document import Session

    # A bad --mesh, --device-order, --hosts or --dcn is told before anything loads.
    hosts_of(args, given_mesh(args))
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
    mesh, hosts = hosts_of(args, program_mesh(args, program), program)
    if mesh is not None:
        session.set_mesh(mesh, prune=True, hosts=_layout(args, mesh, hosts))
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


def _layout(args: RenderArgs, mesh, hosts):
    """The session's ``HostLayout`` for ``mesh`` laid over ``hosts`` (``hosts_of``)."""
    from shardscope.backend.session.host_layout import HostLayout
    from shardscope.backend.sharding.hosts import parse_dcn

    if hosts is None or hosts.count == 1:
        return HostLayout()
    if not args.dcn:
        return HostLayout(hosts.count)
    factors = parse_dcn(args.dcn, mesh)
    return HostLayout(hosts.count, tuple((n, int(factors.get(n, 1))) for n in mesh.axis_names))


def _check_propagate(args: RenderArgs) -> None:
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


def _draw_timeline(session, args: RenderArgs, path: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from shardscope.viewers.common.colors import THEMES
    from shardscope.viewers.timeline.picture import draw_timeline

    playback = playback_at(session, args.step)
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


def render(args: RenderArgs) -> list[Path]:
    """Render what ``args`` asks for and return the files written (several when a graph
    is split into pages)."""
    from PySide6.QtWidgets import QApplication

    from shardscope.app.window.theme import apply_theme

    out = Path(args.out)
    if args.animate:
        check_animate(args, out)
    elif out.suffix.lower() not in (".png", ".svg", ".jpg", ".jpeg"):
        raise ShardscopeError(f"--out {shown_path(out)} must end in .png or .svg")
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
        write_out(out, lambda path: animate(session, args, path))
    elif view == "graph":
        files = draw_graph(session, args, out)
    elif view == "timeline":
        write_out(out, lambda path: _draw_timeline(session, args, path))
    else:
        widget = _view_widget(session, view, args)
        app.processEvents()
        write_out(out, lambda path: save_widget(widget, path))
    note_mesh_override(session.program, args.mesh)
    return files


def _view_widget(session, view: str, args: RenderArgs):
    """The widget ``--view`` draws, other than the graph and the timeline, laid out at
    ``--width``."""
    if view == "conflicts":
        from shardscope.app.cli.render_debugger import conflicts_sheet

        return conflicts_sheet(session, args.width)
    if view == "mesh":
        from shardscope.viewers.mesh.editor import MeshEditor

        editor = MeshEditor()
        editor.set_mesh(session.mesh)
        editor.set_hosts(session.hosts)
        editor.resize(max(360, args.width // 2), max(360, args.width // 2))
        return editor
    if view.startswith("tiles:"):
        from shardscope.viewers.tensor.tile_grid import TileGridView

        name = view.split(":", 1)[1]
        value = session.graph.value_by_name(name)
        if value is None or value.shape is None:
            names = ", ".join(session.program.arg_names[:6])
            raise ShardscopeError(
                f"--view tiles:{shortened(name)}: no such tensor; use one of {names}"
            )
        spec = session.display_spec(value.id)
        grid = TileGridView()
        grid.set_tensor(value.shape, session.mesh, spec if spec is not None else Spec())
        grid.resize(args.width, int(args.width * 0.7))
        grid.set_largest_plot(args.width - 100, int(args.width * 0.7) - 160)
        return grid
    if view.startswith("run:"):
        from shardscope.app.cli.render_run import heatmap_sheet

        return heatmap_sheet(session, view.split(":", 1)[1], args.width, args.timeout)
    raise ShardscopeError(
        f"--view {shortened(view)} is unknown: use graph, mesh, timeline, tiles:NAME, conflicts or run:NAME"
    )


def run(args: RenderArgs) -> int:
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
