"""Pausing Python's cyclic garbage collector around a burst of allocations.

Laying out and drawing a large program makes hundreds of thousands of small objects
that all live on (layout nodes, edges, Qt items and their wrappers). With the collector
on, each burst starts collections that scan every object of the program loaded before
it and find nothing to free; ``paused()`` keeps it off for the burst. Reference counting
still frees what dies meanwhile; cycles made inside wait for the next collection.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Inside: no cyclic collection. The collector is on again afterwards if it was on
    before (a block inside another leaves it to the outer one)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def paused_during(fn):
    """``fn`` run with the collector paused (see ``paused``)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with paused():
            return fn(*args, **kwargs)

    return run
