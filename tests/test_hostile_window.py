"""The hostile-input corpus through the window: every program file the command line's
``load`` cases open (tests/inputs/hostile/cases*.json) is opened with File > Open program.

Each must either load or fail as one line in Messages, leaving the window exactly as it
was (title, session file, program, specs, undo history); the window keeps working after
every one. Cases whose source is not a file of the corpus (examples, options) belong to
the command line's own tests.
"""

import contextlib
import os
import signal

import pytest

from shardscope.backend.isolation.forkserver import shared_server

# The window tests' own fixtures: settings and recovery files in a temporary folder, the
# offscreen platform, a window factory and a drag's drop.
from tests.app.conftest import _isolated_state  # noqa: F401
from tests.app.window.conftest import drop_axis, make_window  # noqa: F401
from tests.support.inputs import MLIR, PROGRAMS
from tests.support.processes import alive, gone_within
from tests.test_hostile import CASES, HOSTILE, _make_inputs, _pids

pytestmark = pytest.mark.slow


def _file_cases() -> list[dict]:
    out = []
    for case in CASES:
        argv = case["argv"]
        if not argv or argv[0] != "load":
            continue
        rest = [a for a in argv[1:] if a != "--json"]
        if not rest or not rest[0].startswith(("{H}", "{T}", "{M}", "{P}")):
            continue
        timeout = None
        if rest[1:3] and rest[1] == "--timeout":
            timeout, rest = float(rest[2]), rest[:1] + rest[3:]
        if len(rest) != 1:
            continue
        out.append({**case, "source": rest[0], "timeout": timeout})
    return out


FILE_CASES = _file_cases()


def _state(window):
    return (
        window.windowTitle(),
        window.files.session_path,
        window.session.program,
        [window.qundo.text(i) for i in range(window.qundo.count())],
        window.qundo.index(),
    )


def test_the_corpus_has_file_cases():
    assert len(FILE_CASES) >= 40


def test_every_corpus_file_opens_or_fails_in_one_line(
    make_window,  # noqa: F811 (the fixture imported above)
    qtbot,
    tmp_path,
    drop_axis,  # noqa: F811
):
    _make_inputs(tmp_path)
    where = {"H": str(HOSTILE), "T": str(tmp_path), "M": str(MLIR), "P": str(PROGRAMS)}
    window = make_window("example:mlp", propagate=False)
    failures = []
    for case in FILE_CASES:
        source = case["source"].format(**where)
        window.files.loader.load_timeout = case["timeout"] or 60.0
        before = _state(window)
        errors = len(window.messages.messages("error"))
        window.files.open_program(source)
        qtbot.waitUntil(lambda: window.files.loading is None, timeout=90_000)
        new_errors = window.messages.messages("error")[errors:]
        if case["expect"] == "ok":
            if new_errors or window.session.program is before[2]:
                failures.append(f"{case['name']}: did not open: {new_errors}")
            # Back to the example, so the next case starts from the same window.
            window.files.open_program("example:mlp")
            qtbot.waitUntil(lambda: window.files.loading is None, timeout=90_000)
            continue
        expect = case["expect"].removeprefix("error:").strip().lower()
        if _state(window) != before:
            failures.append(f"{case['name']}: the window changed")
        if len(new_errors) != 1:
            failures.append(f"{case['name']}: {len(new_errors)} errors: {new_errors}")
        elif not case.get("multiline") and "\n" in new_errors[0]:
            failures.append(f"{case['name']}: not one line: {new_errors[0]!r}")
        elif expect not in new_errors[0].lower():
            failures.append(f"{case['name']}: {new_errors[0]!r} lacks {expect!r}")
    assert not failures, "\n".join(failures)
    # The window still works after all of them: an edit, propagated, and its undo.
    assert window.session.program.name == "mlp"
    x = window.session.graph.value_by_name("x").id
    before = window.session.spec(x)
    drop_axis(window, x, 1, "model")
    assert window.session.spec(x) != before
    assert window.session.spec(x).dims[1].axes == ("model",)
    window.qundo.undo()
    assert window.session.spec(x) == before


def test_what_a_program_the_window_opens_starts_in_a_session_of_its_own_ends(
    make_window,  # noqa: F811 (the fixture imported above)
    qtbot,
    tmp_path,
    monkeypatch,
):
    # Each import starts three children in sessions of their own (setsid_at_import.py);
    # the second program hangs at import, and the window is closed while it loads.
    pids = tmp_path / "pids.txt"
    monkeypatch.setenv("SETSID_AT_IMPORT_PIDS", str(pids))
    shared_server().close()  # the next load starts one that sees the variable
    window = make_window(None, propagate=False)
    window.files.open_program(str(HOSTILE / "setsid_at_import.py"))
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=90_000)
    assert window.session.program.name == "setsid_at_import"
    loaded = _pids(pids)
    assert len(loaded) == 3 and all(gone_within(pid, 5) for pid in loaded)
    window.files.loader.load_timeout = 300.0
    window.files.open_program(str(HOSTILE / "setsid_hangs.py"))
    qtbot.waitUntil(lambda: len(_pids(pids)) == 6, timeout=90_000)
    try:
        window.close()
        hanging = _pids(pids)[3:]
        assert all(gone_within(pid, 5) for pid in hanging), [p for p in hanging if alive(p)]
    finally:
        for pid in _pids(pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
