"""Loading through the warm fork server: isolation between loads, recovery, fallback."""

import os
import sys
import threading
import time

import pytest

from shardscope.backend.isolation.forkserver import ForkServer, shared_server
from shardscope.backend.isolation.limits import MEMORY_ENV
from shardscope.backend.isolation.relay import KilledItsParent
from shardscope.backend.isolation.worker_job import WorkerJob, WorkerTimeout
from shardscope.backend.program.load import load_program
from tests.support.inputs import write_input
from tests.support.processes import gone_within


def test_a_program_cannot_leak_state_into_the_next(tmp_path):
    leaky = write_input(
        tmp_path,
        "leaky.py",
        "import jax, jax.numpy as jnp\njax.config.update('jax_enable_x64', True)\n"
        "PROGRAM = lambda x: x * 2\nEXAMPLE_ARGS = (jnp.ones(4, dtype=jnp.float64),)\n",
    )
    plain = write_input(
        tmp_path,
        "plain.py",
        "import jax.numpy as jnp\nPROGRAM = lambda x: x * 2\nEXAMPLE_ARGS = (jnp.ones(4),)\n",
    )
    assert load_program(leaky).graph.arguments[0].dtype == "f64"
    assert load_program(plain).graph.arguments[0].dtype == "f32"


def test_server_survives_a_hang_and_a_crash(tmp_path):
    hang = write_input(tmp_path, "hang.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    crash = write_input(tmp_path, "crash.py", "import os\nos.abort()\n")
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
    slow = write_input(
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
    hang = write_input(tmp_path, "hang.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    server = ForkServer()
    server.start()
    server._send(
        WorkerJob(
            "shardscope.backend.program.lower",
            (hang, "{}", str(tmp_path / "out.json")),
            cwd=tmp_path,
            log=tmp_path / "err.txt",
            timeout=60,
        )
    )
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


def _job(tmp_path, module, *argv, timeout=60.0, **extra):
    return WorkerJob(
        module, tuple(argv), cwd=tmp_path, log=tmp_path / "log.txt", timeout=timeout, **extra
    )


def test_any_worker_module_runs_in_its_folder_with_its_arguments(tmp_path):
    # The server knows nothing of program loading: it runs whatever module a job names,
    # importable from the job's folder as under python -m.
    write_input(
        tmp_path,
        "echo_worker.py",
        "import os, sys\n"
        "def main(argv):\n"
        "    print('args', *argv, 'in', os.getcwd())\n"
        "    print('to stderr', file=sys.stderr)\n"
        "    return len(argv)\n",
    )
    server = ForkServer(preload=())
    try:
        assert server.run(_job(tmp_path, "echo_worker", "a", "b")) == 2
        assert (tmp_path / "log.txt").read_text().splitlines() == [
            f"args a b in {tmp_path}",
            "to stderr",
        ]
        quiet = _job(tmp_path, "echo_worker", "c", log_stdout=False)
        assert server.run(quiet) == 1
        assert (tmp_path / "log.txt").read_text() == "to stderr\n"
    finally:
        server.close()


def test_a_job_past_its_time_is_killed_and_the_server_carries_on(tmp_path):
    write_input(tmp_path, "sleeper.py", "import time\ndef main(argv):\n    time.sleep(60)\n")
    write_input(tmp_path, "quick.py", "def main(argv):\n    return 0\n")
    server = ForkServer(preload=())
    try:
        with pytest.raises(WorkerTimeout) as caught:
            server.run(_job(tmp_path, "sleeper", timeout=0.5))
        assert caught.value.timeout == 0.5
        assert server.run(_job(tmp_path, "quick")) == 0
    finally:
        server.close()


def test_a_job_whose_answer_waited_past_its_time_is_past_its_time(tmp_path):
    # The job ends at once, while the client is busy for longer than the job may take:
    # its answer is already there when the client looks, and the limit still holds.
    write_input(tmp_path, "quick.py", "def main(argv):\n    return 0\n")
    server = ForkServer(preload=())
    try:
        with pytest.raises(WorkerTimeout):
            server.run(_job(tmp_path, "quick", timeout=1e-9), lambda: time.sleep(0.5))
        assert server.run(_job(tmp_path, "quick", timeout=30), lambda: time.sleep(0.5)) == 0
    finally:
        server.close()


def test_jobs_with_their_own_devices_need_a_fresh_process(tmp_path):
    server = ForkServer(preload=())
    with pytest.raises(ValueError, match="cannot set devices"):
        server.run(_job(tmp_path, "anything", devices=4))


_FORKER = (
    "import os, time\n"
    "def main(argv):\n"
    "    child = os.fork()\n"
    "    if child == 0:\n"
    "        time.sleep(600)\n"
    "        os._exit(0)\n"
    "    open('child.pid', 'w').write(str(child))\n"
    "    time.sleep(float(argv[0]))\n"
    "    return 0\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("sleep", "timeout"), [("0", 120.0), ("600", 2.0)])
def test_what_a_job_forks_ends_with_the_job(tmp_path, sleep, timeout):
    write_input(tmp_path, "forker.py", _FORKER)
    server = ForkServer(preload=())
    try:
        try:
            assert server.run(_job(tmp_path, "forker", sleep, timeout=timeout)) == 0
        except WorkerTimeout:
            assert timeout == 2.0
        assert gone_within(int((tmp_path / "child.pid").read_text()), 5)
    finally:
        server.close()


def test_a_job_has_the_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "2.5")
    write_input(
        tmp_path,
        "limits.py",
        "import resource\ndef main(argv):\n"
        "    print(resource.getrlimit(resource.RLIMIT_DATA)[0])\n    return 0\n",
    )
    server = ForkServer(preload=())
    try:
        assert server.run(_job(tmp_path, "limits")) == 0
        assert (tmp_path / "log.txt").read_text().split() == [str(int(2.5 * 2**30))]
    finally:
        server.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_job_that_kills_the_server_says_so_and_the_next_gets_a_new_one(tmp_path):
    # The job's parent is the server, so the job kills it; what the job forked goes too.
    write_input(
        tmp_path,
        "kills_server.py",
        "import os, signal, time\n"
        "def main(argv):\n"
        "    child = os.fork()\n"
        "    if child == 0:\n"
        "        time.sleep(600)\n"
        "        os._exit(0)\n"
        "    open('child.pid', 'w').write(str(child))\n"
        "    os.kill(os.getppid(), signal.SIGKILL)\n"
        "    time.sleep(600)\n",
    )
    write_input(tmp_path, "quick.py", "def main(argv):\n    return 0\n")
    server = ForkServer(preload=())
    try:
        with pytest.raises(KilledItsParent) as caught:
            server.run(_job(tmp_path, "kills_server"))
        assert caught.value.signum == 9
        assert gone_within(int((tmp_path / "child.pid").read_text()), 5)
        assert server.run(_job(tmp_path, "quick")) == 0
    finally:
        server.close()


def test_a_server_still_importing_ends_when_its_client_is_gone(tmp_path):
    # A command that fails at once exits while its fork server still imports jax; here the
    # import takes a minute, so only the server noticing its client's end can end it.
    import subprocess

    write_input(tmp_path, "slow_preload.py", "import time\n\ntime.sleep(60)\n")
    pid_file = tmp_path / "server.pid"
    client = (
        "from shardscope.backend.isolation.forkserver import ForkServer\n"
        "server = ForkServer(preload=['slow_preload'])\n"
        "server.start()\n"
        f"open({str(pid_file)!r}, 'w').write(str(server._proc.pid))\n"
    )
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    subprocess.run(
        [sys.executable, "-c", client],
        env={**os.environ, "PYTHONPATH": path},
        timeout=60,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    assert gone_within(int(pid_file.read_text()), 10), "the server outlived its client"
