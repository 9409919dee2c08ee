"""The reshard view: choose two shardings of a tensor, see the move (free, local slice or
traffic with bytes) as tiles flying between devices, and the real device_put's verdict."""

import pytest
from PySide6.QtCore import Qt

from shardscope.backend.run.reshard import plan_reshard
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import parse_spec
from shardscope.viewers.run.reshard import FAILED, PASSED, ReshardView, check_text

MESH = Mesh.from_dict({"data": 4, "model": 2})
CHOICES = [("replicated, as from the host", "_,_"), ("as the run placed it", "data,_")]


@pytest.fixture
def view(qtbot):
    widget = ReshardView()
    qtbot.addWidget(widget)
    widget.resize(800, 600)
    widget.show()
    widget.set_tensor("x", (16, 32), "float32", 4, MESH, CHOICES, source=0, target=1)
    return widget


def choose(qtbot, box, text: str) -> None:
    """Type ``text`` into a choice and press Enter, as a user would."""
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), text)
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)


def test_replicated_to_sharded_is_a_local_slice(view, qtbot):
    assert view.plan.kind == "local" and view.plan.bytes == 0
    assert view.kind.text().startswith("Local slice")
    assert view.device_pieces()[0] == "[0:4, 0:32]"
    assert view.device_pieces()[7] == "[12:16, 0:32]"
    # the picture plays to its last frame, which stays
    qtbot.waitUntil(lambda: view.picture.progress == 1.0, timeout=5000)
    assert set(view.picture.cells) == set(range(8))
    # Show the move plays it again from the first frame
    qtbot.mouseClick(view.show_button, Qt.MouseButton.LeftButton)
    assert view.picture.animation.state() == view.picture.animation.State.Running
    assert view.picture.progress < 1.0
    qtbot.waitUntil(lambda: view.picture.progress == 1.0, timeout=5000)


def test_the_same_layout_is_free_and_a_gather_is_traffic_with_bytes(view, qtbot):
    choose(qtbot, view.source, "data,_")
    assert view.plan.kind == "free" and view.plan.moves == ()
    assert view.kind.text().startswith("Free")
    choose(qtbot, view.target, "_,_")
    plan = view.plan
    expected = plan_reshard(MESH, parse_spec("data,_"), parse_spec("_,_"), (16, 32))
    assert plan.kind == "traffic" and plan.bytes == expected.bytes == 8 * 12 * 32 * 4
    assert f"({plan.bytes} bytes)" in view.kind.text()
    assert f"{len(plan.moves)} transfers" in view.kind.text()
    # half-way, the moving tiles are drawn between devices
    view.picture.animation.stop()
    view.picture.set_progress(0.5)
    assert view.picture.progress == 0.5
    view.picture.grab()


def test_a_bad_typed_spec_is_one_line_and_nothing_runs(view, qtbot):
    choose(qtbot, view.target, "nope,_")
    assert view.plan is None
    assert view.kind.text().startswith("Cannot plan this move:")
    assert "\n" not in view.kind.text()
    assert not view.run_button.isEnabled()
    choose(qtbot, view.target, "data,model")
    assert view.plan is not None and view.run_button.isEnabled()


def test_run_it_for_real_asks_and_shows_the_verdict(view, qtbot):
    with qtbot.waitSignal(view.runRequested, timeout=1000):
        qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    plan = view.plan
    view.set_checking()
    assert not view.run_button.isEnabled() and "Running jax.device_put" in view.check.text()
    good = {s.device: {"index": [list(r) for r in s.after], "data_ok": True} for s in plan.steps}
    assert view.show_check(plan, good)
    assert view.check.text().startswith("Checked with jax.device_put on 8 devices")
    assert PASSED.name() in view.check.styleSheet()
    bad = dict(good)
    bad[3] = {"index": [[0, 16], [0, 32]], "data_ok": False}
    assert not view.show_check(plan, bad)
    assert view.check.text() == (
        "jax.device_put disagrees: devices 3 hold another slice than planned; "
        "devices 3 hold wrong values."
    )
    assert FAILED.name() in view.check.styleSheet()
    view.show_check_failed("the reshard check timed out")
    assert view.check.text() == "The real move failed: the reshard check timed out"
    assert view.run_button.isEnabled()


def test_an_answer_for_an_older_choice_is_not_shown(view, qtbot):
    plan = view.plan
    choose(qtbot, view.target, "_,data")
    good = {s.device: {"index": [list(r) for r in s.after], "data_ok": True} for s in plan.steps}
    assert not view.show_check(plan, good)
    assert view.check.text() == ""


