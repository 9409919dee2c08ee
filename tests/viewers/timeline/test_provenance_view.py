"""The provenance view: chains as text with links, and what a click on each link emits."""

from PySide6.QtCore import Qt

from shardscope.backend.propagation.provenance import AxisChain, DimProvenance, Link
from shardscope.viewers.timeline.provenance_view import HINT, ProvenanceView
from tests.support.paints import PaintLog, fresh, on_screen, wait_painted


def _records():
    chain = AxisChain(
        5,
        0,
        "data",
        (Link("step", 5, "data", 3, 7, "stablehlo.add", 2), Link("annotation", 2, "data")),
        "input: 0 (x, user)",
        "user",
    )
    return [
        DimProvenance(5, 0, ("data",), (chain,)),
        DimProvenance(5, 1, (), (), "replicated by a conflict at stablehlo.add", (0,)),
    ]


def test_chains_and_reasons_show_with_links(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    assert HINT in view.toPlainText()
    names = {5: "add %5", 2: "x"}
    view.set_records("add %5", _records(), names.__getitem__, ("data", "model"))
    text = view.toPlainText()
    assert "dim 0 holds" in text
    assert "your spec (input: 0 (x, user)), each tensor from the next:" in text
    # the entry below names the tensor it came from: the line does not name it again
    (line,) = [line for line in text.splitlines() if "got it across" in line]
    assert line.endswith("step 3: add %5 got it across stablehlo.add")
    assert "x held data from the start" in text
    assert "dim 1 is replicated. Why? replicated by a conflict at stablehlo.add" in text
    assert view.links == ["value:5", "step:3", "value:2", "conflict:0"]


def click_link(qtbot, view: ProvenanceView, text: str) -> None:
    """Click the link that reads ``text``, where the view draws it."""
    cursor = view.document().find(text)
    assert not cursor.isNull(), f"no {text!r} in {view.toPlainText()!r}"
    cursor.setPosition(cursor.selectionStart() + 1)
    qtbot.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=view.cursorRect(cursor).center()
    )


