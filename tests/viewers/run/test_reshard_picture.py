"""The reshard picture: a cell per device, the piece each holds, played to its last frame."""

from shardscope.backend.run.reshard import plan_reshard
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import parse_spec
from shardscope.viewers.run.reshard_picture import ReshardPicture

MESH = Mesh.from_dict({"data": 4, "model": 2})


def _picture(qtbot, source: str, target: str) -> ReshardPicture:
    picture = ReshardPicture()
    qtbot.addWidget(picture)
    picture.resize(700, 500)
    plan = plan_reshard(MESH, parse_spec(source), parse_spec(target), (16, 32))
    picture.set_plan(plan, MESH)
    picture.show()
    return picture


def test_each_device_has_a_cell_and_its_piece_sits_where_its_rows_are(qtbot):
    picture = _picture(qtbot, "_,_", "data,_")
    assert set(picture.cells) == set(range(8)) and picture.progress == 1.0
    plan = picture.plan
    for step in plan.steps:
        cell = picture.cells[step.device]
        piece = picture.piece_rect(step.after, cell)
        assert cell.contains(piece.toRect().center())
        # sharded four ways down: each piece is a quarter of its cell's height
        assert round(piece.height() / cell.height(), 3) == 0.25
        assert round(piece.width() / cell.width(), 3) == 1.0


def test_playing_starts_from_the_first_frame_and_a_set_progress_is_kept(qtbot):
    picture = _picture(qtbot, "data,_", "model,_")
    picture.play()
    assert picture.progress < 1.0
    picture.animation.stop()
    picture.set_progress(0.5)
    assert picture.progress == 0.5
    assert not picture.grab().isNull()
