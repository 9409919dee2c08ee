"""Find as you type: matches listed live with counts, chosen ones revealed."""

import pytest
from PySide6.QtCore import Qt

from shardscope.backend.program.layout import Frame
from shardscope.backend.program.load import load_program
from shardscope.backend.propagation.propagate import propagate
from shardscope.viewers.graph.find_list import match_text
from tests.support.inputs import write_input

DENSE = """import jax
import jax.numpy as jnp


def model(params, x):
    for i, w in enumerate(params):
        with jax.named_scope(f"block_{i}"):
            with jax.named_scope("dense"):
                x = jnp.tanh(x @ w)
            x = x * 2.0
    return x


PROGRAM = model
EXAMPLE_ARGS = (
    [jax.ShapeDtypeStruct((16, 16), jnp.float32)] * 3,
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
)
"""


@pytest.fixture(scope="module")
def dense_program(tmp_path_factory):
    return load_program(write_input(tmp_path_factory.mktemp("find"), "dense.py", DENSE))


def _type(qtbot, panel, text):
    box = panel.find_box
    box.setFocus()
    box.clear()
    qtbot.keyClicks(box, text)
    qtbot.waitUntil(lambda: not panel.finder.pending, timeout=3000)


def test_typing_lists_matches_live_and_choosing_one_reveals_it_in_a_folded_scope(
    panel_for, programs, dense_program, qtbot
):
    programs["dense"] = dense_program
    session, panel = panel_for("dense")
    view = panel.view
    view.collapse_all()
    assert {n.label for n in view.layout_.nodes if n.kind == "scope"} == {
        "block_0",
        "block_1",
        "block_2",
    }
    _type(qtbot, panel, "dense")
    rows = panel.finder.list.rows()
    assert panel.finder.list.isVisible()
    assert panel.find_status.text() == "3 scopes"
    assert rows == [f"▸ dense    {n} ops · block_{i}/dense" for i, n in [(0, 2), (1, 2), (2, 2)]]
    # choosing the second with a click unfolds block_1 and selects its dense node
    item = panel.finder.list.item(1)
    rect = panel.finder.list.visualItemRect(item)
    qtbot.mouseClick(panel.finder.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert "block_1" in view.expanded() and "block_0" not in view.expanded()
    # the pick closes the list, uncovering the graph; the box keeps the query
    assert not panel.finder.list.isVisible()
    assert panel.find_box.hasFocus() and panel.find_box.text() == "dense"
    (selected,) = view.scene().selectedItems()
    assert (selected.node.kind, selected.node.scope) == ("scope", "block_1/dense")

    # ops: live as the query grows, then Enter steps through them, unfolding each
    _type(qtbot, panel, "tan")
    assert panel.find_status.text() == "3 ops"
    assert [r.split("    ")[0] for r in panel.finder.list.rows()] == ["◆ tanh"] * 3
    assert panel.finder.list.isVisible()
    qtbot.keyClick(panel.find_box, Qt.Key.Key_Return)
    assert not panel.finder.list.isVisible()
    qtbot.keyClick(panel.find_box, Qt.Key.Key_Return)
    (selected,) = view.scene().selectedItems()
    tanhs = [op.id for op in session.graph.ops if op.short_name == "tanh"]
    assert selected.node.op == tanhs[1]
    assert "block_1/dense" in view.expanded()
    # Down lists them again, the one shown current; Enter there picks and closes it
    qtbot.keyClick(panel.find_box, Qt.Key.Key_Down)
    assert panel.finder.list.isVisible() and panel.finder.list.hasFocus()
    assert panel.finder.list.currentRow() == 1
    qtbot.keyClick(panel.finder.list, Qt.Key.Key_Down)
    qtbot.keyClick(panel.finder.list, Qt.Key.Key_Return)
    assert not panel.finder.list.isVisible() and panel.find_box.hasFocus()
    (selected,) = view.scene().selectedItems()
    assert selected.node.op == tanhs[2]


def test_sharding_queries_list_tensors_and_ops_and_reveal_them(panel_for, qtbot):
    session, panel = panel_for("example:conflict")
    session.set_propagation(propagate(session.program))
    _type(qtbot, panel, "axis:model")
    names = [r.split("    ")[0] for r in panel.finder.list.rows()]
    assert "▭ y" in names and "▭ x" not in names
    assert panel.find_status.text() == f"{len(names)} tensor{'s' if len(names) > 1 else ''}"
    _type(qtbot, panel, "conflict")
    assert panel.find_status.text() == "1 op"
    qtbot.keyClick(panel.find_box, Qt.Key.Key_Return)
    (selected,) = panel.view.scene().selectedItems()
    assert session.graph.ops[selected.node.op].short_name == "add"
    _type(qtbot, panel, "collective:all-gather")
    (row,) = panel.finder.list.rows()
    assert "all_gather at the return" in row
    qtbot.keyClick(panel.find_box, Qt.Key.Key_Return)
    (badge,) = panel.view.scene().selectedItems()
    assert badge.value_id == next(
        c.value for c in session.propagation.collectives if c.kind == "all_gather"
    )


def test_bad_or_empty_queries_hide_the_list_and_say_why(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    _type(qtbot, panel, "shape:3")
    assert "axis:NAME" in panel.find_status.text()
    assert not panel.finder.list.isVisible()
    _type(qtbot, panel, "nothing here")
    assert panel.find_status.text() == "no match" and not panel.finder.list.isVisible()
    qtbot.keyClick(panel.find_box, Qt.Key.Key_Return)  # nothing to reveal: no crash
    _type(qtbot, panel, "dot")
    assert panel.finder.list.isVisible()
    qtbot.keyClick(panel.find_box, Qt.Key.Key_Escape)
    assert not panel.finder.list.isVisible()
    _type(qtbot, panel, "dot")
    assert panel.finder.list.isVisible()
    panel.view.setFocus()  # the user goes back to the graph
    qtbot.waitUntil(lambda: not panel.finder.list.isVisible(), timeout=2000)
    panel.find_box.clear()
    assert panel.find_status.text() == "" and panel.finder.result is None


def test_a_match_in_another_function_is_revealed_by_entering_it(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    _type(qtbot, panel, "maximum")
    assert panel.find_status.text() == "1 op"
    qtbot.keyClick(panel.find_box, Qt.Key.Key_Down)
    assert panel.finder.list.hasFocus()
    qtbot.keyClick(panel.finder.list, Qt.Key.Key_Return)
    assert panel.view.frame == Frame("relu")
    (selected,) = panel.view.scene().selectedItems()
    assert selected.node.label == "maximum"


def test_match_text_names_kind_and_detail():
    from shardscope.backend.session.find import Match

    assert match_text(Match("callee", "@relu", "2 calls", 2, op=3)) == "@relu    2 calls"
    assert match_text(Match("scope", "attn", "l0/attn", 1, op=1)) == "▸ attn    1 op · l0/attn"
