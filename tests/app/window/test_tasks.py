"""Work off the GUI thread: results and failures come back on the GUI thread, as one line."""

import json
import threading

import pytest
from PySide6.QtCore import Qt, QThread, QThreadPool
from PySide6.QtWidgets import QApplication, QFileDialog, QTabBar

from shardscope.app.window.tasks import TaskRunner, load_task
from shardscope.backend.errors import ProgramError
from shardscope.backend.program.load import Program
from tests.support.inputs import MLIR


@pytest.fixture
def runner(qapp):
    runner = TaskRunner(pool=QThreadPool())
    yield runner
    runner.wait(30_000)


class Reports:
    """What a task reported, and on which thread."""

    def __init__(self) -> None:
        self.done: list[tuple[object, float]] = []
        self.failed: list[str] = []
        self.on_gui_thread: list[bool] = []

    def _here(self) -> None:
        self.on_gui_thread.append(QThread.currentThread() is QApplication.instance().thread())

    def on_done(self, result, seconds) -> None:
        self._here()
        self.done.append((result, seconds))

    def on_error(self, message) -> None:
        self._here()
        self.failed.append(message)

    @property
    def count(self) -> int:
        return len(self.done) + len(self.failed)


def test_a_result_comes_back_on_the_gui_thread(runner, qtbot):
    reports = Reports()
    workers = []

    def work():
        workers.append(threading.get_ident())
        return 42

    runner.start(work, reports.on_done, reports.on_error)
    qtbot.waitUntil(lambda: reports.count == 1)
    ((result, seconds),) = reports.done
    assert result == 42 and seconds >= 0
    assert workers != [threading.get_ident()]  # the work ran in the pool
    assert reports.on_gui_thread == [True] and runner.busy == 0


def test_a_bug_is_reported_as_one_line_naming_where_it_happened(runner, qtbot):
    reports = Reports()

    def work():
        raise KeyError("params")

    runner.start(work, reports.on_done, reports.on_error)
    qtbot.waitUntil(lambda: reports.count == 1)
    (message,) = reports.failed
    assert message.startswith("KeyError: 'params' (test_tasks.py:")
    assert "\n" not in message
    assert reports.on_gui_thread == [True] and reports.done == [] and runner.busy == 0


def test_a_user_error_is_reported_as_its_own_message(runner, qtbot):
    reports = Reports()

    def work():
        raise ProgramError("prog.py: defines no PROGRAM; add one")

    runner.start(work, reports.on_done, reports.on_error)
    qtbot.waitUntil(lambda: reports.count == 1)
    assert reports.failed == ["prog.py: defines no PROGRAM; add one"]


def test_busy_counts_the_tasks_in_flight(runner, qtbot):
    reports = Reports()
    release = threading.Event()
    runner.start(lambda: release.wait(10), reports.on_done, reports.on_error)
    runner.start(lambda: release.wait(10), reports.on_done, reports.on_error)
    assert runner.busy == 2
    release.set()
    qtbot.waitUntil(lambda: reports.count == 2)
    assert runner.busy == 0


def test_a_load_task_builds_the_graph_off_the_gui_thread(runner, qtbot):
    reports = Reports()
    runner.start(load_task(str(MLIR / "plain.mlir"), 60), reports.on_done, reports.on_error)
    qtbot.waitUntil(lambda: reports.count == 1, timeout=60_000)
    assert reports.failed == []
    ((program, _seconds),) = reports.done
    assert isinstance(program, Program)
    assert "graph" in vars(program)  # built by the task, not later on the GUI thread
    assert program.arg_names == ["x", "w"]


def test_the_window_survives_a_compiler_crash(make_window, qtbot, drop_axis, wait_idle):
    # With a spec on x, Shardy segfaults on this module in some runs recording origins.
    window = make_window(str(MLIR / "sdy_origins_crash.mlir"))
    wait_idle(window)
    x = window.session.graph.value_by_name("x").id
    for axis in ("data", None, "data"):
        before = window.propagation.count
        warned = len(window.messages.messages("warning"))
        drop_axis(window, x, 0, axis)
        qtbot.waitUntil(lambda before=before: window.propagation.count > before, timeout=60_000)
        wait_idle(window)
        route = window.session.propagation.route
        new = window.messages.messages("warning")[warned:]
        assert ("origins off" in route) == any("crashed" in m for m in new)
    assert window.messages.messages("error") == []


