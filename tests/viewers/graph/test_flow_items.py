"""A flow along an edge: drawn in pieces, only near what is asked for, each piece once."""

from shardscope.viewers.graph.flow_items import PIECE, STRAIGHT_PIECE, FlowItem, edge_runs


def _meets(box, rect) -> bool:
    # boxes of straight pieces have no width: QRectF.intersects calls them empty
    return (
        box.left() <= rect.right()
        and box.right() >= rect.left()
        and box.top() <= rect.bottom()
        and box.bottom() >= rect.top()
    )


def _long_edge_path():
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QPainterPath

    # straight down a long way, then a long diagonal: the two kinds of long runs
    path = QPainterPath(QPointF(0, 0))
    path.lineTo(QPointF(0, 20_000))
    path.lineTo(QPointF(5_000, 25_000))
    return path


def test_a_long_flow_makes_only_the_pieces_near_what_is_asked_for():
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QPen

    flow = FlowItem(_long_edge_path(), 1.0, QPen(QColor("red"), 4))
    near = QRectF(-100, 19_900, 400, 400)
    flow.cover(near)
    boxes = [p.path().controlPointRect() for p in flow.pieces]
    assert boxes and all(_meets(b, near.adjusted(-500, -500, 500, 500)) for b in boxes)
    assert len(flow.pieces) < 20
    # diagonal pieces are short, a vertical run's are thin bands
    for box in boxes:
        assert min(box.width(), box.height()) <= PIECE
    flow.cover(near)  # asking again makes nothing twice
    assert len(flow.pieces) == len(boxes)
    flow.cover(None)
    ends = [p.path().pointAtPercent(1) for p in flow.pieces]
    starts = [p.path().pointAtPercent(0) for p in flow.pieces]
    assert (0, 0) in [(s.x(), s.y()) for s in starts]
    assert any(abs(e.x() - 5_000) < 1e-6 and abs(e.y() - 25_000) < 1e-6 for e in ends)
    # every piece is made once: the pieces together are as long as the path
    total = sum(p.path().length() for p in flow.pieces)
    assert abs(total - flow.path().length()) < 1.0


def test_a_straight_run_is_cut_into_long_pieces_and_a_diagonal_into_short_ones():
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QPainterPath

    straight = QPainterPath(QPointF(0, 0))
    straight.lineTo(QPointF(0, 4 * STRAIGHT_PIECE))
    diagonal = QPainterPath(QPointF(0, 0))
    diagonal.lineTo(QPointF(300, 400))
    ((*_, straight_count),) = edge_runs(straight)
    ((*_, diagonal_count),) = edge_runs(diagonal)
    assert straight_count == 4
    assert diagonal_count == 500 // int(PIECE) + 1
