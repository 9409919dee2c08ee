"""Thread stacks of a worker with many fake CPU devices, sized to fit its memory limit.

JAX's CPU client starts one thread per device (2,058 threads named "python" for 2,048
devices, counted here), each with the process's default stack: 8 MiB under the usual
8 MiB ``RLIMIT_STACK``, and XLA's compile runs on them. A worker's memory limit
(``RLIMIT_DATA``, see ``isolation.limits``) counts reserved stacks whether used or not:
2,048 of 8 MiB reserve 16 GiB. ``size_thread_stacks``, called before the client starts,
gives the threads started from then on at most ``STACK_BUDGET`` bytes of stacks in all
(2 MiB each for 2,048 devices; 512 devices or fewer keep 8 MiB).
"""

from __future__ import annotations

import ctypes
import os
import re

# The most bytes of thread stacks the CPU client's threads reserve.
STACK_BUDGET = 4 * 2**30
_PTHREAD_ATTR_BYTES = 128  # at least sizeof(pthread_attr_t) (56 on x86-64 glibc)


def size_thread_stacks(flags: str | None = None) -> int | None:
    """Size the stacks for the device count ``XLA_FLAGS`` (or ``flags``) asks for with
    ``--xla_force_host_platform_device_count``; that count, None where it asks for none."""
    devices = _device_count_flag(os.environ.get("XLA_FLAGS", "") if flags is None else flags)
    if devices:
        thread_stack_size(devices)
    return devices


def _device_count_flag(flags: str) -> int | None:
    """N of ``--xla_force_host_platform_device_count=N`` in ``flags``, the last one given."""
    found = re.findall(r"--xla_force_host_platform_device_count=(\d+)", flags)
    return int(found[-1]) if found else None


def thread_stack_size(devices: int) -> int | None:
    """Give the threads started from now on with default attributes a stack of at most
    ``STACK_BUDGET / devices`` bytes (never more than they had); the size they get, None
    where glibc's ``pthread_setattr_default_np`` is missing or refuses."""
    try:
        libc = ctypes.CDLL(None)
        get_default, set_default = libc.pthread_getattr_default_np, libc.pthread_setattr_default_np
    except (OSError, AttributeError):
        return None
    attr = ctypes.create_string_buffer(_PTHREAD_ATTR_BYTES)
    if get_default(attr) != 0:
        return None
    try:
        size = ctypes.c_size_t()
        if libc.pthread_attr_getstacksize(attr, ctypes.byref(size)) != 0:
            return None
        wanted = min(size.value, STACK_BUDGET // max(devices, 1))
        if wanted == size.value:
            return wanted
        if libc.pthread_attr_setstacksize(attr, ctypes.c_size_t(wanted)) != 0:
            return None
        return wanted if set_default(attr) == 0 else None
    finally:
        libc.pthread_attr_destroy(attr)
