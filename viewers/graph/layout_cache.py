"""The layouts a graph view computed lately, kept for when it shows the same state again.

A layout depends only on the frame, its unfolded scopes and the scope drawn alone, so
views of one program can share one cache (the side-by-side panes lay out each state once).
The least recently used layouts go first.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from shardscope.backend.program.layout import GraphLayout

LAYOUT_CACHE = 32

# (frame key, unfolded scopes, scope drawn alone or None)
LayoutKey = tuple[str, frozenset[str], str | None]


class LayoutCache:
    """The last ``LAYOUT_CACHE`` layouts by ``LayoutKey``."""

    def __init__(self, size: int = LAYOUT_CACHE) -> None:
        self.size = size
        self._layouts: OrderedDict[LayoutKey, GraphLayout] = OrderedDict()

    def get(self, key: LayoutKey) -> GraphLayout | None:
        """The layout kept for ``key`` (now the most recently used), or None."""
        layout = self._layouts.get(key)
        if layout is not None:
            self._layouts.move_to_end(key)
        return layout

    def put(self, key: LayoutKey, layout: GraphLayout) -> None:
        """Keep ``layout`` for ``key``, forgetting the least recently used beyond the
        size."""
        self._layouts[key] = layout
        self._layouts.move_to_end(key)
        while len(self._layouts) > self.size:
            self._layouts.popitem(last=False)

    def get_or_build(
        self, key: LayoutKey, build: Callable[[], GraphLayout]
    ) -> tuple[GraphLayout, float | None]:
        """The layout for ``key``, built with ``build`` and kept where none was: the
        layout, and the seconds building took (None when it was kept)."""
        layout = self.get(key)
        if layout is not None:
            return layout, None
        start = time.perf_counter()
        layout = build()
        seconds = time.perf_counter() - start
        self.put(key, layout)
        return layout, seconds

    def clear(self) -> None:
        """Forget every layout (a new program)."""
        self._layouts.clear()

    def __len__(self) -> int:
        return len(self._layouts)
