"""One child per program answers every propagation of it: the same answers as
``propagate``, the final shardings first, superseded requests cut short, and a crash,
a hang or a dead parent never leaves anything behind."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from shardscope.backend.errors import ShardscopeError, SpecError
from shardscope.backend.propagation import server as server_module
from shardscope.backend.propagation.guard import ChildCrashed
from shardscope.backend.propagation.propagate import propagate, start_propagation
from shardscope.backend.propagation.server import PropagationServer, Superseded
from tests.support.compile_oracle import loaded
from tests.support.processes import alive, gone_within

MESH = {"data": 4, "model": 2}


@pytest.fixture
def conflict():
    return loaded("example:conflict")


@pytest.fixture
def serve():
    servers = []

    def make(program, **kwargs):
        servers.append(PropagationServer(program, **kwargs))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def same(a, b) -> bool:
    return json.dumps(a.to_json(), sort_keys=True) == json.dumps(b.to_json(), sort_keys=True)


def test_answers_equal_propagates_and_the_final_shardings_come_first(conflict, serve):
    server = serve(conflict)
    for specs in ({}, {"x": "_,model"}, {"x": "data,_", "y": "_,data"}):
        finals = []
        result = server.propagate(MESH, specs, on_final=finals.append)
        assert same(result, propagate(conflict, MESH, specs, strict=False))
        assert result.graph is conflict.graph
        # The first answer lists exactly the sharded values of the whole result.
        (dims,) = finals
        sharded = {v.id: tuple(tuple(d) for d in v.spec) for v in result.values if any(v.spec)}
        assert dims == sharded
    assert server.served == 3


def test_the_annotated_module_comes_when_asked_as_the_cli_route_writes_it(conflict, serve):
    server = serve(conflict)
    specs = {"x": "_,model"}
    expected = start_propagation(
        conflict, MESH, specs, strict=False, keep_annotated=True
    ).annotated_text
    assert "sdy.sharding" in expected and "loc(" in expected
    for first in (False, True):
        replies = []
        server.propagate(
            MESH,
            specs,
            on_final=lambda _dims, replies=replies: replies.append("final"),
            on_annotated=replies.append,
            annotated_first=first,
        )
        # Right after the final shardings, or before Shardy runs.
        assert replies == ([expected, "final"] if first else ["final", expected])
    # Not asked: not sent.
    finals = []
    server.propagate(MESH, specs, on_final=finals.append)
    assert len(finals) == 1


def test_one_child_serves_every_request(conflict, serve):
    server = serve(conflict)
    server.propagate(MESH, {})
    pid = server.pid
    server.propagate(MESH, {"x": "model,_"})
    assert server.pid == pid and alive(pid)


def test_bad_input_is_raised_as_propagate_raises_it(conflict, serve):
    server = serve(conflict)
    with pytest.raises(SpecError) as ours:
        server.propagate(MESH, {"x": "nosuch,_"}, strict=True)
    with pytest.raises(SpecError) as theirs:
        propagate(conflict, MESH, {"x": "nosuch,_"}, strict=True)
    assert str(ours.value) == str(theirs.value)
    # The child is still there for the next request.
    assert server.propagate(MESH, {}).values


def test_a_newer_request_cuts_the_older_one_short(conflict, serve, monkeypatch):
    real = server_module.run_prepared

    def slow_after_final(prep, origins, *, on_final, checkpoint):
        def late_checkpoint():
            time.sleep(0.5)
            checkpoint()

        return real(prep, origins, on_final=on_final, checkpoint=late_checkpoint)

    # Patched before the child is forked, so the child runs it.
    monkeypatch.setattr(server_module, "run_prepared", slow_after_final)
    server = serve(conflict)
    newer: dict = {}

    def ask_again(_dims):
        if "thread" in newer:
            return
        newer["thread"] = threading.Thread(
            target=lambda: newer.setdefault("result", server.propagate(MESH, {"x": "_,model"}))
        )
        newer["thread"].start()
        while server._latest < 2:
            time.sleep(0.001)

    with pytest.raises(Superseded):
        server.propagate(MESH, {}, on_final=ask_again)
    newer["thread"].join(60)
    assert same(newer["result"], propagate(conflict, MESH, {"x": "_,model"}, strict=False))


def test_a_crash_is_reported_and_the_next_request_starts_a_new_child(conflict, serve):
    server = serve(conflict)
    server.propagate(MESH, {})
    first = server.pid
    os.kill(first, signal.SIGKILL)
    assert gone_within(first, 5)
    with pytest.raises(ChildCrashed):
        server.propagate(MESH, {})
    assert server.pid is None
    assert same(server.propagate(MESH, {}), propagate(conflict, MESH, {}, strict=False))
    assert server.pid not in (None, first)


def test_a_crash_inside_a_request_names_how_the_child_ended(conflict, serve, monkeypatch):
    def abort(*_args, **_kwargs):
        os.write(2, b"LLVM ERROR: something Shardy did not expect\n")
        os.kill(os.getpid(), signal.SIGABRT)

    monkeypatch.setattr(server_module, "run_prepared", abort)
    server = serve(conflict)
    with pytest.raises(ChildCrashed) as info:
        server.propagate(MESH, {})
    assert str(info.value) == "killed by SIGABRT (LLVM ERROR: something Shardy did not expect)"


def test_a_hung_child_is_killed_at_the_limit(conflict, serve, monkeypatch):
    monkeypatch.setattr(server_module, "run_prepared", lambda *a, **k: time.sleep(60))
    server = serve(conflict, timeout=0.5)
    with pytest.raises(ShardscopeError, match="did not finish within 0.5 s"):
        server.propagate(MESH, {})
    assert server.pid is None


def test_close_stops_the_child_and_later_requests_are_refused(conflict, serve):
    server = serve(conflict)
    server.propagate(MESH, {})
    pid = server.pid
    server.close()
    assert gone_within(pid, 5)
    with pytest.raises(Superseded):
        server.propagate(MESH, {})


def test_closing_while_a_request_runs_answers_it_superseded(conflict, serve, monkeypatch):
    monkeypatch.setattr(server_module, "run_prepared", lambda *a, **k: time.sleep(60))
    server = serve(conflict)
    outcome = []

    def ask():
        try:
            server.propagate(MESH, {})
        except Superseded:
            outcome.append("superseded")

    thread = threading.Thread(target=ask)
    thread.start()
    while server.pid is None:
        time.sleep(0.01)
    pid = server.pid
    time.sleep(0.2)
    server.close()
    thread.join(10)
    assert outcome == ["superseded"] and gone_within(pid, 5)


SCRIPT = """
import os, sys
from shardscope.backend.propagation.server import PropagationServer
from tests.support.compile_oracle import loaded
server = PropagationServer(loaded("example:conflict"))
server.propagate({"data": 4, "model": 2}, {})
print(server.pid, flush=True)
os._exit(0)  # no close: the child must notice on its own
"""


def test_the_child_does_not_outlive_its_parent(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=root, timeout=120
    )
    pid = int(out.stdout.split()[-1])
    assert gone_within(pid, 10)
