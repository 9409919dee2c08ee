"""``render --view run:NAME`` runs the program on the devices and draws NAME's heat maps;
a module without Python runs its module; unknown names are one-line errors naming the fix."""

import numpy as np
from PySide6.QtGui import QImage

from shardscope.app.cli.main import main
from shardscope.app.cli.render_run import run_names
from shardscope.backend.program.load import load_program
from shardscope.backend.session.document import Session
from shardscope.viewers.run.heatmap import color_of
from tests.support.inputs import REPO


def test_the_heat_maps_of_an_output_are_drawn_from_a_real_run(tmp_path, qapp, capsys):
    out = tmp_path / "run.png"
    args = ["render", "example:mlp", "--view", "run:result[0]", "--width", "900", "--out", str(out)]
    assert main(args) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    image = QImage(str(out)).convertToFormat(QImage.Format.Format_RGB32)
    assert image.width() == 900
    # the run's own numbers, drawn with the shared scale's colours: compare with a second
    # run of the same program (same seed, same values)
    from shardscope.backend.run.dispatch import run_program
    from shardscope.viewers.run.heatmap import HeatmapView

    result = run_program(load_program("example:mlp"), runs=1, reference=False)
    view = HeatmapView()
    view.resize(900, 400)
    view.set_tensor(result.tensor("result[0]"), (4, 2), result.device_order)
    view.resize(900, view.sizeHint().height())
    for shard in result.tensor("result[0]").shards:
        grid = np.array(shard.values).reshape(shard.values_shape)
        point = view.value_at(shard.device, 2, 7).center()
        want = color_of(grid[2, 7], *view.scale)
        assert image.pixelColor(point).getRgb()[:3] == want.getRgb()[:3]


def test_an_unknown_name_lists_the_valid_ones_without_running(tmp_path, qapp, capsys):
    out = tmp_path / "run.png"
    assert main(["render", "example:mlp", "--view", "run:nope", "--out", str(out)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        "error: --view run:nope: mlp has no argument or output named 'nope'; use one of "
        "params['b1'], params['b2'], params['w1'], params['w2'], x, result[0]"
    )
    assert not out.exists()


def test_a_module_without_python_is_drawn_from_a_run_of_its_module(tmp_path, qapp, capsys):
    source = REPO / "tests" / "inputs" / "mlir" / "sdy.mlir"
    out = tmp_path / "run.png"
    session = Session()
    session.set_program(load_program(str(source)))
    name = run_names(session)[0]
    assert main(["render", str(source), "--view", f"run:{name}", "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    assert QImage(str(out)).width() > 0
