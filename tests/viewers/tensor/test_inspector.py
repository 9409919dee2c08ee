from PySide6.QtCore import QMimeData, QPoint, QPointF, QRect
from PySide6.QtGui import QRegion

from shardscope.backend.program.graph import Value
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import parse_spec
from shardscope.viewers.common.mime import axis_mime_data
from shardscope.viewers.tensor.inspector import TensorInspector
from tests.support import qt_events
from tests.support.paints import PaintLog, fresh, on_screen, region_area, wait_painted

MESH = parse_mesh("data=4,model=2")


def value(shape=(16, 32), vid=7):
    return Value(
        id=vid,
        ssa="%arg0",
        shape=shape,
        dtype="f32",
        role="argument",
        function="main",
        display_name="params['w1']",
    )


def make(qtbot, spec="data,_", shape=(16, 32)):
    ins = TensorInspector()
    qtbot.addWidget(ins)
    ins.resize(600, 620)
    ins.set_value(value(shape), MESH, parse_spec(spec), None)
    return ins


def drop(widget, mime):
    return qt_events.drop(widget, QPointF(5, 5), mime)


def test_axis_drop_on_dim1_emits(qtbot):
    ins = make(qtbot)
    seen = []
    ins.specDropped.connect(lambda *a: seen.append(a))
    event = drop(ins.slot(1), axis_mime_data("model"))
    assert seen == [(7, 1, "model")] and event.isAccepted()
    drop(ins.slot(0), axis_mime_data(None))
    assert seen[-1] == (7, 0, None)
    assert ins.spec.format() == "data,_"


def test_foreign_drop_is_ignored(qtbot):
    ins = make(qtbot)
    seen = []
    ins.specDropped.connect(lambda *a: seen.append(a))
    foreign = QMimeData()
    foreign.setText("model")
    event = drop(ins.slot(1), foreign)
    assert seen == [] and not event.isAccepted()


def test_context_menu_emits_actions(qtbot):
    ins = make(qtbot, "data?@p2,_")
    seen = []
    ins.specMenuAction.connect(lambda *a: seen.append(a))
    menu = ins.slot(0).build_menu()
    actions = {a.text(): a for a in menu.actions()}
    assert actions["Open (?)"].isChecked()
    actions["Closed"].trigger()
    prio = {a.text(): a for a in actions["Priority"].menu().actions()}
    assert prio["p2"].isChecked()
    prio["p0"].trigger()
    actions["Clear (replicate)"].trigger()
    assert seen == [(7, 0, "closed", None), (7, 0, "priority", 0), (7, 0, "clear", None)]


def test_texts_computed_from_mesh_and_spec(qtbot):
    ins = make(qtbot, "data,model")
    assert ins.text_labels["jax"].text() == "P('data', 'model')"
    assert ins.text_labels["sdy"].text() == '#sdy.sharding<@mesh, [{"data"}, {"model"}]>'
    assert ins.text_labels["hlo"].text().startswith("{devices=[4,2]")
    assert ins.text_labels["kind"].text() == "tiled"
    assert ins.tile_grid.image_data().shape == (4, 2)
    given = {"jax": "J", "sdy": "S", "hlo": "H", "kind": "K"}
    ins.set_value(value(), MESH, parse_spec("data,model"), given)
    assert ins.text_labels["hlo"].text() == "H"


def test_slots_follow_rank_and_render(qtbot, render_dir, count_colors):
    ins = make(qtbot, "data,_?,model@p1", shape=(10, 64, 30))
    assert len(ins.slots) == 3
    assert ins.slot(2).spec.priority == 1
    ins.show()
    qtbot.waitExposed(ins)
    image = ins.grab()
    image.save(str(render_dir / "inspector.png"))
    assert count_colors(image) > 10


def test_tiles_and_texts_show_the_decided_layout_chips_the_asked_one(qtbot):
    ins = TensorInspector()
    qtbot.addWidget(ins)
    ins.set_value(value(), MESH, parse_spec("?,model"), tiles=parse_spec("data,model"))
    assert ins.tile_grid.summary.text() == "8 tiles"
    assert ins.text_labels["jax"].text() == "P('data', 'model')"
    assert ins.slot(0).spec == parse_spec("?").dims[0]


def _shown(qtbot, spec="data,_", shape=(16, 32)):
    ins = make(qtbot, spec, shape)
    ins.show()
    qtbot.waitExposed(ins)
    wait_painted(qtbot, ins)
    return ins


def test_showing_the_same_tensor_again_repaints_nothing(qtbot):
    ins = _shown(qtbot)
    with PaintLog(ins) as log:
        ins.set_value(value(), MESH, parse_spec("data,_"), None)
        qtbot.wait(50)
    assert log.events == []


def test_another_tensor_repaints_only_what_changed_and_the_screen_is_right(qtbot):
    ins = _shown(qtbot)
    slots = list(ins.slots)
    with PaintLog(ins) as log:
        # same rank, same tiles: the title, a size and the texts change
        ins.set_value(value((16, 64), vid=8), MESH, parse_spec("data,_"), None)
        qtbot.wait(50)
    assert ins.slots == slots  # the chips are kept, not rebuilt
    assert 0 < log.area() < ins.width() * ins.height() / 3
    assert on_screen(ins) == fresh(ins)
    # a tensor of another rank and sharding: new chips, new tiles, all of it drawn right
    ins.set_value(value((8, 4, 32), vid=9), MESH, parse_spec("_,model,data"), None)
    qtbot.wait(50)
    assert len(ins.slots) == 3 and all(s.isVisible() and s.updatesEnabled() for s in ins.slots)
    assert on_screen(ins) == fresh(ins)
    # and back to no tensor
    ins.set_value(None, MESH, None, None)
    qtbot.wait(50)
    assert ins.hint.isVisible() and on_screen(ins) == fresh(ins)


