"""``LineLabel``: one line of text cut to the label's width, the whole text in its tooltip."""

from shardscope.viewers.common.line_label import LineLabel


def test_a_long_text_is_cut_to_one_line_and_kept_whole_in_the_tooltip(qtbot):
    label = LineLabel()
    qtbot.addWidget(label)
    label.setToolTip("what the line means")
    text = "The XLA compile failed: TypeError: bad\n    arguments:\n 1. x " + "y" * 200
    label.setText(text)
    label.resize(200, label.sizeHint().height())
    shown = label.shown_text
    assert "\n" not in shown and shown.endswith("…")
    assert label.fontMetrics().horizontalAdvance(shown) <= 200
    assert label.toolTip() == f"{text}\n\nwhat the line means"
    # Wide enough, the whole line shows, its spaces runs made one.
    label.setText("short   text")
    label.resize(400, label.sizeHint().height())
    assert label.shown_text == "short text"
    assert label.sizeHint().height() == label.fontMetrics().height() + 2


def test_an_empty_text_keeps_only_the_tooltip(qtbot):
    label = LineLabel()
    qtbot.addWidget(label)
    label.setToolTip("tip")
    label.setText("")
    assert label.toolTip() == "tip" and label.shown_text == ""
