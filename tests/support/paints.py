"""What a window repaints: paint events that reach the screen, and what the screen shows."""

import time

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QTimer
from PySide6.QtGui import QImage, QRegion
from PySide6.QtWidgets import QApplication, QProgressBar, QWidget

from shardscope.viewers.common.damage import drawing_off_screen


class PaintWatch(QObject):
    """Records when a widget it filters last handled a paint event, and how many it had."""

    def __init__(self) -> None:
        super().__init__()
        self.last = 0.0
        self.count = 0

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            self.count += 1
            self.last = time.perf_counter()
        return False


class PaintLog(QObject):
    """Records the regions repainted on screen inside ``roots`` (widgets and the widgets
    in them), in window coordinates; paints into off-screen pictures are left out, and so
    are the frames of a busy bar's own animation (``busy_region``), which no change of
    the user's causes and which go on for as long as a background task runs.

    Use as a context manager (it stops listening on exit)."""

    def __init__(self, *roots: QWidget) -> None:
        super().__init__()
        self.roots = roots
        self.events: list[tuple[QWidget, QRegion]] = []

    def __enter__(self) -> "PaintLog":
        QApplication.instance().installEventFilter(self)
        return self

    def __exit__(self, *exc) -> None:
        QApplication.instance().removeEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(obj, QWidget)
            and not drawing_off_screen()
            and any(obj is r or r.isAncestorOf(obj) for r in self.roots)
        ):
            offset = obj.mapTo(obj.window(), QPoint(0, 0))
            region = event.region().translated(offset)
            if not region.subtracted(busy_region(obj.window())).isEmpty():
                self.events.append((obj, region))
        return False

    def clear(self) -> None:
        self.events.clear()

    def region(self, within: QWidget | None = None) -> QRegion:
        """The union of what was repainted (inside ``within`` only, if given)."""
        out = QRegion()
        for widget, region in self.events:
            if within is None or widget is within or within.isAncestorOf(widget):
                out += region
        return out

    def area(self, within: QWidget | None = None) -> int:
        return region_area(self.region(within))


def busy_region(window: QWidget) -> QRegion:
    """Where ``window`` shows a moving busy bar (a shown ``QProgressBar`` with no end
    known), in window coordinates."""
    out = QRegion()
    for bar in window.findChildren(QProgressBar):
        if bar.isVisible() and bar.minimum() == bar.maximum():
            out += QRegion(QRect(bar.mapTo(window, QPoint(0, 0)), bar.size()))
    return out


def region_area(region: QRegion) -> int:
    return sum(r.width() * r.height() for r in region)


def _shown_rect(widget: QWidget):
    """The part of ``widget`` not clipped away (a scroll area shows only some of it)."""
    return widget.visibleRegion().boundingRect()


def on_screen(widget: QWidget) -> QImage:
    """What the screen shows of ``widget``'s shown part (the window's backing store)."""
    window = widget.window()
    rect = _shown_rect(widget)
    at = widget.mapTo(window, rect.topLeft())
    shot = widget.screen().grabWindow(window.winId(), at.x(), at.y(), rect.width(), rect.height())
    return shot.toImage().convertToFormat(QImage.Format.Format_RGB32)


def fresh(widget: QWidget) -> QImage:
    """``widget``'s shown part drawn now from scratch."""
    image = widget.grab(_shown_rect(widget)).toImage()
    return image.convertToFormat(QImage.Format.Format_RGB32)


# Turns of the event loop a quiet spell must span: a starved process may sleep through
# the whole spell and only then deliver what was posted before it.
_TURNS = 5


def wait_painted(qtbot, *widgets: QWidget, quiet_ms: int = 150, timeout_ms: int = 120_000) -> None:
    """Wait until ``widgets`` have not been repainted (``PaintLog``: a busy bar's own
    animation aside) for ``quiet_ms`` and ``_TURNS`` turns of the event loop, so that what
    showing or changing them set off, timers and posted layouts included, is done;
    ``timeout_ms`` is far above any real need, for a machine under load."""
    turns = [0]
    ticker = QTimer()
    ticker.setInterval(0)
    ticker.timeout.connect(lambda: turns.__setitem__(0, turns[0] + 1))
    ticker.start()
    deadline = time.monotonic() + timeout_ms / 1000
    try:
        with PaintLog(*widgets) as log:
            while time.monotonic() < deadline:
                log.clear()
                turns[0] = 0
                qtbot.wait(quiet_ms)
                while turns[0] < _TURNS and time.monotonic() < deadline:
                    qtbot.wait(10)
                if not log.events:
                    return
            names = sorted({type(w).__name__ for w, _ in log.events})
    finally:
        ticker.stop()
    raise AssertionError(
        f"the widgets kept repainting for {timeout_ms / 1000:g} s: {', '.join(names)}"
    )
