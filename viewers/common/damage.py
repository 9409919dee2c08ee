"""Repaint only the pixels that changed.

Over a forwarded X11 display every repainted pixel crosses the network, and Qt repaints
whole widgets for changes that move a few pixels (a plot whose range was refitted to a
tensor of another size, a text browser given new HTML that differs in one line). The
helpers here draw the widget off screen before and after a change and ask Qt to repaint
only the blocks whose pixels differ:

- ``changed_region(before, after)``: the blocks that differ between two images.
- ``DiffedView(view)``: a QGraphicsView that repaints, on each scene change, only the
  blocks of its viewport that now look different.
- ``quiet_change(widget)``: a context manager; updates ``widget`` and the widgets in it
  ask for inside it are dropped, and the blocks that look different afterwards are
  repainted. ``settle_layouts(widget)`` inside it makes the moves happen there too.
- ``shifted_change(view)``: a context manager for a QGraphicsView whose drawing changes
  so that what lies below some line moves up or down as one (unfolding a scope): the
  view's viewport is scrolled there, which the X server copies in place without the
  pixels crossing the network, and only the blocks that still differ are repainted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import numpy as np
from PySide6.QtCore import SIGNAL, SLOT, QEvent, QObject, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QImage, QPainter, QRegion
from PySide6.QtWidgets import QApplication, QGraphicsView, QWidget
from shiboken6 import isValid

# (width, height) of the blocks compared: one pixel wide, three rows tall
BLOCK = (1, 3)
# changed blocks of a row this many blocks apart or closer are repainted as one run: each
# rectangle sent to the X server costs 32 bytes beyond its pixels (4 bytes each), more
# than the few unchanged pixels between two nearby ones. For the graph (unfolding,
# zooming) these send about 4% fewer bytes than 2-pixel squares 2 apart.
GAP = 2
# the same for the docks' widgets (text above all): a glyph's edges are sharp, so single
# pixels, runs as far as 8 pixels apart joined, send fewer bytes there than 2-pixel
# blocks do (bench_x11 measures it on the inspector's docks: 5% fewer)
TEXT_BLOCK = 1
TEXT_GAP = 8
# what a change posts to the widgets it changed and that repaints them when delivered
_POSTED = (QEvent.Type.PolishRequest.value, QEvent.Type.LayoutRequest.value)
_off_screen = 0


def drawing_off_screen() -> bool:
    """True while a helper here draws a widget into an image: the paint events the
    widget gets then reach no display (for code that counts what is repainted)."""
    return _off_screen > 0


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    height, width = image.height(), image.width()
    data = np.frombuffer(
        image.constBits(), dtype=np.uint32, count=height * image.bytesPerLine() // 4
    )
    # a copy: the array must not outlive the converted image that owns its memory
    return data.reshape(height, image.bytesPerLine() // 4)[:, :width].copy()


def changed_region(
    before: QImage | None,
    after: QImage,
    block: int | tuple[int, int] = BLOCK,
    gap: int = GAP,
) -> QRegion:
    """The blocks (``block`` pixels square, or (width, height)) where ``after`` differs
    from ``before``, as one region whose rows of neighbouring blocks (and of blocks at
    most ``gap`` blocks apart) are merged. Where the sizes differ, the images are compared where they overlap (both
    anchored at the top left) and the rest of ``after`` counts as changed; with no
    ``before``, all of ``after`` has."""
    full = QRegion(QRect(0, 0, after.width(), after.height()))
    if before is None:
        return full
    width = min(before.width(), after.width())
    height = min(before.height(), after.height())
    if width <= 0 or height <= 0:
        return full
    a, b = _pixels(before)[:height, :width], _pixels(after)[:height, :width]
    bw, bh = (block, block) if isinstance(block, int) else block
    rows, cols = -(-height // bh), -(-width // bw)
    pad = ((0, rows * bh - height), (0, cols * bw - width))
    diff = np.pad(a != b, pad).reshape(rows, bh, cols, bw).any(axis=(1, 3))
    region = full.subtracted(QRegion(QRect(0, 0, width, height)))
    for r in np.flatnonzero(diff.any(axis=1)):
        # the runs of changed blocks in this row: where the row flips on and off
        flips = np.flatnonzero(np.diff(np.concatenate(([False], diff[r], [False]))))
        starts, ends = flips[::2], flips[1::2]
        # runs at most ``gap`` blocks apart become one
        keep = np.concatenate(([True], starts[1:] - ends[:-1] > gap))
        starts, ends = starts[keep], np.concatenate((ends[:-1][keep[1:]], ends[-1:]))
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            region += QRect(start * bw, r * bh, (end - start) * bw, bh)
    return region.intersected(full)


def _grab(widget: QWidget) -> QImage:
    global _off_screen
    _off_screen += 1
    try:
        return widget.grab().toImage()
    finally:
        _off_screen -= 1


@contextmanager
def quiet_change(widget: QWidget) -> Iterator[None]:
    """Inside: ``widget`` and the widgets in it ignore update requests (and moves and
    resizes among them draw nothing). After: the blocks of ``widget`` that look
    different are repainted (if ``widget`` itself changed size, all beyond the part
    both sizes share)."""
    if not widget.isVisible() or not widget.updatesEnabled():
        yield
        return
    before = _grab(widget)
    disabled = Qt.WidgetAttribute.WA_UpdatesDisabled
    # widgets that had updates off before stay so; every other one (those made inside
    # too: a child inherits its parent's switch) has them on again afterwards
    kept = {w for w in widget.findChildren(QWidget) if w.testAttribute(disabled)}
    for w in (widget, *widget.findChildren(QWidget)):
        w.setAttribute(disabled, True)
    try:
        yield
    finally:
        # a widget made inside is polished when the loop gets to it, and polishing
        # repaints it; layouts asked for inside move widgets when the loop gets to them:
        # deliver what the change posted to these widgets now, while updates are dropped
        for w in widget.findChildren(QWidget):
            if not w.isHidden():
                w.ensurePolished()
        for w in (widget, *widget.findChildren(QWidget)):
            for kind in _POSTED:
                QApplication.sendPostedEvents(w, kind)
        for w in (widget, *widget.findChildren(QWidget)):
            if w not in kept:
                w.setAttribute(disabled, False)
    # the first drawing lays out what was only laid out when painted (a label's text),
    # and a widget laid out while it paints asks to be painted again: drop those asks
    # (they would repaint it all once more) and compare the second drawing
    _grab(widget)
    for w in (widget, *widget.findChildren(QWidget)):
        QApplication.removePostedEvents(w, QEvent.Type.UpdateLater.value)
    region = changed_region(before, _grab(widget), TEXT_BLOCK, TEXT_GAP)
    if not region.isEmpty():
        _update(widget, region)


def _update(widget: QWidget, region: QRegion) -> None:
    """Repaint ``region`` of ``widget`` and of each widget in it: Qt repaints a child
    whose background is opaque (a scroll area's viewport) only when asked itself."""
    widget.update(region)
    opaque = Qt.WidgetAttribute.WA_OpaquePaintEvent
    for child in widget.findChildren(QWidget):
        if child.isVisible() and (child.autoFillBackground() or child.testAttribute(opaque)):
            at = child.mapTo(widget, QPoint(0, 0))
            part = region.translated(-at.x(), -at.y()).intersected(child.rect())
            if not part.isEmpty():
                child.update(part)


def settle_layouts(root: QWidget, rounds: int = 6) -> None:
    """Lay out ``root`` and the widgets in it now, not at the event loop's next turn (so
    the moves a change causes happen inside a ``quiet_change``). A scroll area that holds
    ``root`` sizes it now too. Laying out can change size hints (a wrapped label given
    another width wants another height), which asks for another layout: this goes on
    until the widgets stop moving (at most ``rounds`` times)."""
    last = None
    for _ in range(rounds):
        _settle_once(root)
        now = _geometries(root)
        if now == last:
            return
        last = now


def _geometries(root: QWidget) -> list:
    return [(w.geometry().getRect(), w.isHidden()) for w in (root, *root.findChildren(QWidget))]


def _settle_once(root: QWidget) -> None:
    # a new widget's style (its fonts, its margins) sets its size hint: polish it first
    for widget in root.findChildren(QWidget):
        if not widget.isHidden():
            widget.ensurePolished()
    _activate(root)
    # size hints that changed (a combo box's, a wrapped label's) post layout requests:
    # handle them now rather than at the loop's next turn
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
    _activate(root)
    # a scroll area sizes the widget it holds on a layout request that reaches it
    # through its viewport (root's parent)
    parent = root.parentWidget()
    if parent is not None and parent.layout() is None:
        QApplication.sendEvent(parent, QEvent(QEvent.Type.LayoutRequest))
        _activate(root)


def _activate(root: QWidget) -> None:
    for widget in (root, *root.findChildren(QWidget)):
        layout = widget.layout()
        if layout is not None:
            layout.activate()


def view_image(view: QGraphicsView) -> QImage:
    """The viewport's picture as ``view``'s scene is now."""
    viewport = view.viewport()
    # a pyqtgraph scene moves its axes and ranges when it is about to be painted,
    # which rendering into an image does not announce: as the screen will show it
    prepare = getattr(view.scene(), "prepareForPaint", None)
    if prepare is not None:
        prepare()
    image = QImage(viewport.size(), QImage.Format.Format_RGB32)
    image.fill(view.backgroundBrush().color())
    painter = QPainter(image)
    painter.setRenderHints(view.renderHints())
    view.render(painter, image.rect().toRectF(), viewport.rect())
    painter.end()
    return image


def _row_keys(pixels: np.ndarray) -> np.ndarray:
    """One number per row, equal for equal rows (and, but for chance, only for them)."""
    weights = np.random.default_rng(0).integers(1, 2**31, pixels.shape[1], dtype=np.uint64)
    return pixels.astype(np.uint64) @ weights


def best_shift(before: np.ndarray, after: np.ndarray) -> tuple[int, int]:
    """(top, dy): the rows of ``after`` from ``top`` down are mostly those of ``before``
    moved down by ``dy`` (up where negative); (0, 0) where no move explains them. Rows
    of one colour alone (empty background) do not count as evidence."""
    height = min(before.shape[0], after.shape[0])
    if before.shape[1] != after.shape[1] or height == 0:
        return 0, 0
    a, b = _row_keys(before[:height]), _row_keys(after[:height])
    differ = np.flatnonzero(a != b)
    if differ.size == 0:
        return 0, 0
    top = int(differ[0])
    plain_a = (before[:height] == before[:height, :1]).all(axis=1)
    plain_b = (after[:height] == after[:height, :1]).all(axis=1)
    where: dict[int, list[int]] = {}
    for y in range(top, height):
        if not plain_a[y]:
            where.setdefault(int(a[y]), []).append(y)
    votes: dict[int, int] = {}
    for y in range(top, height):
        if plain_b[y]:
            continue
        for p in where.get(int(b[y]), ())[:4]:
            if p != y:
                votes[y - p] = votes.get(y - p, 0) + 1
    if not votes:
        return top, 0
    dy, count = max(votes.items(), key=lambda kv: kv[1])
    # a move that explains a few rows only is no move
    return (top, dy) if count >= max(8, (height - top) // 8) else (top, 0)


@contextmanager
def shifted_change(
    view: QGraphicsView, moved_by: Callable[[], tuple[int, int] | None] | None = None
) -> Iterator[None]:
    """Inside: ``view`` repaints nothing for the changes to its scene and position.
    After: where the rows below some line moved as one (by ``moved_by()``, the caller's
    guess in viewport pixels, or by what the rows show), that part of the viewport is
    scrolled (copied where it is, on the X server) and the blocks that still look
    different are repainted; else just the blocks that differ are. The view's scroll
    bars, whose ranges such a change moves, repaint only where they look different."""
    with ExitStack() as bars:
        for bar in (view.horizontalScrollBar(), view.verticalScrollBar()):
            bars.enter_context(quiet_change(bar))
        bars.enter_context(_bars_laid_out_after(view))
        with _shifted_viewport(view, moved_by):
            yield


# the scroll area's slot that lays out its scroll bars when their range changes (Qt
# connects it queued: it runs after the change, and repaints both bars whole)
_LAY_OUT_BARS = "_q_showOrHideScrollBars()"


@contextmanager
def _bars_laid_out_after(view: QGraphicsView) -> Iterator[None]:
    """Inside: a scroll bar's new range does not make ``view`` lay out its scroll bars
    (that repaints both whole, whatever repaints are turned off). After: only a bar
    that must show or hide now has it done."""
    bars = (view.horizontalScrollBar(), view.verticalScrollBar())
    held = [
        bar
        for bar in bars
        if QObject.disconnect(bar, SIGNAL("rangeChanged(int,int)"), view, SLOT(_LAY_OUT_BARS))
    ]
    try:
        yield
    finally:
        for bar in held:
            # queued, as the scroll area connects it: laying the bars out at once, inside
            # the change of range, would resize the viewport while it is being scaled
            QObject.connect(
                bar,
                SIGNAL("rangeChanged(int,int)"),
                view,
                SLOT(_LAY_OUT_BARS),
                Qt.ConnectionType.QueuedConnection,
            )
    policies = (view.horizontalScrollBarPolicy(), view.verticalScrollBarPolicy())
    for bar, policy in zip(bars, policies, strict=True):
        if bar in held and policy == Qt.ScrollBarPolicy.ScrollBarAsNeeded:
            if (bar.maximum() > bar.minimum()) != bar.isVisible():
                bar.rangeChanged.emit(bar.minimum(), bar.maximum())
                return


@contextmanager
def _shifted_viewport(
    view: QGraphicsView, moved_by: Callable[[], tuple[int, int] | None] | None
) -> Iterator[None]:
    viewport = view.viewport()
    if not viewport.isVisible() or not viewport.updatesEnabled():
        yield
        return
    before = view_image(view)
    # widgets on the viewport (a button in its corner) are not in the scene's picture:
    # where they were and are is drawn again
    children = [w for w in viewport.findChildren(QWidget) if w.parentWidget() is viewport]
    was = QRegion()
    for child in children:
        if child.isVisible():
            was += child.geometry()
    mode = view.viewportUpdateMode()
    view.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.NoViewportUpdate)
    # a new transform (zooming) asks for all of the viewport whatever the mode
    disabled = Qt.WidgetAttribute.WA_UpdatesDisabled
    viewport.setAttribute(disabled, True)
    try:
        yield
    finally:
        # the scene tells its views what changed at the loop's next turn: deliver that
        # now, while the view ignores it
        scene = view.scene()
        if scene is not None:
            QApplication.sendPostedEvents(scene, QEvent.Type.MetaCall.value)
        viewport.setAttribute(disabled, False)
        view.setViewportUpdateMode(mode)
    after = view_image(view)
    old, new = _pixels(before), _pixels(after)
    if old.shape != new.shape:
        viewport.update()
        return
    top, dy = best_shift(old, new)
    candidates = {(0, dy)} if dy else set()
    guess = moved_by() if moved_by is not None else None
    if guess is not None and guess != (0, 0):
        candidates.add((int(guess[0]), int(guess[1])))
    best = changed_region(before, after)
    best_area, best_move = _area(best), None
    height, width = new.shape
    left, right = _uncovered_columns(view, QRect(0, top, width, height - top))
    for dx, dy in candidates:
        if abs(dx) >= right - left or abs(dy) >= height - top:
            continue
        moved = _moved(old, new, top, dx, dy, left, right)
        region = changed_region(_image(moved), after)
        if _area(region) < best_area:
            best, best_area, best_move = region, _area(region), (dx, dy)
    if best_move is not None:
        area = QRect(left, top, right - left, height - top)
        viewport.scroll(best_move[0], best_move[1], area)
        # the scene's picture leaves out widgets on the viewport (a button in its
        # corner): where the scroll carried their pixels, they are drawn again
        best += was.translated(best_move[0], best_move[1]).intersected(area)
    best += was
    for child in children:
        if isValid(child) and child.isVisible():
            best += child.geometry()
    if not best.isEmpty():
        viewport.update(best)


def _uncovered_columns(view: QGraphicsView, area: QRect) -> tuple[int, int]:
    """The widest run of columns of ``area`` (viewport coordinates) that no other widget
    of ``view`` lies over (a button over the viewport's corner): Qt copies a scrolled
    part on the X server only where nothing covers it, else repaints all of it."""
    viewport = view.viewport()
    left, right = area.left(), area.right() + 1
    for child in view.findChildren(QWidget):
        if child is viewport or not child.isVisible() or child.parentWidget() is not view:
            continue
        at = viewport.mapFrom(view, child.geometry().topLeft())
        covered = QRect(at, child.size()).intersected(
            QRect(left, area.top(), right - left, area.height())
        )
        if covered.isEmpty():
            continue
        # keep the wider side of what it covers
        if covered.left() - left >= right - (covered.right() + 1):
            right = covered.left()
        else:
            left = covered.right() + 1
    return left, max(left, right)


def _moved(
    old: np.ndarray, new: np.ndarray, top: int, dx: int, dy: int, left: int = 0, right=None
) -> np.ndarray:
    """``old`` with its rows from ``top`` down, columns ``left`` to ``right``, moved by
    (dx, dy) within them, as a scroll leaves the screen; what the move uncovers holds
    pixels unlike ``new`` there."""
    height, width = old.shape
    right = width if right is None else right
    moved = old.copy()
    moved[top:, left:right] = ~new[top:, left:right]
    y0, y1 = max(top, top + dy), min(height, height + dy)
    x0, x1 = max(left, left + dx), min(right, right + dx)
    if y0 < y1 and x0 < x1:
        moved[y0:y1, x0:x1] = old[y0 - dy : y1 - dy, x0 - dx : x1 - dx]
    return moved


def _image(pixels: np.ndarray) -> QImage:
    height, width = pixels.shape
    data = np.ascontiguousarray(pixels, dtype=np.uint32)
    image = QImage(data.data, width, height, width * 4, QImage.Format.Format_RGB32)
    return image.copy()  # owns its pixels: ``data`` may go


def _area(region: QRegion) -> int:
    return sum(r.width() * r.height() for r in region)


class DiffedView(QObject):
    """Makes ``view`` repaint only the viewport blocks a scene change altered.

    The view stops updating its viewport on scene changes itself; after each batch of
    changes this draws the scene as the viewport shows it, compares it with the last
    drawing and repaints the blocks that differ. Resizing, scrolling and exposing still
    repaint as Qt does.
    """

    def __init__(self, view: QGraphicsView) -> None:
        super().__init__(view)
        self.view = view
        self._last: QImage | None = None
        self._pending = False
        view.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.NoViewportUpdate)
        self._viewport = view.viewport()
        view.scene().changed.connect(self._schedule)
        self._viewport.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if watched is self._viewport and event.type() in (
            QEvent.Type.Resize,
            QEvent.Type.Show,
        ):
            # Qt repaints all of it; with no reference, the next scene change repaints all
            # of it again (a scene may change while it is painted, as pyqtgraph's do)
            self._last = None
        return False

    def _schedule(self, *_args) -> None:
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self._flush)

    def draw(self) -> QImage:
        """The viewport's picture as the scene is now."""
        return view_image(self.view)

    def sync(self) -> None:
        """Take the viewport as it is now as the reference (it was repainted some other
        way, for example by a ``quiet_change`` around its parent)."""
        viewport = self.view.viewport()
        self._last = self.draw() if viewport.isVisible() else None

    def _flush(self) -> None:
        self._pending = False
        if not isValid(self.view):
            return
        viewport = self.view.viewport()
        if not viewport.isVisible() or viewport.width() <= 0 or viewport.height() <= 0:
            self._last = None
            return
        image = self.draw()
        region = changed_region(self._last, image)
        if not region.isEmpty():
            viewport.update(region)
        self._last = image
