"""The chosen collective below the Collectives dock's table: a predicted one's device
groups, a compiled one's groups, cause and links, and nothing once cleared."""

import functools

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from shardscope.backend.analysis.analyse import analyse
from shardscope.viewers.debugger.chosen_collective import ChosenCollective
from tests.support.compile_oracle import loaded


@functools.cache
def conflict_analysis():
    return analyse(loaded("example:conflict"))


def chosen(qtbot) -> tuple[ChosenCollective, QWidget]:
    """The lines and links, laid out in a widget (kept alive by the caller)."""
    parent = QWidget()
    qtbot.addWidget(parent)
    detail = ChosenCollective(parent)
    layout = QVBoxLayout(parent)
    layout.addWidget(detail.groups)
    layout.addLayout(detail.links)
    parent.show()
    return detail, parent


def test_a_compiled_collective_shows_its_cause_and_links_until_cleared(qtbot):
    analysis = conflict_analysis()
    (c, *_) = [c for c in analysis.compiled_collectives if c.cause and c.cause.conflict is not None]
    detail, _parent = chosen(qtbot)
    detail.clear()
    assert not detail.groups.isVisible() and not detail.conflict_button.isVisible()
    detail.show_compiled(c, [(0, 1), (2, 3)], analysis.graph)
    assert detail.collective is c and c.cause.tensor in detail.explain.text()
    assert detail.groups.isVisible() and "outlined on the mesh" in detail.groups.text()
    with qtbot.waitSignal(detail.conflictRequested) as asked:
        qtbot.mouseClick(detail.conflict_button, Qt.MouseButton.LeftButton)
    assert asked.args == [c.cause.conflict]
    detail.clear()
    assert detail.collective is None and detail.explain.text() == ""
    assert not detail.explain.isVisible() and not detail.conflict_button.isVisible()
    with qtbot.assertNotEmitted(detail.conflictRequested):  # nothing chosen, nothing asked
        detail.conflict_button.click()


def test_a_predicted_collective_shows_only_its_groups(qtbot):
    analysis = conflict_analysis()
    detail, _parent = chosen(qtbot)
    c = analysis.collectives[0]
    detail.show_predicted(c, [(0, 2), (1, 3)])
    assert detail.groups.isVisible() and c.kind in detail.groups.text()
    assert not detail.explain.isVisible() and not detail.provenance_button.isVisible()
    detail.show_predicted(c, [])
    assert not detail.groups.isVisible()


def test_the_chosen_lines_sit_in_one_area_shown_only_with_a_choice(qtbot):
    from PySide6.QtWidgets import QWidget

    from shardscope.viewers.debugger.chosen_collective import ChosenCollective

    parent = QWidget()
    qtbot.addWidget(parent)
    chosen = ChosenCollective(parent)
    chosen.clear()
    assert chosen.box.isHidden()
    inner = chosen.box.widget()
    assert chosen.groups.parentWidget() is inner and chosen.explain.parentWidget() is inner
