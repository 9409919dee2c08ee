"""``render``'s graph: a step's state, one scope, pages of a large graph, animations."""

import pytest
from PySide6.QtGui import QImage

from shardscope.app.cli.main import main
from tests.support.inputs import REPO
from tests.support.pictures import distinct_colors, svg_words


def _pixels_of(path, color) -> int:
    import numpy as np

    img = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB32)
    n = img.bytesPerLine() // 4 * img.height()
    arr = np.frombuffer(img.constBits(), dtype=np.uint32, count=n) & 0xFFFFFF
    return int((arr == (color.rgb() & 0xFFFFFF)).sum())


def test_step_draws_the_state_at_that_step(tmp_path, qapp):
    from shardscope.viewers.common.colors import axis_color

    final = tmp_path / "final.png"
    first = tmp_path / "step0.png"
    third = tmp_path / "step3.png"
    assert main(["render", "example:mlp", "--propagate", "--out", str(final)]) == 0
    assert main(["render", "example:mlp", "--step", "0", "--out", str(first)]) == 0
    assert main(["render", "example:mlp", "--step", "3", "--out", str(third)]) == 0
    model = axis_color(("data", "model"), "model")
    data = axis_color(("data", "model"), "data")
    # at step 0 only the annotated inputs and the first dot hold axes: fewer data chips
    # than at the end, where data reached the whole forward pass
    assert _pixels_of(first, data) < _pixels_of(final, data)
    # step 3 moves model into params['b1']: its ring and edges add model-coloured pixels
    # to a picture that otherwise holds fewer model chips than the final one
    assert QImage(str(third)).size() == QImage(str(final)).size()
    assert _pixels_of(third, model) != _pixels_of(final, model)


