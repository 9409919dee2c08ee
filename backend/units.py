"""Byte counts and durations as every report and view writes them.

The CLI, the docks and ``render`` all read sizes and times through these two
functions, so one figure reads the same wherever it appears.
"""

from __future__ import annotations


def bytes_text(n: float) -> str:
    """``512 B``, ``1.5 KiB``, ``12.0 MiB``, ``3.0 GiB`` (binary units, one decimal)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def seconds_text(seconds: float) -> str:
    """``850 ns``, ``12.3 µs``, ``4.56 ms``, ``1.20 s``: the unit that keeps the figure
    between 1 and 1000, with about three significant digits."""
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"
