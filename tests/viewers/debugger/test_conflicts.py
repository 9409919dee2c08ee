"""The conflicts dock: its list, the factor table of the chosen conflict, and the sheet
``render --view conflicts`` draws."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from shardscope.backend.session.document import Session
from shardscope.viewers.debugger.conflicts import (
    ConflictsView,
    FactorTable,
    conflict_sheet,
    factor_rows,
    partitioner_text,
)
from tests.support.compile_oracle import loaded, propagated


def view(qtbot) -> ConflictsView:
    widget = ConflictsView()
    qtbot.addWidget(widget)
    widget.resize(1100, 300)
    widget.show()
    return widget


def click_row(qtbot, tree, row: int) -> None:
    item = tree.topLevelItem(row)
    rect = tree.visualItemRect(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_choosing_the_conflict_shows_its_factor_table(qtbot):
    result = propagated("example:conflict")
    widget = view(qtbot)
    widget.set_result(result)
    assert widget.status.text() == "1 conflict: choose one to see its factor table."
    assert not widget.table.isVisible()
    assert widget.title.text() == "Choose a conflict to see its factor table."
    with qtbot.waitSignal(widget.opRequested) as asked:
        click_row(qtbot, widget.list, 0)
    add = result.conflicts[0].op
    assert asked.args == [add]
    assert widget.table.isVisible()
    rows = [
        [widget.table.cell_text(r, c) for c in range(widget.table.columnCount())]
        for r in range(widget.table.rowCount())
    ]
    assert rows == [
        [
            "operand 0: sine %0",
            "0",
            "data",
            "input: 0 (x, user)",
            "loses data",
            "[data] → [_] (all_gather)",
        ],
        [
            "operand 1: y",
            "0",
            "model",
            "input: 1 (y, user)",
            "loses model",
            "[model] → [_] (all_gather)",
        ],
        ["result 0: result[0]", "0", "nothing", "", "keeps [_]", "none"],
    ]
    assert widget.title.text() == (
        "stablehlo.add (op 1): factor i of size 16: data vs model, kept [_] by longest common "
        "prefix"
    )
    assert widget.rule.text().startswith("Rule: longest common prefix: ")
    text = widget.partitioner.text()
    assert "collective_permute over data on y → [data, _]: 512 B per device" in text
    assert "differs from the reshards above (all_gather)" in text


def test_clicking_a_tensor_row_asks_for_that_tensor(qtbot):
    result = propagated("example:conflict")
    widget = view(qtbot)
    widget.set_result(result)
    widget.select(0)
    y = result.graph.value_by_name("y").id
    rect = widget.table.visualItemRect(widget.table.item(1, 0))
    with qtbot.waitSignal(widget.valueRequested) as asked:
        qtbot.mouseClick(widget.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert asked.args == [y]


def test_no_result_and_no_conflicts_say_so(qtbot):
    widget = view(qtbot)
    assert widget.status.text().startswith("No propagation yet: propagate (F5)")
    widget.set_result(None, pending=True)
    assert widget.status.text() == "Propagating…"
    widget.set_result(propagated("example:mlp"))
    assert widget.status.text().startswith("No conflicts")
    assert widget.list.topLevelItemCount() == 0 and widget.current() is None
    assert widget.title.text() == ""


def test_a_new_result_forgets_the_chosen_conflict(qtbot):
    widget = view(qtbot)
    widget.set_result(propagated("example:conflict"))
    widget.select(0)
    assert widget.current() is not None
    widget.set_result(None)
    assert widget.current() is None and widget.table.rowCount() == 0


def test_an_axis_held_by_another_factor_is_named_and_explained():
    result = propagated("example:matmul6")
    used = [c for c in result.conflicts if c.rule == "axis already used by another factor"]
    assert used
    rows = factor_rows(used[0], result.graph)
    assert any(row[4].startswith("loses") for row in rows)
    assert "insert: all_gather" in partitioner_text(used[0], result.graph)


def test_the_sheet_stacks_one_table_per_conflict(qtbot, render_dir, count_colors):
    result = propagated("example:matmul6")
    sheet = conflict_sheet(result.conflicts, result.graph, 1200)
    qtbot.addWidget(sheet)
    tables = sheet.findChildren(FactorTable)
    assert len(tables) == len(result.conflicts) == 2
    assert all(t.rowCount() == 2 for t in tables)
    image = sheet.grab()
    image.save(str(render_dir / "conflict_sheet.png"))
    assert image.width() == 1200 and count_colors(image) > 10


def test_a_dock_given_the_session_follows_its_propagation_until_detached(qtbot):
    result = propagated("example:conflict")
    session = Session()
    waiting = [True]
    widget = ConflictsView(session=session, propagating=lambda: waiting[0])
    qtbot.addWidget(widget)
    assert widget.status.text().startswith("No propagation yet")
    session.set_program(loaded("example:conflict"))
    session.set_propagation(result)  # no controller pushes it: the dock hears it
    assert widget.conflicts == list(result.conflicts)
    assert widget.status.text() == "1 conflict: choose one to see its factor table."
    (step, settled), *_ = widget.settling.items()
    widget.show_step(step)
    assert widget.settled == settled == [0]
    session.set_propagation(None)  # stale, and propagating again
    assert widget.conflicts == [] and widget.status.text() == "Propagating…"
    waiting[0] = False
    session.set_propagation(result)
    session.set_propagation(None)
    assert widget.status.text().startswith("No propagation yet")
    widget.detach()
    assert len(session.events.propagation) == 0  # the dock was its only listener
    session.set_propagation(result)
    assert widget.conflicts == []


def _in(widget, ancestor):
    """``widget``'s rectangle in ``ancestor``'s coordinates."""
    return widget.rect().translated(widget.mapTo(ancestor, widget.rect().topLeft()))


def _stacked(widget, parts) -> bool:
    """Whether ``parts`` lie one under another, none drawn over the next."""
    rects = [_in(part, widget) for part in parts]
    return all(a.bottom() < b.top() for a, b in zip(rects, rects[1:], strict=False))


def test_a_short_dock_scrolls_the_factor_table_and_its_lines_instead_of_overlapping(qtbot):
    result = propagated("example:conflict")
    # in a holder that sets its size as a dock of the window does, below its minimum
    holder = QWidget()
    qtbot.addWidget(holder)
    holder.resize(1200, 400)
    widget = ConflictsView(holder)
    widget.set_result(result)
    holder.show()
    table, rule, inserts = widget.table, widget.rule, widget.partitioner
    for width, height in ((1100, 300), (700, 130)):
        widget.setGeometry(0, 0, width, height)
        click_row(qtbot, widget.list, 0)
        qtbot.waitUntil(lambda: table.isVisible() and rule.isVisible())
        # the table shows every row: the result row whole, above the Rule line
        last = table.visualRect(table.model().index(table.rowCount() - 1, 0))
        assert table.cell_text(table.rowCount() - 1, 0).startswith("result 0")
        assert 0 <= last.top() and last.bottom() <= table.viewport().height()
        qtbot.waitUntil(lambda: _stacked(widget, [widget.title, table, rule, inserts]))
        # every column whole, none cut
        header = table.horizontalHeader()
        for c in range(table.columnCount()):
            assert header.sectionSize(c) >= table.sizeHintForColumn(c)
        assert header.length() <= table.viewport().width() + 1
        # in the short dock, the lines below scroll into view
        widget.detail.ensureWidgetVisible(inserts)
        qtbot.waitUntil(lambda: not inserts.visibleRegion().isEmpty())
        widget.list.setCurrentItem(None)