def test_step_errors_are_one_line(tmp_path, qapp, capsys):
    out = tmp_path / "x.png"
    assert main(["render", "example:mlp", "--step", "999", "--out", str(out)]) == 1
    assert (
        main(["render", "example:mlp", "--view", "timeline", "--out", str(tmp_path / "t.svg")]) == 1
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error:") for line in err)
    assert "has steps 0 to" in err[0] and ".png" in err[1]
    assert not out.exists() and not (tmp_path / "t.svg").exists()
    with pytest.raises(SystemExit):
        main(["render", "example:mlp", "--step", "-1", "--out", str(out)])


def test_animate_writes_a_gif_of_the_steps(tmp_path, qapp, capsys):
    from PIL import Image, ImageSequence

    out = tmp_path / "mlp.gif"
    assert main(["render", "example:mlp", "--animate", "--fps", "4", "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    with Image.open(out) as gif:
        frames = [(f.size, f.info["duration"]) for f in ImageSequence.Iterator(gif)]
    # mlp's 8 steps, then the final state held longer
    assert len(frames) == 9
    (width, height), _ = frames[0]
    assert 300 < width < 3000 and 300 < height < 3000
    assert [d for _, d in frames[:-1]] == [250] * 8 and frames[-1][1] > 250


def test_animate_errors_are_one_line(tmp_path, qapp, capsys):
    png = tmp_path / "a.png"
    gif = tmp_path / "a.gif"
    assert main(["render", "example:mlp", "--animate", "--out", str(png)]) == 1
    assert main(["render", "example:mlp", "--animate", "--view", "mesh", "--out", str(gif)]) == 1
    assert main(["render", "example:mlp", "--view", "graph", "--out", str(gif)]) == 1
    # nothing annotated, nothing flows: no step to animate
    no_axes = ["--spec", "x=_,_", "--spec", "params['w1']=_,_", "--spec", "params['w2']=_,_"]
    assert main(["render", "example:mlp", "--animate", *no_axes, "--out", str(gif)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("error:") for line in err)
    assert ".gif" in err[0] and "--view" in err[1] and ".png" in err[2] and "no steps" in err[3]
    assert not png.exists() and not gif.exists()
    with pytest.raises(SystemExit):
        main(["render", "example:mlp", "--animate", "--fps", "0", "--out", str(gif)])


def test_animate_writes_an_mp4_that_decodes_to_every_frame(tmp_path, qapp, capsys):
    av = pytest.importorskip("av")
    out = tmp_path / "mlp.mp4"
    assert main(["render", "example:mlp", "--animate", "--fps", "4", "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    with av.open(str(out)) as video:
        stream = video.streams.video[0]
        assert stream.codec_context.name == "h264" and float(stream.average_rate) == 4
        frames = sum(1 for _ in video.decode(video=0))
    # mlp's 8 steps and the final state, which is held 2 s (8 frames at 4 fps)
    assert frames == 8 + 8


def test_mp4_without_pyav_is_one_line_naming_the_extra(tmp_path, qapp, capsys, monkeypatch):
    from shardscope.viewers.graph import video

    monkeypatch.setattr(video, "have_av", lambda: False)
    out = tmp_path / "mlp.mp4"
    assert main(["render", "example:mlp", "--animate", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --animate: MP4 needs PyAV") and "\n" not in err
    assert "shardscope[video]" in err and not out.exists()


def _label_pixels_at(scale):
    from shardscope.backend.session.document import Session
    from shardscope.viewers.graph.pages import label_pixels
    from shardscope.viewers.graph.view import GraphView

    view = GraphView(Session())
    try:
        return label_pixels(view, scale)
    finally:
        view.close()


def test_scope_draws_one_scope_with_its_boundary(tmp_path, qapp, capsys):
    import json

    whole = tmp_path / "whole.png"
    one = tmp_path / "attn.png"
    assert main(["render", "example:transformer", "--out", str(whole)]) == 0
    capsys.readouterr()
    args = ["render", "example:transformer", "--scope", "jvp(layer_0)/attn", "--propagate"]
    assert main([*args, "--json", "--out", str(one)]) == 0
    assert json.loads(capsys.readouterr().out) == {"files": [str(one)], "pages": 1}
    # the attention block unfolded is a picture of its own, not the folded whole graph
    assert QImage(str(one)).size() != QImage(str(whole)).size()
    assert distinct_colors(one) > 20
    svg = tmp_path / "attn.svg"
    assert main([*args, "--out", str(svg)]) == 0
    text = svg.read_text()
    # its weights come in from outside; no other layer's do
    assert "dot_general" in text and "[0]['wq']" in text and "[1]['wq']" not in text


def test_an_unknown_scope_is_one_line_naming_close_ones(tmp_path, qapp, capsys):
    out = tmp_path / "x.png"
    assert main(["render", "example:transformer", "--scope", "layer_1", "--out", str(out)]) == 1
    assert main(["render", "example:mlp", "--view", "mesh", "--scope", "a", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: --scope") for line in err)
    assert "try 'jvp(layer_1)'" in err[0]
    assert "--view graph" in err[1]
    assert list(tmp_path.iterdir()) == []


def test_a_big_graph_is_split_into_readable_pages(tmp_path, qapp, capsys):
    import json

    from tests.support.inputs import PROGRAMS

    # a 24-layer transformer is tall, a model with 96 parameters side by side is wide
    for source, name in (
        ("example:transformer?layers=24", "t24.png"),
        (str(PROGRAMS / "wide_params.py"), "wide.png"),
    ):
        out = tmp_path / name
        assert main(["render", source, "--json", "--out", str(out)]) == 0
        report = json.loads(capsys.readouterr().out)
        files = report["files"]
        assert report["pages"] == len(files) >= 2 and not out.exists()
        assert files == [
            str(out.with_name(f"{out.stem}-{i}.png")) for i in range(1, len(files) + 1)
        ]
        for file in files:
            image = QImage(file)
            assert max(image.width(), image.height()) <= 8000 + 40
            assert distinct_colors(file) > 8
    # at the default scale the smallest label is readable; --help names the page size
    from shardscope.app.cli.render import PAGE_LIMIT
    from shardscope.viewers.graph.pages import PAGE_PIXELS

    assert _label_pixels_at(1.5) >= 9 and PAGE_LIMIT == PAGE_PIXELS
    out = tmp_path / "p.png"
    assert main(["render", "example:transformer?layers=24", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("wrote 2 pages: ") and str(out.with_name("p-2.png")) in printed


def test_a_scale_too_large_to_draw_is_refused_before_anything_is_written(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    for scale in ("1000", "1e12"):
        out = tmp_path / "g.png"
        argv = ["render", "example:mlp", "--scale", scale, "--out", str(out)]
        proc = subprocess.run(
            [sys.executable, "main.py", *argv],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 1, proc.stderr[-2000:]
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith(f"error: --scale {float(scale):g} would draw the graph as ")
        assert "megapixels" in line and "give --scale " in line and "or less" in line
        assert list(tmp_path.iterdir()) == []


def test_too_many_pages_are_refused_before_any_is_written(tmp_path, qapp, capsys, monkeypatch):
    from shardscope.viewers.graph import pages

    monkeypatch.setattr(pages, "MAX_PAGES", 1)
    out = tmp_path / "p.png"
    assert main(["render", "example:transformer?layers=24", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --scale 1.5 would draw the graph as 2 pages, over the 1 pages")
    assert "give --scale 0.71 or less" in err
    assert list(tmp_path.iterdir()) == []


def test_animate_draws_one_scope_at_a_legible_width_as_the_window_does(tmp_path, qapp, capsys):
    from PIL import Image, ImageSequence

    whole, layer = tmp_path / "whole.gif", tmp_path / "layer.gif"
    assert main(["render", "example:transformer", "--animate", "--out", str(whole)]) == 0
    args = ["render", "example:transformer", "--animate", "--scope", "jvp(layer_1)"]
    assert main([*args, "--out", str(layer)]) == 0
    with Image.open(whole) as a, Image.open(layer) as b:
        counts = [sum(1 for _ in ImageSequence.Iterator(g)) for g in (a, b)]
        sizes = [a.size, b.size]
    # the layer's own steps only, at the narrowest width with 9-px labels
    assert counts[1] < counts[0]
    assert sizes[1] != sizes[0] and sizes[1][0] > 600
    narrow = tmp_path / "narrow.gif"
    assert main([*args, "--width", "300", "--out", str(narrow)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --animate: labels would be") and "\n" not in err
    assert f"--width {sizes[1][0]} or more" in err and not narrow.exists()
    assert main([*args, "--width", "900", "--scale", "1", "--out", str(narrow)]) == 1
    assert "a --width or a --scale" in capsys.readouterr().err


def test_a_scope_picture_names_each_scope_once_clear_of_the_others_and_frames_no_empty_one(
    tmp_path, qapp, capsys
):
    from shardscope.backend.program.load import load_program
    from shardscope.backend.session.document import Session
    from shardscope.viewers.graph.items import ScopeBoxItem
    from shardscope.viewers.graph.view import GraphView

    session = Session()
    session.set_program(load_program("example:transformer"))
    view = GraphView(session)
    try:
        for scope in ("jvp(layer_0)", "jvp(layer_1)", "jvp(layer_0)/attn"):
            view.show_scope(scope)  # what render --scope draws
            boxes = [i for i in view.scene().items() if isinstance(i, ScopeBoxItem)]
            assert boxes
            names = [(b.box.label, r) for b in boxes for r in b._headers]
            for k, (label, rect) in enumerate(names):
                for other, rect2 in names[k + 1 :]:
                    assert not rect.intersects(rect2), (scope, label, other)
            for box in boxes:
                # a box holds a node of its own, not only the boxes of its scopes
                own = [
                    view.layout_.nodes[i]
                    for i in box.box.nodes
                    if view.layout_.nodes[i].scope == box.box.path
                    or view.layout_.nodes[i].kind == "scope"
                    and view.layout_.nodes[i].scope.rsplit("/", 1)[0] == box.box.path
                ]
                assert own, box.box.path
            # the scope drawn is the picture's own: no frame around everything
            assert scope not in [b.box.path for b in boxes] or scope.endswith("attn")
    finally:
        view.close()
    out = tmp_path / "l0.svg"
    assert (
        main(["render", "example:transformer", "--scope", "jvp(layer_0)", "--out", str(out)]) == 0
    )
    words = svg_words(out)
    assert words["▾ attn"] >= 1 and words["▾ jvp(layer_0)"] == 0
