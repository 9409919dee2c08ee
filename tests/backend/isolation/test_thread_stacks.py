"""``isolation.thread_stacks``: a worker with many fake CPU devices reserves stacks that fit."""

import subprocess
import sys

from shardscope.backend.isolation.thread_stacks import STACK_BUDGET, _device_count_flag

_PROBE = """
import ctypes, threading
from shardscope.backend.isolation.thread_stacks import size_thread_stacks
print(size_thread_stacks({flags!r}))
sizes = []
def probe():
    libc = ctypes.CDLL(None)
    libc.pthread_self.restype = ctypes.c_ulong
    libc.pthread_getattr_np.argtypes = (ctypes.c_ulong, ctypes.c_void_p)
    attr = ctypes.create_string_buffer(128)
    libc.pthread_getattr_np(libc.pthread_self(), attr)
    size = ctypes.c_size_t()
    libc.pthread_attr_getstacksize(attr, ctypes.byref(size))
    sizes.append(size.value)
t = threading.Thread(target=probe)
t.start(); t.join()
print(sizes[0])
"""


def _stack_after(flags: str) -> tuple[str, int]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE.format(flags=flags)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    devices, size = proc.stdout.split()
    return devices, int(size)


def test_the_device_count_is_the_last_flag_given():
    flags = "--xla_force_host_platform_device_count=8 --xla_force_host_platform_device_count=2048"
    assert _device_count_flag(flags) == 2048
    assert _device_count_flag("--xla_dump_to=/tmp/x") is None


def test_a_thread_started_after_sizing_gets_its_share_of_the_budget():
    devices, size = _stack_after("--xla_force_host_platform_device_count=2048")
    assert devices == "2048"
    assert size <= STACK_BUDGET // 2048
    # A small mesh keeps the default stack.
    _, default = _stack_after("")
    _, small = _stack_after("--xla_force_host_platform_device_count=8")
    assert small == default > STACK_BUDGET // 2048
