"""The badge legend: opened from the button in the graph's corner, it shows each mark
with the graph's own items and says what it means."""

from PySide6.QtCore import Qt

from shardscope.viewers.graph.items import BadgeItem, NodeItem
from shardscope.viewers.graph.legend import LegendButton
from shardscope.viewers.graph.markers import (
    CollectiveMarkItem,
    ConflictMarkItem,
    GspmdMarkItem,
    SpecNotesItem,
    WarningMarkItem,
)
from tests.support.inputs import INPUTS


def test_the_corner_button_opens_the_legend(panel_for, qtbot, render_dir, count_colors):
    session, panel = panel_for("example:conflict")
    view = panel.view
    button = LegendButton(view)
    port = view.viewport()
    assert button.isVisible()
    assert button.geometry().bottom() < port.height() and button.x() < 20
    panel.resize(1200, 800)
    qtbot.waitUntil(lambda: button.geometry().bottom() >= port.height() - 12)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = button.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.addWidget(dialog)
    scene = dialog.legend
    entries = "\n".join(scene.entries)
    for words in (
        "you set",
        "program's own code",
        "propagation",
        "selected",
        "open",
        "priority",
        "conflict",
        "folded scope",
        "collectives",
        "GSPMD",
        "XLA logged a warning",
        "the other pane differs",
    ):
        assert words in entries, words
    items = scene.items()
    kinds = {type(i) for i in items}
    assert {
        BadgeItem,
        NodeItem,
        ConflictMarkItem,
        CollectiveMarkItem,
        GspmdMarkItem,
        SpecNotesItem,
        WarningMarkItem,
    } <= kinds
    origins = {i.origin for i in items if isinstance(i, BadgeItem)}
    assert {"user", "code", "propagated", "none"} <= origins
    assert any(i.isSelected() for i in items if isinstance(i, BadgeItem))
    image = dialog.grab()
    image.save(str(render_dir / "legend.png"))
    assert count_colors(image) > 20
    # Opening it again replaces the window rather than stacking another.
    first = dialog
    button.open_legend()
    assert button.dialog is not first
    qtbot.addWidget(button.dialog)


def test_the_legend_explains_the_timeline_rings_the_step_edges_and_the_selection(panel_for, qtbot):
    from shardscope.backend.propagation.timeline import Step
    from shardscope.viewers.graph.legend import BadgeLegend
    from shardscope.viewers.graph.markers import GraphMarkers, SelectedMarkItem
    from shardscope.viewers.graph.step_overlay import StepOverlay

    session, panel = panel_for("example:mlp")
    view = panel.view
    graph = session.graph
    # what the graph draws: a step moving "model" through a dot, a changed badge, the
    # inspected tensor
    overlay = StepOverlay(view)
    x = graph.value_by_name("x").id
    (dot,) = [op.id for op in graph.ops if x in op.operands and op.name == "stablehlo.dot_general"]
    out = graph.ops[dot].results[0]
    overlay.show_steps(
        [Step(0, dot, "stablehlo.dot_general", "model", "operand-0", ("result-0",), (out,), x)]
    )
    overlay.set_changed([x])
    markers = GraphMarkers(view)
    markers.set_inspected(x)

    def drawn(tag):
        return [i for i in view.scene().items() if i.data(0) == tag]

    (ring,) = drawn("step-ring")
    flow = drawn("step-flow")[0]
    (changed,) = drawn("changed")
    (selected,) = [m for m in view.badge_for(x).childItems() if isinstance(m, SelectedMarkItem)]

    dialog = BadgeLegend(view.style_)
    qtbot.addWidget(dialog)
    dialog.show()
    legend = dialog.legend
    entries = "\n".join(legend.entries)
    for words in ("timeline step", "ringed in the colour of the axis", "edges the axis flows"):
        assert words in entries, words
    assert "changed by the last edit" in entries and "the Tensor dock shows" in entries
    samples = legend.samples
    assert samples["step-ring"].pen().color() == ring.pen().color()
    assert samples["step-ring"].pen().widthF() == ring.pen().widthF()
    assert samples["step-flow"].pen().color() == flow.pen().color()
    assert samples["step-flow"].pen().widthF() == flow.pen().widthF()
    assert samples["changed"].pen().color() == changed.pen().color()
    assert samples["changed"].brush().color() == changed.brush().color()
    assert samples["selected"].color == selected.color != changed.pen().color()
    # and the legend's picture shows those colours
    image = dialog.view.viewport().grab().toImage()
    seen = {
        image.pixelColor(x_, y_).rgb()
        for x_ in range(0, image.width(), 1)
        for y_ in range(0, image.height(), 1)
    }
    for color in (ring.pen().color(), changed.pen().color(), selected.color):
        assert color.rgb() in seen, color.name()


def test_the_legend_names_a_torch_xla_programs_partitioners(panel_for, qtbot):
    def legend_of(source):
        _session, panel = panel_for(source)
        button = LegendButton(panel.view)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        qtbot.addWidget(button.dialog)
        return button.dialog.legend.entries

    jax = legend_of("example:conflict")
    torch = legend_of(f"{INPUTS / 'torch' / 'capture_conflict.json'}#sync1")
    assert "GSPMD shards it differently: Shardy's spec inside, GSPMD's beside" in jax
    assert any(
        e.startswith("GSPMD (torch_xla's partitioner) shards it differently")
        and "Shardy (shardscope's comparison)" in e
        for e in torch
    )
    assert any("torch_xla's own compile with GSPMD" in e for e in torch)
    assert not any("torch_xla" in e for e in jax)


def test_the_legend_opens_at_its_first_rows(panel_for, qtbot):
    _session, panel = panel_for("example:conflict")
    button = LegendButton(panel.view)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = button.dialog
    qtbot.addWidget(dialog)
    qtbot.waitExposed(dialog)
    view = dialog.view
    bar = view.verticalScrollBar()
    # taller than its window: it scrolls, and opens at the top, the first entry in sight
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    assert bar.value() == bar.minimum()
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.top() <= dialog.legend.itemsBoundingRect().top() + 1
