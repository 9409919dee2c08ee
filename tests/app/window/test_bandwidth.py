"""Low-bandwidth mode: remote display detection, the View menu toggle, what it changes."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QColor, QImage, QPainter

from shardscope.app.window.bandwidth import ENV, env_choice, remote_display
from shardscope.app.window.settings import Settings
from tests.support.paints import PaintLog, fresh, on_screen, wait_painted

MENU = ("&View", "Low-&bandwidth mode")
AA = QPainter.RenderHint.Antialiasing


@pytest.mark.parametrize(
    ("env", "remote"),
    [
        ({"SSH_CONNECTION": "10.0.0.2 51234 10.0.0.9 22", "DISPLAY": "localhost:10.0"}, True),
        ({"DISPLAY": "tpu-vm:10.0"}, True),
        ({"DISPLAY": "10.1.2.3:0"}, True),
        ({"DISPLAY": ":0"}, False),
        ({"DISPLAY": ":1.0"}, False),
        ({"DISPLAY": "unix:0"}, False),
        ({"DISPLAY": "/tmp/launch-abc/org.xquartz:0"}, False),
        ({}, False),
        # drawn off screen: nothing travels, whatever else is set
        ({"SSH_CONNECTION": "a b c d", "QT_QPA_PLATFORM": "offscreen"}, False),
    ],
)
def test_a_display_is_remote_over_ssh_or_when_it_names_a_host(env, remote):
    reason = remote_display(env)
    assert (reason is not None) == remote
    if "SSH_CONNECTION" in env and remote:
        assert "SSH_CONNECTION" in reason
    elif remote:
        assert env["DISPLAY"] in reason


def test_the_environment_override_reads_on_and_off():
    assert env_choice({ENV: "1"}) is True and env_choice({ENV: "on"}) is True
    assert env_choice({ENV: "0"}) is False and env_choice({ENV: "off"}) is False
    assert env_choice({}) is None and env_choice({ENV: "maybe"}) is None


def _remote(monkeypatch):
    """The environment of a window opened over ``ssh -X``."""
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("SSH_CONNECTION", "10.0.0.2 51234 10.0.0.9 22")
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")  # read as data: the app stays offscreen


def _local(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")


def test_the_menu_toggle_turns_antialiasing_off_and_is_remembered(
    make_window, find_action, monkeypatch
):
    _local(monkeypatch)
    window = make_window("example:mlp", propagate=False)
    action = find_action(window, *MENU)
    assert action.isCheckable() and not action.isChecked()
    assert window.graph.renderHints() & AA and window.graph.style_.antialias
    assert not [m for m in window.messages.messages() if "low-bandwidth" in m]
    action.trigger()  # as a click on the menu entry
    assert action.isChecked() and window.bandwidth.on
    assert not window.graph.renderHints() & AA
    assert not window.graph.style_.antialias
    assert all(not item.style.antialias for item in window.graph.nodes + window.graph.badges)
    window.settings.sync()
    assert Settings().low_bandwidth() is True
    # the next window starts in the mode the user chose
    again = make_window(None)
    assert again.bandwidth.on and find_action(again, *MENU).isChecked()
    assert not again.graph.renderHints() & AA
    find_action(again, *MENU).trigger()
    assert again.graph.renderHints() & AA and again.graph.style_.antialias
    again.settings.sync()
    assert Settings().low_bandwidth() is False


def test_a_remote_display_turns_it_on_and_messages_say_why_and_how_to_turn_it_off(
    make_window, find_action, monkeypatch
):
    _remote(monkeypatch)
    window = make_window("example:mlp", propagate=False)
    assert window.bandwidth.on and find_action(window, *MENU).isChecked()
    assert not window.graph.renderHints() & AA
    (line,) = [m for m in window.messages.messages() if "low-bandwidth" in m]
    assert "SSH_CONNECTION" in line and "View ▸ Low-bandwidth mode" in line
    assert "\n" not in line
    # the automatic choice is not a user's choice: nothing is stored
    window.settings.sync()
    assert Settings().low_bandwidth() is None


def test_the_users_choice_wins_over_detection(make_window, monkeypatch):
    _remote(monkeypatch)
    Settings().set_low_bandwidth(False)
    window = make_window(None)
    assert not window.bandwidth.on and window.graph.renderHints() & AA
    assert not [m for m in window.messages.messages() if "low-bandwidth" in m]


def test_the_environment_variable_forces_it_for_one_run(make_window, monkeypatch):
    _local(monkeypatch)
    Settings().set_low_bandwidth(False)
    monkeypatch.setenv(ENV, "1")
    window = make_window(None)
    assert window.bandwidth.on and not window.graph.renderHints() & AA
    assert any(ENV in m for m in window.messages.messages())


def test_an_unreadable_environment_value_is_one_warning_and_changes_nothing(
    make_window, monkeypatch
):
    _local(monkeypatch)
    monkeypatch.setenv(ENV, "sometimes")
    window = make_window(None)
    assert not window.bandwidth.on
    (warning,) = window.messages.messages("warning")
    assert ENV in warning and "1 or 0" in warning


def test_the_mode_survives_a_theme_change(make_window, find_action, monkeypatch):
    _local(monkeypatch)
    window = make_window("example:mlp", propagate=False)
    find_action(window, *MENU).trigger()
    window.toggle_theme()
    assert not window.graph.style_.antialias
    assert all(not item.style.antialias for item in window.graph.nodes)
    assert not window.graph.renderHints() & AA


def _fraction_of(image, color) -> float:
    """How much of ``image`` is exactly ``color``."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), np.uint32).reshape(
        image.height(), image.bytesPerLine() // 4
    )[:, : image.width()]
    return float((pixels == (QColor(color).rgb() & 0xFFFFFFFF)).mean())


