"""Program outline: scopes with op counts, lazy scope rows, the tensor table and its filter."""

import pytest

from shardscope.backend.program.load import load_program
from shardscope.viewers.program.outline import VALUE_ROLE, ProgramOutline


@pytest.fixture(scope="module")
def mlp():
    return load_program("example:mlp")


def test_scopes_with_counts_and_lazy_rows(qtbot, mlp):
    outline = ProgramOutline()
    qtbot.addWidget(outline)
    outline.set_graph(mlp.graph, lambda vid: "[data, _]")
    assert outline.scope_rows() == {"layer1": 5, "layer2": 4}
    rows = outline.expand_scope("layer1")
    assert rows[0].startswith("dot_general %0")
    assert any(r.startswith("call %") and "@relu" in r for r in rows)


def test_tensor_table_filter_and_selection(qtbot, mlp):
    outline = ProgramOutline()
    qtbot.addWidget(outline)
    outline.set_graph(mlp.graph, lambda vid: "[data, _]" if vid == 4 else "[_]")
    model = outline.proxy
    names = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert names[:5] == ["params['b1']", "params['b2']", "params['w1']", "params['w2']", "x"]
    assert "result[0]" in names
    outline.filter.setText("w1")
    assert [model.index(r, 0).data() for r in range(model.rowCount())] == ["params['w1']"]
    outline.filter.setText("")
    x_row = names.index("x")
    assert model.index(x_row, 2).data() == "f32[32x64]"
    assert model.index(x_row, 3).data() == "[data, _]"
    with qtbot.waitSignal(outline.valueSelected) as signal:
        outline._table_clicked(model.index(x_row, 0))
    assert signal.args == [model.index(x_row, 0).data(VALUE_ROLE)] == [4]


def test_clicking_an_op_emits_its_id(qtbot, mlp):
    outline = ProgramOutline()
    qtbot.addWidget(outline)
    outline.set_graph(mlp.graph)
    outline.expand_scope("layer2")
    layer2 = outline.tree_model.findItems("layer2")[0]
    first = layer2.child(0, 0)
    with qtbot.waitSignal(outline.opSelected) as signal:
        outline._tree_clicked(first.index())
    assert mlp.graph.ops[signal.args[0]].scope == "layer2"


def test_renders(qtbot, mlp, render_dir, count_colors):
    outline = ProgramOutline()
    qtbot.addWidget(outline)
    outline.resize(360, 420)
    outline.set_graph(mlp.graph, lambda vid: "[data, _]")
    outline.expand_scope("layer1")
    outline.show()
    image = outline.grab()
    image.save(str(render_dir / "outline.png"))
    assert count_colors(image) > 3


@pytest.fixture(scope="module")
def eleven_layers():
    return load_program("example:transformer?layers=11")


def drawn_texts(widget) -> list[str]:
    """The strings ``widget`` draws, read back from an SVG rendering of it."""
    import re
    from html import unescape

    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buffer)
    gen.setSize(widget.size())
    painter = QPainter(gen)
    widget.render(painter, QPoint(0, 0))
    painter.end()
    svg = bytes(data.data()).decode("utf-8")
    return [unescape(t).strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_scopes_sort_naturally_layer_2_before_layer_10(qtbot, eleven_layers):
    outline = ProgramOutline()
    qtbot.addWidget(outline)
    outline.set_graph(eleven_layers.graph)
    names = list(outline.scope_rows())
    layers = [n for n in names if n.startswith("jvp(layer_")]
    # a scope's name too long for the column keeps its end, the layer's number
    outline.resize(230, 700)
    outline.show()
    texts = drawn_texts(outline.tree.viewport())
    assert any(t.endswith("_10))") and "\u2026" in t for t in texts), texts
    assert layers == [f"jvp(layer_{i})" for i in range(11)]
    backward = [n for n in names if n.startswith("transpose(jvp(layer_")]
    assert backward == [f"transpose(jvp(layer_{i}))" for i in range(11)]


def test_a_long_tensor_name_keeps_both_ends(qtbot, eleven_layers):
    outline = ProgramOutline()
    qtbot.addWidget(outline)
    outline.tabs.setCurrentIndex(1)
    outline.resize(300, 300)
    outline.show()
    outline.set_graph(eleven_layers.graph, lambda vid: "[data, _]")
    outline.filter.setText("['layers'][10]['w_out']")
    qtbot.waitUntil(lambda: outline.proxy.rowCount() == 1)
    fm = outline.table.fontMetrics()

    def name_column(width):
        """Resize the dock until the stretched name column is ``width`` wide."""
        for _ in range(5):
            outline.resize(outline.width() + width - outline.table.columnWidth(0), 300)
            qtbot.wait(10)
        assert abs(outline.table.columnWidth(0) - width) <= 1

    name_column(fm.horizontalAdvance("params\u2026[10]['w_out']") + 16)
    # the root and the most specific keys, the layer's index with them
    assert "params\u2026[10]['w_out']" in drawn_texts(outline.table.viewport())
    # narrower: the root gives up letters before the index goes, so the rows differ
    name_column(fm.horizontalAdvance("params\u2026[10]['w_out']") - 4)
    (shown,) = [t for t in drawn_texts(outline.table.viewport()) if "\u2026" in t]
    assert shown.startswith("p") and shown.endswith("\u2026[10]['w_out']"), shown