def test_a_whole_tensor_shows_one_line_per_dimension_each_linking_to_its_chain(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.show()
    names = {5: "add %5", 2: "x"}
    view.set_records("add %5", _records(), names.__getitem__, ("data", "model"), summary=True)
    text = view.toPlainText().splitlines()
    lines = [" ".join(line.split()) for line in text if line.startswith("dim ")]
    assert lines == [
        "dim 0 holds data from your spec. How?",
        "dim 1 is replicated. Why? [conflict 0]",
    ]
    assert "got it across" not in view.toPlainText()
    assert view.links == ["dim:0", "dim:1", "conflict:0"]
    got = []
    view.dimClicked.connect(got.append)
    view.conflictClicked.connect(lambda i: got.append(("conflict", i)))
    click_link(qtbot, view, "How?")
    click_link(qtbot, view, "Why?")
    click_link(qtbot, view, "[conflict 0]")
    assert got == [0, 1, ("conflict", 0)]
    # one dimension the user picked: its chain, and a link back to every dimension
    view.set_records("add %5", _records()[:1], names.__getitem__, ("data",), chosen=True)
    assert "each tensor from the next" in view.toPlainText()
    assert view.toPlainText().splitlines()[-1] == "Every dimension of add %5"
    click_link(qtbot, view, "Every dimension")
    assert got[-1] == -1


def test_at_a_step_the_short_lines_say_what_arrives_later(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    names = {5: "add %5", 2: "x"}
    view.set_records("add %5", _records(), names.__getitem__, ("data",), at_step=2, summary=True)
    text = view.toPlainText()
    assert "dim 0 holds no axis yet" in text and "arrives later, at step 3" in text
    assert view.links == ["step:3", "dim:1", "conflict:0"]


def test_a_step_from_a_tensor_the_next_entry_does_not_name_says_which(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    chain = AxisChain(
        5,
        0,
        "data",
        (Link("step", 5, "data", 3, 7, "stablehlo.add", 4), Link("annotation", 2, "data")),
        "input: 0 (x, user)",
        "user",
    )
    names = {5: "add %5", 4: "mul %4", 2: "x"}
    view.set_records("add %5", [DimProvenance(5, 0, ("data",), (chain,))], names.get, ("data",))
    assert "step 3: add %5 got it across stablehlo.add from mul %4" in view.toPlainText()
    assert view.links == ["value:5", "step:3", "value:4", "value:2"]


def test_links_emit_what_they_name(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    got = []
    view.stepClicked.connect(lambda n: got.append(("step", n)))
    view.valueClicked.connect(lambda n: got.append(("value", n)))
    view.conflictClicked.connect(lambda n: got.append(("conflict", n)))
    view.dimClicked.connect(lambda n: got.append(("dim", n)))
    for target in ("step:3", "value:5", "conflict:0", "dim:1", "dim:-1", "step:x", "other:1"):
        view.activate(target)
    assert got == [("step", 3), ("value", 5), ("conflict", 0), ("dim", 1), ("dim", -1)]
    view.show_message("nothing here")
    assert view.toPlainText() == "nothing here" and view.links == []


def test_the_same_text_repaints_nothing_and_new_text_only_what_differs(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    view.resize(420, 200)
    view.show()
    qtbot.waitExposed(view)
    names = {5: "add %5", 2: "x"}
    view.set_records("add %5", _records(), names.__getitem__, ("data", "model"))
    wait_painted(qtbot, view)
    # a scroll bar that came and went would resize the text, so repaint all of it
    assert view.verticalScrollBar().isVisible()
    with PaintLog(view) as log:
        view.set_records("add %5", _records(), names.__getitem__, ("data", "model"))
        qtbot.wait(30)
    assert log.events == []
    with PaintLog(view) as log:
        view.set_records("add %7", _records(), names.__getitem__, ("data", "model"))
        qtbot.wait(30)
    viewport = view.viewport()
    assert 0 < log.area(viewport) < viewport.width() * viewport.height() / 3
    assert on_screen(viewport) == fresh(viewport)


def test_at_a_step_only_what_had_arrived_by_then_is_explained(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    names = {5: "add %5", 2: "x"}
    view.set_records("add %5", _records(), names.__getitem__, ("data", "model"), last_step=9)
    assert "Final state, after the last step (9)" in view.toPlainText()
    # before step 3 the axis had not reached add %5: said so, with a link to where it does
    view.set_records("add %5", _records(), names.__getitem__, ("data", "model"), at_step=2)
    text = view.toPlainText()
    assert text.splitlines()[1].startswith("At step 2: what propagation had found by then")
    assert "dim 0 holds no axis yet" in text
    (later,) = [line for line in text.splitlines() if "arrives later" in line]
    assert "data" in later and later.endswith("arrives later, at step 3")
    assert "got it across" not in text and "step:3" in view.links
    # from step 3 on, the whole chain
    view.set_records("add %5", _records(), names.__getitem__, ("data", "model"), at_step=3)
    text = view.toPlainText()
    assert "At step 3" in text and "dim 0 holds" in text and "arrives later" not in text
    assert "step 3: add %5 got it across stablehlo.add" in text


def test_a_longer_text_repaints_the_moved_part_of_the_scroll_bar_only(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    view.resize(420, 200)
    view.show()
    qtbot.waitExposed(view)
    names = {5: "add %5", 2: "x"}
    view.set_records("add %5", _records(), names.__getitem__, ("data", "model"))
    wait_painted(qtbot, view)
    bar = view.verticalScrollBar()
    handle_before = bar.pageStep() / (bar.maximum() - bar.minimum() + bar.pageStep())
    with PaintLog(view) as log:
        view.set_records("add %5", _records() * 3, names.__getitem__, ("data", "model"))
        qtbot.wait(30)
    # three times the text: the handle shrank, so some of the bar changed, not all of it
    assert bar.pageStep() / (bar.maximum() - bar.minimum() + bar.pageStep()) < handle_before
    assert 0 < log.area(bar) < bar.width() * bar.height()
    assert on_screen(view) == fresh(view)
