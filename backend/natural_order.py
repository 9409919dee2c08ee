"""Natural order for names a user reads in lists: ``layer_2`` before ``layer_10``.

``natural_key`` splits a name into runs of digits and of other characters and compares
the digit runs as numbers, so every list of scopes (the outline, the scope pickers, the
scope names ``render`` suggests) puts layers in the order they were built.
"""

from __future__ import annotations

import re

_RUNS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple:
    """A sort key for ``text``: digit runs compare as numbers, the rest case-insensitively
    (numbers before letters; ties broken by the exact text, so the order is total)."""
    parts = _RUNS.split(text)
    key: list[tuple[int, int | str]] = []
    for i, part in enumerate(parts):
        if i % 2:
            key.append((0, int(part)))
        elif part:
            key.append((1, part.casefold()))
    return (tuple(key), text)


def natural_sorted(names) -> list[str]:
    """``names`` in natural order."""
    return sorted(names, key=natural_key)


def scope_order(path: str) -> tuple:
    """The key of a scope path (``/``-joined) in a list of paths: parents before their
    children, each level in natural order."""
    return (path.count("/"), tuple(natural_key(part) for part in path.split("/")))
