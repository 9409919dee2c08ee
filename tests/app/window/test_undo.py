"""Undo on the Qt side: the backend stack stays the truth, the QUndoStack mirrors it."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QUndoView, QWidget

from shardscope.app.window.undo import UndoBridge
from shardscope.backend.errors import SpecError
from shardscope.backend.session.document import Session
from shardscope.backend.session.edits import (
    Command,
    CommandStack,
    CompoundEdit,
    SetDimSpec,
    SetMesh,
)
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import Spec


class Counted(Command):
    """An edit that counts how often it was applied and reverted."""

    label = "counted"

    def __init__(self) -> None:
        self.done = 0
        self.undone = 0

    def do(self, session) -> None:
        self.done += 1

    def undo(self, session) -> None:
        self.undone += 1


class Invalid(Command):
    label = "invalid"

    def do(self, session) -> None:
        raise SpecError("x: spec dim 0 uses unknown axis 'foo': use one of data, model")


@pytest.fixture
def bridge(qapp):
    return UndoBridge(CommandStack(Session()))


def assert_mirrored(bridge: UndoBridge) -> None:
    assert bridge.qstack.canUndo() == bridge.stack.can_undo
    assert bridge.qstack.canRedo() == bridge.stack.can_redo


def test_a_pushed_edit_is_applied_once_and_mirrored(bridge):
    command = Counted()
    bridge.push(command)
    assert (command.done, command.undone) == (1, 0)
    assert bridge.qstack.count() == 1 and bridge.qstack.undoText() == "counted"
    assert_mirrored(bridge)


def test_undo_and_redo_on_the_qt_stack_reach_the_session(bridge):
    session = bridge.stack.session
    bridge.push(SetMesh(parse_mesh("data=2,model=4")))
    bridge.push(SetMesh(parse_mesh("data=8")))
    assert session.mesh.axis_names == ("data",)
    bridge.qstack.undo()
    assert session.mesh.axis_names == ("data", "model")
    assert_mirrored(bridge)
    bridge.qstack.undo()
    assert session.mesh is None
    assert not bridge.qstack.canUndo() and not bridge.stack.can_undo
    bridge.qstack.redo()
    assert session.mesh.axis_names == ("data", "model")
    assert_mirrored(bridge)
    assert bridge.stack.undo_labels == ["mesh data=2,model=4"]


def test_an_invalid_edit_raises_and_records_nothing(bridge):
    bridge.push(Counted())
    with pytest.raises(SpecError, match="unknown axis 'foo'"):
        bridge.push(Invalid())
    assert bridge.qstack.count() == 1 and bridge.stack.undo_labels == ["counted"]
    assert_mirrored(bridge)


def test_clear_forgets_both_histories(bridge):
    bridge.push(Counted())
    bridge.push(Counted())
    bridge.qstack.undo()
    bridge.clear()
    assert bridge.qstack.count() == 0
    assert not bridge.stack.can_undo and not bridge.stack.can_redo
    assert_mirrored(bridge)


def test_ctrl_z_undoes_and_ctrl_shift_z_redoes(bridge, qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    undo = bridge.qstack.createUndoAction(widget)
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    redo = bridge.qstack.createRedoAction(widget)
    redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
    widget.addActions([undo, redo])
    widget.show()
    widget.activateWindow()
    qtbot.waitUntil(widget.isActiveWindow)
    command = Counted()
    bridge.push(command)
    assert undo.isEnabled() and not redo.isEnabled()
    qtbot.keyClick(widget, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert command.undone == 1 and not bridge.stack.can_undo
    assert redo.isEnabled() and not undo.isEnabled()
    qtbot.keyClick(
        widget,
        Qt.Key.Key_Z,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert command.done == 2 and bridge.stack.can_undo


def test_a_compound_edit_is_one_history_entry_and_one_ctrl_z(make_window, qtbot, wait_idle):
    window = make_window("example:mlp", propagate=False)
    session = window.session
    x, w1 = (session.graph.value_by_name(n).id for n in ("x", "params['w1']"))
    before = dict(session.specs)
    history = window.docks.widget("dock_history", QUndoView)
    edit = CompoundEdit("accept proposal", [SetDimSpec(x, 1, "model"), SetDimSpec(w1, 0, "data")])
    assert window.push(edit)
    assert session.spec(x) == Spec.of("data", "model")
    assert session.spec(w1).dims[0].axes == ("data",)
    # the view lists the clean state, then one row for the whole edit
    rows = [history.model().index(r, 0).data() for r in range(history.model().rowCount())]
    assert rows[1:] == ["accept proposal"]
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert dict(session.specs) == before
    assert window.qundo.index() == 0 and not window.undo.stack.can_undo
    wait_idle(window)
