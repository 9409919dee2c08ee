"""Loading through the warm fork server: isolation between loads, recovery, fallback."""

import os
import threading

from shardscope.backend.isolation.forkserver import shared_server
from shardscope.backend.program.load import load_program


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_program_cannot_leak_state_into_the_next(tmp_path):
    leaky = _write(
        tmp_path,
        "leaky.py",
        "import jax, jax.numpy as jnp\njax.config.update('jax_enable_x64', True)\n"
        "PROGRAM = lambda x: x * 2\nEXAMPLE_ARGS = (jnp.ones(4, dtype=jnp.float64),)\n",
    )
    plain = _write(
        tmp_path,
        "plain.py",
        "import jax.numpy as jnp\nPROGRAM = lambda x: x * 2\nEXAMPLE_ARGS = (jnp.ones(4),)\n",
    )
    assert load_program(leaky).graph.arguments[0].dtype == "f64"
    assert load_program(plain).graph.arguments[0].dtype == "f32"


def test_server_survives_a_hang_and_a_crash(tmp_path):
    hang = _write(tmp_path, "hang.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    crash = _write(tmp_path, "crash.py", "import os\nos.abort()\n")
    for path in (hang, crash):
        try:
            load_program(path, timeout=2)
        except Exception:
            pass
    assert load_program("example:conflict").graph.arguments[0].name == "x"


def test_a_dead_server_is_replaced(tmp_path):
    load_program("example:conflict")
    server = shared_server()
    os.kill(server._proc.pid, 9)
    server._proc.wait()
    assert load_program("example:conflict").name == "conflict"
    assert load_program("example:conflict").name == "conflict"


def test_two_loads_at_once_both_finish(tmp_path):
    slow = _write(
        tmp_path,
        "slow.py",
        "import time\nimport jax.numpy as jnp\ntime.sleep(3)\n"
        "PROGRAM = lambda x: x + 1\nEXAMPLE_ARGS = (jnp.ones(2),)\n",
    )
    results = {}
    worker = threading.Thread(target=lambda: results.update(slow=load_program(slow)))
    worker.start()
    try:
        # one of them gets the server, the other a fresh worker process
        assert load_program("example:conflict").name == "conflict"
    finally:
        worker.join(60)
    assert results["slow"].name == "slow"


def test_a_hung_worker_dies_with_its_client(tmp_path):
    import json
    import time

    from shardscope.backend.isolation.forkserver import ForkServer

    hang = _write(tmp_path, "hang.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    server = ForkServer()
    server.start()
    request = {
        "path": hang,
        "params": {},
        "out": str(tmp_path / "out.json"),
        "err": str(tmp_path / "err.txt"),
        "cwd": str(tmp_path),
    }
    server._proc.stdin.write((json.dumps(request) + "\n").encode())
    server._proc.stdin.flush()
    pid = server._read(timeout=120)["pid"]
    os.kill(pid, 0)  # running
    server.close()  # the app goes away while the program hangs
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError(f"worker {pid} outlived its client")


def test_work_done_while_waiting_runs_once_in_the_loading_thread():
    calls = []
    program = load_program(
        "example:conflict", while_waiting=lambda: calls.append(threading.current_thread())
    )
    assert program.name == "conflict"
    assert calls == [threading.current_thread()]


def test_work_that_fails_while_waiting_leaves_the_next_load_clean():
    def fail():
        raise RuntimeError("interrupted")

    try:
        load_program("example:mlp", while_waiting=fail)
    except RuntimeError as exc:
        assert str(exc) == "interrupted"
    else:
        raise AssertionError("the failure was swallowed")
    # The abandoned load's answer must not be read as the next one's.
    assert load_program("example:conflict").name == "conflict"
    assert load_program("example:mlp").name == "mlp"


def test_the_fresh_worker_fallback_also_waits_usefully(tmp_path, monkeypatch):
    server = shared_server()
    assert server.try_acquire()  # busy: the next load starts a fresh worker
    try:
        calls = []
        program = load_program("example:conflict", while_waiting=lambda: calls.append(1))
    finally:
        server.release()
    assert program.name == "conflict" and calls == [1]
