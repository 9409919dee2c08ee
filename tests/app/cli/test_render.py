"""``render`` draws non-blank pictures for every built-in example, offscreen."""

import pytest
from PySide6.QtGui import QImage

from shardscope.app.cli.main import main
from shardscope.backend.program.load import list_examples
from tests.support.inputs import REPO
from tests.support.pictures import distinct_colors, svg_words


@pytest.mark.parametrize("example", list_examples())
def test_graph_png_for_every_example(example, tmp_path, qapp):
    out = tmp_path / f"{example}.png"
    assert main(["render", f"example:{example}", "--view", "graph", "--out", str(out)]) == 0
    assert distinct_colors(out) > 20
    assert QImage(str(out)).width() > 200


def test_svg_mesh_and_tiles(tmp_path, qapp):
    svg = tmp_path / "g.svg"
    assert main(["render", "example:mlp", "--spec", "x=data,model", "--out", str(svg)]) == 0
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert "<image" not in text  # vector items, not cached bitmaps
    assert text.count("<text") > 20 and "model" in text and "dot_general" in text
    mesh = tmp_path / "mesh.png"
    assert (
        main(["render", "example:mlp", "--view", "mesh", "--mesh", "a=2,b=4", "--out", str(mesh)])
        == 0
    )
    assert distinct_colors(mesh) > 8
    tiles = tmp_path / "tiles.png"
    assert main(["render", "example:mlp", "--view", "tiles:x", "--out", str(tiles)]) == 0
    assert distinct_colors(tiles) > 4


