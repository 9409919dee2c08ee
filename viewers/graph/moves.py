"""How far a redrawing moved what the view shows, so that the view can keep it in place.

Unfolding or folding a scope redraws the frame; most nodes keep their place or all move by
the same offset. These functions measure that offset in viewport pixels (what a redrawing
can scroll instead of sending again, see ``damage.shifted_change``) and scroll back the
pixel or two that centring on a scene point rounds away.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint

if TYPE_CHECKING:
    from PySide6.QtWidgets import QGraphicsView

    from shardscope.viewers.graph.items import NodeItem

# how far (viewport pixels) rounding may move a drawing that kept its scene place
SNAP_PIXELS = 2


def node_points(view: QGraphicsView, nodes: Sequence[NodeItem]) -> dict[str, QPoint]:
    """Where each of the drawn ``nodes`` is in ``view``'s viewport, by node key."""
    return {item.node.key: view.mapFromScene(item.pos()) for item in nodes}


def moves_since(
    view: QGraphicsView, nodes: Sequence[NodeItem], before: dict[str, QPoint]
) -> Counter:
    """(dx, dy) in viewport pixels -> how many of the ``nodes`` drawn both in ``before``
    and now moved by it."""
    return Counter(
        (point.x() - before[key].x(), point.y() - before[key].y())
        for key, point in node_points(view, nodes).items()
        if key in before
    )


def moves_from(
    view: QGraphicsView, nodes: Callable[[], Sequence[NodeItem]], before: dict[str, QPoint]
) -> Callable[[], tuple | None]:
    """A function giving how far (in viewport pixels) most of the nodes drawn both before
    and now (``nodes()``) moved: the move a redrawing can scroll."""

    def moved() -> tuple[int, int] | None:
        moves = moves_since(view, nodes(), before)
        moving = [(m, n) for m, n in moves.most_common(2) if m != (0, 0)]
        return moving[0][0] if moving else None

    return moved


def snap_to(view: QGraphicsView, nodes: Sequence[NodeItem], before: dict[str, QPoint]) -> None:
    """Centring on a scene point rounds to whole pixels: where most of the nodes drawn
    both before and now ended up a pixel or two from where they were, scroll them back,
    so that what did not move is not sent again."""
    moves = moves_since(view, nodes, before)
    small = [(m, n) for m, n in moves.most_common() if max(map(abs, m)) <= SNAP_PIXELS]
    if not small:
        return
    (dx, dy), _ = small[0]
    if (dx, dy) != (0, 0):
        view.horizontalScrollBar().setValue(view.horizontalScrollBar().value() + dx)
        view.verticalScrollBar().setValue(view.verticalScrollBar().value() + dy)


def scope_anchor(
    view: QGraphicsView, nodes: Sequence[NodeItem], path: str
) -> tuple[str, QPoint] | None:
    """(scope path, viewport point of the scope's first drawn node): where a redrawing
    puts the scope's first node again (see ``GraphView._place``); None if not drawn."""
    for item in nodes:
        if item.node.scope == path or (item.node.scope or "").startswith(path + "/"):
            return path, view.mapFromScene(item.pos())
    return None