def test_a_deeply_nested_module_is_an_error_not_a_crash(make_window, qtbot, tmp_path):
    # 50,000 nested fused locations overflow the MLIR parser's stack.
    deep = "fused[" * 50_000 + '"x"' + "]" * 50_000
    text = (MLIR / "plain.mlir").read_text().replace("loc(#loc19)", f"loc({deep})", 1)
    path = tmp_path / "deep.mlir"
    path.write_text(text)
    window = make_window("example:mlp", propagate=False)
    window.open_program(str(path))
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    (error,) = window.messages.messages("error")
    assert "nest 50003 deep" in error and "\n" not in error
    assert window.windowTitle().startswith("mlp")


def test_a_program_on_its_own_mesh_axes_opens_on_that_mesh(make_window, wait_idle):
    # No MESH in the file: the window used to propagate with its default mesh and Shardy
    # aborted on the program's own axes (dp, tp).
    from tests.support.inputs import PROGRAMS

    window = make_window(str(PROGRAMS / "own_mesh_axes.py"))
    wait_idle(window)
    assert window.session.mesh.shape == {"dp": 2, "tp": 2}
    assert window.session.propagation is not None
    assert window.messages.messages("error") == []


# -- a failed load, as the user meets it in the window -----------------------------------
RAISES = """\
import jax
import jax.numpy as jnp


def step(x):
    raise ValueError("the model's config has no 'layers'")


PROGRAM = step
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
"""

WORKS = """\
import jax
import jax.numpy as jnp


def step(x, w):
    return jnp.tanh(x @ w)


PROGRAM = step
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32), jax.ShapeDtypeStruct((4, 4), jnp.float32))
MESH = {"data": 2, "model": 2}
SPECS = {"x": ["data", None]}
"""


def raised_tab(window, dock_name: str) -> bool:
    """Whether ``dock_name`` is the dock shown in front of its tab group."""
    dock = window.docks[dock_name]
    if not dock.isVisible() or dock.visibleRegion().isEmpty():
        return False
    for bar in window.findChildren(QTabBar):
        titles = [bar.tabText(i) for i in range(bar.count())]
        if dock.windowTitle() in titles:
            return bar.tabText(bar.currentIndex()) == dock.windowTitle()
    return True


def snapshot(window):
    session = window.session
    return (
        json.dumps(session.to_json(), sort_keys=True),
        session.program,
        window.windowTitle(),
        window.qundo.count(),
        len(window.graph.nodes),
    )


def test_opening_a_program_that_raises_shows_the_error_over_the_graph(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    window = make_window("example:conflict")
    window.docks["dock_conflicts"].raise_()  # the user was looking at another tab
    assert not raised_tab(window, "dock_messages")
    banner = window.error_banner
    assert not banner.isVisible()
    before = snapshot(window)
    bad = tmp_path / "raises.py"
    bad.write_text(RAISES)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    qtbot.waitUntil(banner.isVisible, timeout=5000)
    error = window.messages.messages("error")[-1]
    assert "the model's config has no 'layers'" in error and "\n" not in error
    assert "no 'layers'" in banner.label.text()
    assert raised_tab(window, "dock_messages")
    assert window.messages.currentItem().toolTip() == error
    assert "no 'layers'" in window.statusBar().currentMessage()
    # drawn over the top of the graph, below its Back and Find bar
    port = window.graph.viewport()
    top = port.mapTo(window, port.rect().topLeft()).y()
    assert top <= banner.y() < top + 30
    assert window.centralWidget().geometry().contains(banner.geometry())
    assert snapshot(window) == before  # the session stays exactly as it was
    qtbot.mouseClick(banner.close_button, Qt.MouseButton.LeftButton)
    assert not banner.isVisible() and window.messages.messages("error")[-1] == error


def test_run_source_again_on_a_deleted_source_shows_why_and_keeps_the_session(
    make_window, qtbot, tmp_path, pick
):
    source = tmp_path / "model.py"
    source.write_text(WORKS)
    window = make_window(str(source))
    before = snapshot(window)
    source.unlink()
    pick(window, "&File", "&Run source again")
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    banner = window.error_banner
    qtbot.waitUntil(banner.isVisible, timeout=5000)
    error = window.messages.messages("error")[-1]
    assert error.startswith(f"cannot run {source} again: {source} is no longer there")
    assert "put it back" in error and "\n" not in error
    assert banner.label.text() == error
    assert raised_tab(window, "dock_messages")
    assert "model.py" in window.statusBar().currentMessage()
    assert snapshot(window) == before
    # the file back: Run source again works and the banner goes
    source.write_text(WORKS)
    pick(window, "&File", "&Run source again")
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    qtbot.waitUntil(lambda: not banner.isVisible(), timeout=5000)
    assert window.session.program is not before[1]
