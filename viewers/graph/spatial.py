"""A uniform grid over rectangles, for "how much of this spot do they cover" queries.

Placing the name of each piece of every scope region asks, for a few candidate spots,
how much the spec badges cover them. Testing each spot against every badge grows as
spots times badges (tens of millions of tests on a fully unfolded 24-layer model); the
grid tests a spot only against the badges in the cells it touches.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

# Cell side in scene units: about one badge row wide, a little over one layer high.
CELL = 160.0

Rect = tuple[float, float, float, float]  # left, top, width, height


class RectIndex:
    """Rectangles bucketed by the grid cells they touch.

    ``queries`` and ``tests`` count the spots asked about and the rectangle pairs
    actually tested (benchmarks print them).
    """

    def __init__(self, rects: Iterable[Rect], cell: float = CELL) -> None:
        self.cell = cell
        self.rects: list[Rect] = []
        self._cells: dict[tuple[int, int], list[int]] = defaultdict(list)
        for rect in rects:
            self.add(rect)
        self.queries = 0
        self.tests = 0

    def add(self, rect: Rect) -> None:
        """One more rectangle (``left, top, width, height``)."""
        rect = tuple(map(float, rect))
        i = len(self.rects)
        self.rects.append(rect)
        for key in self._keys(rect):
            self._cells[key].append(i)

    def __len__(self) -> int:
        return len(self.rects)

    def _keys(self, rect: Rect):
        x, y, w, h = rect
        c = self.cell
        for gx in range(math.floor(x / c), math.floor((x + max(w, 0.0)) / c) + 1):
            for gy in range(math.floor(y / c), math.floor((y + max(h, 0.0)) / c) + 1):
                yield gx, gy

    def near(self, rect: Rect) -> list[int]:
        """Indices of the rectangles sharing a grid cell with ``rect`` (each once)."""
        seen: set[int] = set()
        out = []
        for key in self._keys(rect):
            for i in self._cells.get(key, ()):
                if i not in seen:
                    seen.add(i)
                    out.append(i)
        return out

    def covered(self, rect: Rect) -> float:
        """How much of ``rect`` the rectangles cover (overlap areas added up)."""
        self.queries += 1
        x, y, w, h = rect
        total = 0.0
        for i in self.near(rect):
            self.tests += 1
            ox, oy, ow, oh = self.rects[i]
            dx = min(x + w, ox + ow) - max(x, ox)
            dy = min(y + h, oy + oh) - max(y, oy)
            if dx > 0 and dy > 0:
                total += dx * dy
        return total