def test_an_hlo_text_wrapping_to_two_lines_leaves_the_tile_grid_where_it_was(qtbot):
    ins = _shown(qtbot)
    short = {"jax": "P('data', None)", "sdy": "#sdy", "hlo": "{replicated}", "kind": "sharded"}
    ins.set_value(value(vid=8), MESH, parse_spec("data,_"), short)
    wait_painted(qtbot, ins)
    hlo = ins.text_labels["hlo"]
    line = hlo.fontMetrics().lineSpacing()
    grid, caption = ins.tile_grid.geometry(), ins.text_captions["kind"].geometry()
    assert hlo.text() == "{replicated}"
    # a one-line text sits at the top of its two lines, level with its caption
    assert abs(hlo.y() - ins.text_captions["hlo"].y()) < line // 2
    wide = dict(short, hlo=" ".join(["{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"] * 2))
    ins.set_value(value(vid=9), MESH, parse_spec("data,_"), wide)
    wait_painted(qtbot, ins)
    # the text takes two lines: longer than one, shorter than two
    assert 1 < hlo.fontMetrics().horizontalAdvance(wide["hlo"]) / hlo.width() < 1.9
    assert hlo.height() >= 2 * line
    assert ins.tile_grid.geometry() == grid
    assert ins.text_captions["kind"].geometry() == caption
    assert on_screen(ins) == fresh(ins)


def _empty(qtbot, width=600):
    ins = TensorInspector()
    qtbot.addWidget(ins)
    ins.resize(width, 620)
    ins.show()
    qtbot.waitExposed(ins)
    wait_painted(qtbot, ins)
    return ins


def _places(ins):
    grid = ins.tile_grid
    # the plot's box, and the plot's and its tiles' top left corners (the plot is as
    # large as its tensor's aspect asks)
    return (
        grid.geometry(),
        grid.plot_box.geometry(),
        grid.plot.pos(),
        grid.view_box.sceneBoundingRect().topLeft(),
        ins.details.geometry(),
    )


def test_the_empty_inspector_shows_the_empty_grid_with_its_hint_where_the_tiles_go(qtbot):
    ins = _empty(qtbot)
    assert ins.title.text() == "No tensor selected"
    grid = ins.tile_grid
    assert grid.plot.isVisible() and ins.details.isVisible()
    assert ins.hint.isVisible() and "Select a tensor" in ins.hint.text()
    # the hint lies inside the plot, not below it
    assert ins.hint.parentWidget() is grid.plot.viewport()
    assert grid.plot.viewport().rect().contains(ins.hint.geometry().center())
    assert {k: ins.text_labels[k].text() for k in ("jax", "sdy", "hlo", "kind")} == dict.fromkeys(
        ("jax", "sdy", "hlo", "kind"), "\u2014"
    )
    assert ins.text_labels["torch_xla"].isHidden() and ins.text_labels["dtensor"].isHidden()
    assert grid.image_data().shape == (1, 1) and not grid.row_combo.isEnabled()
    # the plot's own background, as under tiles, around the hint
    plot = grid.plot.grab().toImage()
    corner = plot.pixelColor(grid.view_box.sceneBoundingRect().toRect().topLeft() + QPoint(3, 3))
    assert corner == grid.plot.backgroundBrush().color()


def test_the_first_tensor_into_the_empty_inspector_moves_nothing(qtbot):
    # 406: the dock's width in the default layout, where this summary wraps to 3 lines
    for width, spec, summary in (
        (600, "_,model,data", "8 tiles"),
        (406, "_,model,_", "2 tiles \u00b7 each on 4 devices"),
    ):
        ins = _empty(qtbot, width)
        places = _places(ins)
        with PaintLog(ins) as log:
            ins.set_value(value((8, 4, 32)), MESH, parse_spec(spec), None)
            wait_painted(qtbot, ins)
        assert not ins.hint.isVisible() and ins.tile_grid.summary.text() == summary
        assert _places(ins) == places
        assert on_screen(ins) == fresh(ins)
        # outside the tiles, only texts, chips and controls change: a small part of it
        outside = log.region() - QRegion(
            QRect(ins.tile_grid.plot.mapTo(ins.window(), QPoint(0, 0)), ins.tile_grid.plot.size())
        )
        assert 0 < region_area(outside) < ins.width() * ins.height() / 4
        # and clearing goes back to the empty state, in the same places
        ins.set_value(None, MESH, None, None)
        wait_painted(qtbot, ins)
        assert ins.hint.isVisible() and ins.title.text() == "No tensor selected"
        assert ins.slots == [] and ins.tile_grid.summary.text() == ""
        assert _places(ins) == places
        assert on_screen(ins) == fresh(ins)


def test_a_value_without_a_mesh_or_a_shape_says_why_it_has_no_tiles(qtbot):
    ins = _empty(qtbot)
    ins.set_value(value(), None, parse_spec("_,_"), {"kind": "replicated"})
    assert ins.hint.isVisible() and "No mesh" in ins.hint.text()
    ins.set_value(value(shape=None), MESH, parse_spec(""), {"kind": "replicated"})
    assert ins.hint.isVisible() and "shape is unknown" in ins.hint.text()
    ins.set_value(value(), MESH, parse_spec("data,_"), None)
    assert not ins.hint.isVisible() and ins.tile_grid.image_data().shape == (4, 1)
