"""The multi-host half of ``shardscope capture``, loaded by this folder's ``sitecustomize``
into each of the H processes ``capture --hosts H`` runs the script as (after jax is
imported, before the script runs).

Each process has ``JAX_COORDINATOR_ADDRESS`` (which ``jax.distributed.initialize`` reads
itself), ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` (which jax does not read: for
scripts that read them), and ``SHARDSCOPE_CAPTURE_HOSTS``/``SHARDSCOPE_CAPTURE_HOST``.
This module:

- wraps ``jax.distributed.initialize`` so that a call that leaves out
  ``coordinator_address``, ``num_processes`` or ``process_id`` gets this process's, with
  cluster auto-detection (SLURM, Open MPI, Kubernetes, Cloud TPU) off unless the call asks
  for it; a call that gives another process count or id ends the process with a one-line
  reason;
- ends the process with a one-line reason when the script first uses JAX's devices
  (``xla_bridge.backends``) before calling ``jax.distributed.initialize``;
- ends the process at once (``os._exit``) on an uncaught exception, its traceback printed
  first: a process that raised would otherwise wait at JAX's shutdown barrier for peers
  that wait on it in a collective;
- likewise a joined process that leaves through ``sys.exit`` with a status other than 0
  (``sys.exit`` raises ``HostExit``, which notes the status the interpreter exits with),
  once the exit handlers registered after joining have run;
- marks a joined process's end of script (``exiting`` in its capture folder, before JAX's
  shutdown barrier), so that ``capture_hosts`` can tell a host waiting there for its
  peers from one still running;
- keeps in ``state`` (written to ``functions.json`` by ``sitecustomize``): the host,
  ``distributed`` (``"not called"``, ``"joining"``, ``"joined"``, ``"exiting"``), and the
  ``error`` that ended the process (``kind`` ``"raised"``, ``"no-initialize"`` or
  ``"arguments"``, and its one-line ``reason``; ``"exited"`` and its ``status``).

It imports nothing of shardscope: the script may run in another environment.
"""

from __future__ import annotations

import atexit
import functools
import inspect
import os
import sys
import traceback

HOSTS = int(os.environ.get("SHARDSCOPE_CAPTURE_HOSTS", "1"))
HOST = int(os.environ.get("SHARDSCOPE_CAPTURE_HOST", "0"))
# The exit status of a process this module ends for a reason of its own.
STATUS = 3

# The marker of a joined process that ended its script, in its capture folder.
EXITING = "exiting"

_state: dict = {}
_write = None
# The status the interpreter is exiting with, where it left through ``sys.exit``.
_exit_status: list[int] = []


class HostExit(SystemExit):
    """What ``sys.exit`` raises here: a ``SystemExit`` whose ``code``, read by the
    interpreter itself as it exits (no Python caller), notes the exit status."""

    @property
    def code(self):
        code = _CODE.__get__(self)
        try:
            sys._getframe(1)
        except ValueError:  # no Python frame: the interpreter is ending on this exception
            _exit_status[:] = [_status_of(code)]
        return code

    @code.setter
    def code(self, value) -> None:
        _CODE.__set__(self, value)


_CODE = SystemExit.__dict__["code"]


def _status_of(code) -> int:
    """The exit status the interpreter gives ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    return 1  # any other object: printed, status 1


def _exit(status=None, /):
    raise HostExit(status)


def install(jax, state: dict, write) -> None:
    """Wrap ``jax.distributed.initialize`` and JAX's first use of devices, and catch an
    uncaught exception, keeping what happens in ``state`` (``write(final)`` writes it)."""
    global _state, _write
    _state, _write = state, write
    state.update(host=HOST, hosts=HOSTS, distributed="not called")
    write()
    _wrap_initialize(jax)
    _watch_backends()
    sys.exit = _exit
    previous = sys.excepthook

    def excepthook(kind, value, tb) -> None:
        previous(kind, value, tb)
        _end("raised", _one_line(kind, value))

    sys.excepthook = excepthook


def _one_line(kind, value) -> str:
    lines = traceback.format_exception_only(kind, value)
    text = " ".join(line.strip() for line in lines[-1:] if line.strip())
    return text[:1000] or kind.__name__


def _end(kind: str, reason: str) -> None:
    """Record why this process ends, print it, and end it now (skipping JAX's shutdown
    barrier, which would wait for peers)."""
    _state["error"] = {"kind": kind, "reason": reason}
    try:
        _write(final=True)
    except OSError:
        pass  # capture's folder is gone: capture itself has ended
    if kind != "raised":
        print(f"shardscope capture, host {HOST}: {reason}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(STATUS if kind != "raised" else 1)


def _wrap_initialize(jax) -> None:
    real = jax.distributed.initialize
    try:
        signature = inspect.signature(real)
    except (TypeError, ValueError):
        signature = None

    @functools.wraps(real)
    def initialize(*args, **kwargs):
        if signature is None:
            return real(*args, **kwargs)
        try:
            given = signature.bind_partial(*args, **kwargs).arguments
        except TypeError:
            return real(*args, **kwargs)  # JAX says what is wrong with the call
        for name, ours in (("num_processes", HOSTS), ("process_id", HOST)):
            if given.get(name) is not None and given[name] != ours:
                _end(
                    "arguments",
                    f"the script passed {name}={given[name]!r} to jax.distributed.initialize(), "
                    f"but this process is {name.replace('_', ' ')} {ours} of capture --hosts "
                    f"{HOSTS}: leave it out (capture fills it in) or read it from "
                    f"JAX_{name.upper()}",
                )
        if given.get("coordinator_address") is None:
            given["coordinator_address"] = os.environ.get("JAX_COORDINATOR_ADDRESS")
        given["num_processes"] = HOSTS
        given["process_id"] = HOST
        if "cluster_detection_method" in signature.parameters:
            given.setdefault("cluster_detection_method", "deactivate")
        _state["distributed"] = "joining"
        _write()
        result = real(**given)
        _state["distributed"] = "joined"
        _write()
        # Registered after jax's own exit handler, so it runs before JAX's shutdown barrier.
        atexit.register(_exiting)
        return result

    jax.distributed.initialize = initialize


def _exiting() -> None:
    """The script has ended (JAX's shutdown barrier is next): mark it, and end the process
    now where it exits through ``sys.exit`` with a status other than 0 (its peers would
    wait for it at that barrier, and it for them)."""
    _state["distributed"] = "exiting"
    status = _exit_status[0] if _exit_status else 0
    if status:
        _state["error"] = {"kind": "exited", "status": status}
    try:
        _write(final=bool(status))
        folder = os.environ.get("SHARDSCOPE_CAPTURE_DIR")
        if folder:
            with open(os.path.join(folder, EXITING), "w") as f:
                f.write(str(status))
    except OSError:
        pass  # capture's folder is gone: capture itself has ended
    if status:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _watch_backends() -> None:
    """End the process when JAX first starts its backends (the script's first use of
    devices) before ``jax.distributed.initialize`` was called."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    real = getattr(bridge, "backends", None)
    if real is None:
        return

    @functools.wraps(real)
    def backends():
        if _state.get("distributed") == "not called":
            _end(
                "no-initialize",
                f"the script used JAX's devices before calling jax.distributed.initialize(): "
                f"with --hosts {HOSTS} each of its {HOSTS} processes must call "
                f"jax.distributed.initialize() (its arguments may be left out) before its "
                f"first use of devices",
            )
        bridge.backends = real
        return real()

    bridge.backends = backends
