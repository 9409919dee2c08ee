"""Everything a command started: found by its marker and as orphans handed to us, ended."""

import os
import signal
import subprocess
import sys
import time

import pytest

from shardscope.backend.isolation import descendants
from shardscope.backend.isolation.descendants import (
    MARKER_ENV,
    children,
    end_tree,
    marked,
    new_marker,
    subreaper,
)
from tests.support.processes import alive, gone_within

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# Starts a sleeper in a session of its own (with an environment of its own unless told to
# keep this one), prints its pid and exits: the sleeper is an orphan.
_ORPHAN = (
    "import os, subprocess, sys\n"
    "env = None if sys.argv[1] == 'keep' else {}\n"
    "p = subprocess.Popen(['/bin/sleep', '600'], start_new_session=True, env=env,\n"
    "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(p.pid)\n"
)


def _orphan(env_of_its_own: bool, marker: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _ORPHAN, "own" if env_of_its_own else "keep"],
        env=dict(os.environ, **{MARKER_ENV: marker}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return int(done.stdout)


def _kill(*pids: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_markers_are_found_in_the_environment_of_what_inherits_them():
    marker = new_marker()
    assert marker != new_marker()
    kept = _orphan(False, marker)
    own = _orphan(True, marker)
    try:
        assert marked(marker) == [kept]
        assert marked(new_marker()) == []
    finally:
        _kill(kept, own)


def test_an_orphan_is_handed_to_a_subreaper_and_ended_with_the_tree():
    marker = new_marker()
    before = children()
    with subreaper() as handed_to_us:
        assert handed_to_us
        own = _orphan(True, marker)
        try:
            # Its parent exited: the orphan is ours now, though its marker is gone.
            deadline = time.monotonic() + 5
            while own not in children() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert own in children() and marked(marker) == []
            assert end_tree(marker, before) == [own]
        finally:
            _kill(own)
        # Reaped, not left a zombie of ours.
        assert own not in children()
    assert not alive(own)
    # Afterwards an orphan goes where it went before.
    own = _orphan(True, marker)
    try:
        time.sleep(0.2)
        assert own not in children()
    finally:
        _kill(own)


def test_end_tree_kills_what_the_marker_finds_and_spares_the_children_it_keeps():
    marker = new_marker()
    ours = subprocess.Popen(["/bin/sleep", "600"])
    kept = _orphan(False, marker)
    try:
        assert end_tree(marker, children()) == [kept]
        assert gone_within(kept, 5)
        assert ours.poll() is None
    finally:
        ours.kill()
        ours.wait()
        _kill(kept)


def test_without_proc_or_prctl_nothing_is_found_and_nothing_fails(monkeypatch):
    monkeypatch.setattr(descendants, "_prctl", lambda: None)
    monkeypatch.setattr(descendants, "_pids", lambda: [])
    with subreaper() as handed_to_us:
        assert not handed_to_us
    assert marked(new_marker()) == [] and children() == set()
    assert end_tree(new_marker(), set()) == []