def test_render_errors_are_one_line(tmp_path, qapp, capsys):
    out = tmp_path / "x.png"
    assert main(["render", "example:mlp", "--view", "tiles:nope", "--out", str(out)]) == 1
    assert main(["render", "example:mlp", "--spec", "x=data,data", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error:") for line in err)


def test_render_in_a_fresh_process_writes_complete_files(tmp_path):
    # ``python main.py`` ends headless commands with os._exit: whatever they wrote must
    # be complete on disk by then.
    import os
    import subprocess
    import sys

    root = REPO
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    svg, png = tmp_path / "g.svg", tmp_path / "m.png"
    for out, view in ((svg, "graph"), (png, "mesh")):
        proc = subprocess.run(
            [sys.executable, "main.py", "render", "example:mlp", "--view", view, "--out", str(out)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert svg.read_text().rstrip().endswith("</svg>")
    assert not QImage(str(png)).isNull()


def test_a_program_on_its_own_mesh_axes_renders_and_propagates(tmp_path, qapp, capsys):
    # Its sharding names dp and tp, and it sets no MESH: render used to abort Shardy
    # (unknown axis name) with its default mesh, where propagate used the program's own.
    from tests.support.inputs import PROGRAMS

    source = str(PROGRAMS / "own_mesh_axes.py")
    out = tmp_path / "graph.png"
    assert main(["render", source, "--propagate", "--out", str(out)]) == 0
    assert not QImage(str(out)).isNull()
    capsys.readouterr()
    assert (
        main(["render", source, "--propagate", "--mesh", "data=4,model=2", "--out", str(out)]) == 1
    )
    err = capsys.readouterr().err.strip()
    assert "mesh axes dp, tp, which the mesh data=4, model=2 lacks" in err and "\n" not in err


def test_a_scale_that_is_not_positive_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "g.png"
    with pytest.raises(SystemExit) as info:
        main(["render", "example:mlp", "--scale", "-5", "--out", str(out)])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "> 0" in err
    assert not out.exists()


def test_unknown_names_in_the_programs_specs_are_an_error_as_in_propagate(tmp_path, qapp, capsys):
    from tests.support.inputs import INPUTS

    source = str(INPUTS / "hostile" / "specs_unknown_name.py")
    out = tmp_path / "g.png"
    assert main(["render", source, "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unknown value 'not_a_tensor'") and "\n" not in err
    assert not out.exists()
    assert main(["render", source, "--spec", "x=data,_", "--out", str(out)]) == 0


def test_a_mesh_replacing_the_programs_own_is_noted_on_stderr(tmp_path, qapp, capsys):
    out = tmp_path / "g.png"
    assert main(["render", "example:mlp", "--mesh", "data=2,model=4", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "note: --mesh data=2,model=4 replaces the program's own mesh (data=4, model=2)" in (
        captured.err
    )
    assert captured.out.strip() == f"wrote {out}"


def test_timeline_picture(tmp_path, qapp):
    out = tmp_path / "tl.png"
    assert (
        main(["render", "example:mlp", "--view", "timeline", "--width", "1000", "--out", str(out)])
        == 0
    )
    img = QImage(str(out))
    assert img.width() == 1000 and distinct_colors(out) > 8
    marked = tmp_path / "tl3.png"
    assert (
        main(
            [
                "render",
                "example:mlp",
                "--view",
                "timeline",
                "--step",
                "3",
                "--width",
                "1000",
                "--out",
                str(marked),
            ]
        )
        == 0
    )
    assert QImage(str(marked)) != img


def test_a_device_order_lays_out_the_session_and_the_mesh_picture(tmp_path, qapp, capsys):
    from shardscope.app.cli.main import build_parser
    from shardscope.app.cli.render import _session

    order = "7,6,5,4,3,2,1,0"
    args = build_parser().parse_args(
        ["render", "example:mlp", "--view", "tiles:x", "--device-order", order, "--out", "t.png"]
    )
    session = _session(args)
    assert session.mesh.device_order == (7, 6, 5, 4, 3, 2, 1, 0)
    assert session.mesh.shape == {"data": 4, "model": 2}
    pictures = []
    for extra in ([], ["--device-order", order]):
        out = tmp_path / f"mesh{len(pictures)}.png"
        argv = ["render", "example:mlp", "--view", "mesh", "--out", str(out), *extra]
        assert main(argv) == 0
        pictures.append(QImage(str(out)))
    assert pictures[0].size() == pictures[1].size() and pictures[0] != pictures[1]
    capsys.readouterr()
    assert main(["render", "example:mlp", "--device-order", "0,1", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: device order has 2 ids but the mesh has 8 devices: list each of the 8 "
        "device ids exactly once"
    )


def test_render_propagates_by_default_as_propagate_json_does(tmp_path, qapp, capsys):
    import json
    from collections import Counter

    from shardscope.backend.program.load import load_program
    from shardscope.backend.session.document import Session
    from shardscope.viewers.graph.view import GraphView

    default, plain, asked = (tmp_path / f"{n}.svg" for n in ("default", "plain", "asked"))
    assert main(["render", "example:mlp", "--out", str(default)]) == 0
    assert main(["render", "example:mlp", "--no-propagate", "--out", str(plain)]) == 0
    assert main(["render", "example:mlp", "--propagate", "--out", str(asked)]) == 0
    capsys.readouterr()
    assert main(["propagate", "example:mlp", "--json"]) == 0
    specs = {v["id"]: v["spec"] for v in json.loads(capsys.readouterr().out)["values"]}
    # the chips each drawn badge should show, from propagate --json's final shardings
    view = GraphView(Session())
    view.session.set_program(load_program("example:mlp"))
    try:
        drawn = [b.value_id for b in view.badges if b.value_id is not None]
    finally:
        view.close()
    expected = Counter("+".join(d) or "_" for vid in drawn for d in specs[vid])
    words = svg_words(default)
    assert words["?"] == 0
    assert {w: words[w] for w in expected} == dict(expected)
    assert words == svg_words(asked)
    # opting out draws '?' on every badge nobody annotated, and fewer axis chips
    bare = svg_words(plain)
    assert bare["?"] > 0 and bare["model"] + bare["data"] < words["model"] + words["data"]


def test_no_propagate_with_what_needs_propagation_is_one_line(tmp_path, qapp, capsys):
    gif, png = tmp_path / "a.gif", tmp_path / "a.png"
    assert main(["render", "example:mlp", "--no-propagate", "--animate", "--out", str(gif)]) == 1
    assert main(["render", "example:mlp", "--no-propagate", "--step", "2", "--out", str(png)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: --animate shows propagation: drop --no-propagate",
        "error: --step shows propagation: drop --no-propagate",
    ]
    assert list(tmp_path.iterdir()) == []


def test_hosts_and_dcn_lay_the_mesh_over_hosts_as_propagate_does(tmp_path, qapp, capsys):
    from shardscope.app.cli.main import build_parser
    from shardscope.app.cli.render import _session
    from shardscope.backend.session.host_layout import HostLayout

    args = build_parser().parse_args(["render", "example:mlp", "--hosts", "2", "--out", "m.png"])
    session = _session(args)
    assert session.hosts == HostLayout(2) and session.mesh.device_order == tuple(range(8))
    svg = tmp_path / "mesh.svg"
    argv = ["render", "example:mlp", "--view", "mesh", "--dcn", "data=2", "--out", str(svg)]
    assert main(argv) == 0
    words = svg_words(svg)
    assert words["4 devices per host · DCN data=2"] == 1 and words["h1"] == 4
    assert words["2 hosts, 4 devices each: h0 0–3 · h1 4–7"] == 1
    capsys.readouterr()
    for bad in (["--hosts", "3"], ["--dcn", "model=3"]):
        assert main(["render", "example:mlp", *bad, "--out", str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error:") for line in err), err
    assert "do not split evenly among 3 hosts" in err[0]
    assert "axis model has size 2" in err[1]
    assert not (tmp_path / "x.png").exists()
