"""Worker modules for the isolation room's tests: written into a test's folder."""

from shardscope.backend.isolation.worker_job import WorkerJob

# A worker that forks a child that sleeps, writing its pid to child.pid.
FORKER = (
    "import os, sys, time\n"
    "child = os.fork()\n"
    "if child == 0:\n"
    "    time.sleep(600)\n"
    "    os._exit(0)\n"
    "open('child.pid', 'w').write(str(child))\n"
)


def worker_module(tmp_path, name, text):
    (tmp_path / f"{name}.py").write_text(text)
    return name


def worker_job(tmp_path, module, *argv, timeout=120.0, **extra):
    return WorkerJob(
        module, tuple(argv), cwd=tmp_path, log=tmp_path / "log.txt", timeout=timeout, **extra
    )


def json_worker_module(tmp_path, name, body):
    return worker_module(
        tmp_path,
        name,
        "import sys\nfrom shardscope.backend.isolation.json_worker import json_worker_main\n"
        f"def work(job, scratch):\n{body}\n"
        "sys.exit(json_worker_main(sys.argv[1:], work, failure='counting failed'))\n",
    )


def staged_module(tmp_path, first_s, then_s):
    """A worker that sleeps ``first_s``, writes the stage file, then sleeps ``then_s``."""
    done = tmp_path / "stage_done"
    name = worker_module(
        tmp_path,
        "staged",
        f"import pathlib, time\ntime.sleep({first_s})\n"
        f"pathlib.Path({str(done)!r}).write_text('')\ntime.sleep({then_s})\n",
    )
    return name, done