def test_in_the_mode_boxes_and_tiles_are_outlines_on_the_background(
    make_window, find_action, monkeypatch, qtbot
):
    _local(monkeypatch)
    window = make_window("example:mlp", propagate=False)
    view = window.graph
    node = next(i for i in view.nodes if i.node.kind == "op")
    view.resetTransform()
    view.centerOn(node)
    badge = next(b for b in view.badges if b.value_id is not None)
    badge.setSelected(True)
    grid = window.inspector.tile_grid
    qtbot.waitUntil(lambda: grid.tile_map is not None)
    background = view.style_.theme.background

    def inside_the_box():
        # the box's left part, off its label: what fills it
        corner = view.mapFromScene(node.mapToScene(node.boundingRect().topLeft()))
        return view.viewport().grab(QRect(corner + QPoint(11, 11), QSize(5, 5))).toImage()

    assert _fraction_of(inside_the_box(), background) == 0.0  # a filled card
    filled = _fraction_of(grid.plot.grab().toImage(), grid.plot.backgroundBrush().color())
    find_action(window, *MENU).trigger()
    assert _fraction_of(inside_the_box(), background) == 1.0  # an outline
    outlined = _fraction_of(grid.plot.grab().toImage(), grid.plot.backgroundBrush().color())
    assert outlined > 0.8 > filled
    # the labels carry the device colours the fills did
    inks = {c.name() for _, _, c in grid.layers.labels._cells}
    assert grid.flat and inks and not inks & {"#000000", "#ffffff"}
    find_action(window, *MENU).trigger()
    assert _fraction_of(inside_the_box(), background) == 0.0 and not grid.flat


def test_in_the_mode_a_busy_indicator_shows_its_text_and_cancel_without_the_moving_bar(
    make_window, find_action, monkeypatch
):
    _local(monkeypatch)
    window = make_window("example:mlp", propagate=False)
    find_action(window, *MENU).trigger()
    busy = window.folding.indicator
    busy.show("Unfolding every scope")
    assert busy.label.isVisible() and busy.cancel_button.isVisible()
    assert not busy.bar.isVisible()
    find_action(window, *MENU).trigger()  # off again: the bar moves again
    assert busy.bar.isVisible()
    busy.hide()
    assert not busy.label.isVisible()


def test_in_the_mode_a_zoom_repaints_only_what_looks_different(
    make_window, find_action, monkeypatch, qtbot
):
    _local(monkeypatch)
    window = make_window("example:transformer", propagate=False)
    find_action(window, *MENU).trigger()
    view = window.graph
    viewport = view.viewport()
    # the Legend button lies over the viewport: a drawing of the viewport alone lacks it
    window.debugger.legend_button.hide()
    wait_painted(qtbot, viewport)
    scale = view.transform().m11()
    with PaintLog(viewport) as log:
        view.zoom(1.2)
        wait_painted(qtbot, viewport)
    assert view.transform().m11() == pytest.approx(scale * 1.2)
    assert 0 < log.area(viewport) < 0.8 * viewport.width() * viewport.height()
    assert on_screen(viewport) == fresh(viewport)