def test_missing_devices_are_named():
    plan = plan_reshard(MESH, parse_spec("_,_"), parse_spec("data,_"), (16, 32))
    ok, text = check_text(plan, {0: {"index": [[0, 4], [0, 32]], "data_ok": True}})
    assert not ok and text.endswith("devices 1, 2, 3, 4, 5, 6, 7 hold nothing.")


def test_no_tensor_disables_the_choices(qtbot):
    widget = ReshardView()
    qtbot.addWidget(widget)
    assert not widget.source.isEnabled() and not widget.run_button.isEnabled()
    assert widget.plan is None


def test_a_large_mesh_is_planned_elsewhere_and_only_the_last_answer_shows(qtbot):
    widget = ReshardView()
    qtbot.addWidget(widget)
    asked = []
    widget.plan_async = lambda fn, done, failed: asked.append((fn, done, failed))
    mesh = Mesh.from_dict({"data": 256, "model": 2})
    widget.set_tensor("w", (512, 64), "float32", 4, mesh, [("", "data,_"), ("", "_,_")], 0, 1)
    assert widget.plan is None and widget.kind.text() == "Planning the move on 512 devices…"
    assert not widget.run_button.isEnabled()
    choose(qtbot, widget.target, "data,_")
    assert len(asked) == 2
    fn, done, _failed = asked[0]
    done(fn())  # the answer to the first choice comes late: dropped
    assert widget.plan is None
    fn, done, _failed = asked[1]
    done(fn())
    assert widget.plan.kind == "free" and widget.run_button.isEnabled()
    choose(qtbot, widget.target, "nope,_")
    fn, _done, failed = asked[2]
    failed("the spec names axis 'nope', which the mesh lacks")
    assert widget.kind.text() == (
        "Cannot plan this move: the spec names axis 'nope', which the mesh lacks"
    )


def _held_fraction(view, device: int) -> tuple[float, float, float, float]:
    """Where device's piece sits in its cell, as fractions (x, y, width, height)."""
    cell = view.picture.cells[device]
    piece = view.picture.piece_rect(
        next(s.after for s in view.plan.steps if s.device == device), cell
    )
    return (
        round((piece.x() - cell.x()) / cell.width(), 3),
        round((piece.y() - cell.y()) / cell.height(), 3),
        round(piece.width() / cell.width(), 3),
        round(piece.height() / cell.height(), 3),
    )


def test_a_3d_tensor_says_which_dims_are_drawn_and_the_user_chooses_them(qtbot):
    view = ReshardView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    choices = [("replicated", "_,_,_"), ("as the run placed it", "_,model,data")]
    view.set_tensor("h", (2, 6, 16), "float32", 4, MESH, choices, source=0, target=1)
    box = view.dims_choice
    # The sharded dims are drawn first: dim 1 (model) down, dim 2 (data) across.
    assert box.isVisible() and view.dims_label.isVisible()
    assert box.count() == 3
    assert box.currentText() == "dim 1 (6) down, dim 2 (16) across (of 3)"
    assert view.drawn_dims() == view.picture.dims == (1, 2)
    # device 0 is data 0, model 0: rows 0:3 of dim 1, columns 0:4 of dim 2
    assert _held_fraction(view, 0) == (0.0, 0.0, 0.25, 0.5)
    assert _held_fraction(view, 1) == (0.0, 0.5, 0.25, 0.5)  # model 1: the lower half
    qtbot.waitUntil(lambda: view.picture.progress == 1.0, timeout=5000)
    # The user picks dims 0 and 2 from the list: dim 0 is not split, so whole rows.
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert box.currentText() == "dim 0 (2) down, dim 2 (16) across (of 3)"
    assert view.picture.dims == (0, 2)
    assert _held_fraction(view, 0) == (0.0, 0.0, 0.25, 1.0)
    assert _held_fraction(view, 2) == (0.25, 0.0, 0.25, 1.0)  # data 1
    # The same plan, only drawn another way; a new tensor of rank 2 hides the choice.
    assert view.plan.kind == "local"
    view.set_tensor("x", (16, 32), "float32", 4, MESH, CHOICES, source=0, target=1)
    assert not box.isVisible() and not view.dims_label.isVisible()
    assert view.picture.dims == (0, 1)


def test_the_default_dims_follow_the_specs():
    from shardscope.viewers.run.reshard import default_dims, dim_pairs

    assert dim_pairs(3) == [(0, 1), (0, 2), (1, 2)]
    assert default_dims(4, ["_,_,_,_", "_,_,_,data"]) == (0, 3)
    assert default_dims(4, ["_,model,_,_", "_,_,_,data"]) == (1, 3)
    assert default_dims(3, ["_,_,_", "_"]) == (0, 1)
    assert default_dims(3, ["not a spec ((", "_,_,data"]) == (0, 2)
