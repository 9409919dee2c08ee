"""Pictures of a big graph split into readable pages.

One picture of a whole graph must fit ``MAX_EXPORT_PIXELS`` on a side, so a big program
used to be shrunk until its labels were a few pixels high. ``plan_pages`` keeps the scale
asked for and cuts the drawing instead: into ``ceil(side x scale / PAGE_PIXELS)`` parts
along each side, so no page is larger than ``PAGE_PIXELS`` on a side. Cuts along the long
side are moved back to the nearest gap between rows of boxes (within the second half of
the page), so no box or badge is cut in two; edges cross from page to page. Each page gets
a title strip naming the scopes it shows and "page i of n".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QFont, QFontInfo, QImage, QPainter

from shardscope.viewers.graph.graph_panel import MAX_EXPORT_PIXELS, drawn_plain, export_view

if TYPE_CHECKING:
    from shardscope.viewers.graph.view import GraphView

PAGE_PIXELS = MAX_EXPORT_PIXELS
# The smallest label on a page, in pixels, below which a picture is not readable.
MIN_LABEL_PIXELS = 9
TITLE_PIXELS = 32
# The most pages, and megapixels in all, one picture of the graph may take: each page of
# PAGE_PIXELS on a side takes seconds to draw and tens of megabytes to write.
MAX_PAGES = 50
MAX_MEGAPIXELS = 500


@dataclass(frozen=True)
class Page:
    """A part of the scene (scene units) and the title drawn above it."""

    source: QRectF
    title: str


def label_pixels(view: GraphView, scale: float) -> float:
    """Height in pixels of the graph's smallest label font drawn at ``scale``."""
    return QFontInfo(view.style_.small).pixelSize() * scale


def _occupied(view: GraphView, vertical: bool) -> list[tuple[float, float]]:
    """Merged spans along the long axis covered by boxes and badges."""
    spans = []
    for item in [*view.nodes, *view.badges]:
        rect = item.sceneBoundingRect()
        spans.append((rect.top(), rect.bottom()) if vertical else (rect.left(), rect.right()))
    spans.sort()
    merged: list[list[float]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [(lo, hi) for lo, hi in merged]


def _cuts(start: float, end: float, most: float, spans: list[tuple[float, float]]) -> list[float]:
    """Where to cut [start, end] into parts of at most ``most``: at a gap between spans
    in the second half of a part when there is one."""
    cuts = [start]
    while end - cuts[-1] > most:
        at = cuts[-1]
        limit = at + most
        best = limit
        for lo, hi in spans:
            if lo < limit < hi:
                # the limit falls in a box: cut just before it if that keeps half a page
                best = lo - 1 if lo - 1 > at + most / 2 else limit
                break
        cuts.append(best)
    cuts.append(end)
    return cuts


def _covers(view: GraphView, rect: QRectF) -> str:
    """The top-level scopes (or boxes) with their centre in ``rect``, first to last."""
    names: list[str] = []
    # within one scope, name the scopes one level under it
    depth = len(view.within.split("/")) if view.within else 0
    vertical = rect.height() >= rect.width()
    shown = sorted(
        (i for i in view.nodes if rect.contains(i.pos())),
        key=lambda i: (i.pos().y(), i.pos().x()) if vertical else (i.pos().x(), i.pos().y()),
    )
    # scopes name a page best; without any, the tensors in it (then its ops)
    boxes = (
        [i for i in shown if i.node.scope]
        or [i for i in shown if i.node.kind in ("input", "output")]
        or shown
    )
    for item in boxes:
        node = item.node
        parts = node.scope.split("/") if node.scope else []
        name = "/".join(parts[: depth + 1]) if parts else node.label
        if name and (not names or names[-1] != name):
            names.append(name)
    if not names:
        return "edges only"
    return names[0] if len(names) == 1 else f"{names[0]} to {names[-1]}"


def plan_pages(view: GraphView, scale: float, title: str) -> list[Page]:
    """The pages of ``view``'s drawing at ``scale`` (one when it fits; see the module
    docstring), each titled ``title``, what it covers, and its number."""
    rect = view.scene().sceneRect()
    if rect.isEmpty():
        raise ValueError("the view is empty: open a program first")
    most = PAGE_PIXELS / scale
    vertical = rect.height() >= rect.width()
    if max(rect.width(), rect.height()) <= most:
        return [Page(QRectF(rect), title)]
    spans = _occupied(view, vertical)
    if vertical:
        long_cuts = _cuts(rect.top(), rect.bottom(), most, spans)
        parts = math.ceil(rect.width() / most)
        side = [rect.left() + rect.width() * k / parts for k in range(parts + 1)]
    else:
        long_cuts = _cuts(rect.left(), rect.right(), most, spans)
        parts = math.ceil(rect.height() / most)
        side = [rect.top() + rect.height() * k / parts for k in range(parts + 1)]
    rects = []
    for a, b in zip(long_cuts, long_cuts[1:], strict=False):
        for c, d in zip(side, side[1:], strict=False):
            rects.append(QRectF(c, a, d - c, b - a) if vertical else QRectF(a, c, b - a, d - c))
    n = len(rects)
    return [
        Page(r, f"{title} — {_covers(view, r)} — page {i} of {n}")
        for i, r in enumerate(rects, start=1)
    ]


def page_image(view: GraphView, page: Page, scale: float) -> QImage:
    """``page`` of ``view`` drawn at ``scale`` under its title strip."""
    source = page.source
    width = max(1, int(source.width() * scale))
    height = max(1, int(source.height() * scale))
    theme = view.style_.theme
    image = QImage(QSize(width, height + TITLE_PIXELS), QImage.Format.Format_ARGB32)
    image.fill(theme.background)
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    font = QFont(view.style_.font)
    font.setPixelSize(TITLE_PIXELS // 2)
    painter.setFont(font)
    painter.setPen(theme.foreground)
    painter.drawText(
        QRectF(10, 0, width - 20, TITLE_PIXELS),
        Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
        page.title,
    )
    with drawn_plain(view.scene()):
        view.scene().render(painter, QRectF(0, TITLE_PIXELS, width, height), source)
    painter.end()
    return image


def fitting_scale(width: float, height: float, scale: float, pages: int | None = None):
    """``None`` when a drawing of ``width`` x ``height`` scene units at ``scale`` (split
    into ``pages``, when given) takes at most ``MAX_MEGAPIXELS`` and ``MAX_PAGES``; else a
    round scale a little under the largest that does."""
    area = max(width, 1.0) * max(height, 1.0)
    megapixels = area * scale**2 / 1e6
    if megapixels <= MAX_MEGAPIXELS and (pages is None or pages <= MAX_PAGES):
        return None
    fits = (MAX_MEGAPIXELS * 1e6 / area) ** 0.5
    if pages is not None and megapixels <= MAX_MEGAPIXELS:
        fits = scale * MAX_PAGES / pages
    return float(f"{fits * 0.95:.2g}")


def paged_names(out: Path, count: int) -> list[Path]:
    """The files of a picture of ``count`` pages named ``out``: ``NAME-1.png`` and on."""
    return [out.with_name(f"{out.stem}-{i}{out.suffix}") for i in range(1, count + 1)]


def save_page(view: GraphView, page: Page, scale: float, path: Path) -> None:
    """Write ``page_image`` to ``path``; an ``OSError`` when Qt cannot."""
    if not page_image(view, page, scale).save(str(path)):
        raise OSError(f"Qt could not write {Path(path).name}")


def write_picture(view: GraphView, pages: list[Page], scale: float, out: Path, write) -> list[Path]:
    """Write ``view``'s drawing at ``scale`` to ``out`` (an SVG, or a picture of one page)
    or to its numbered pages beside it (``paged_names``); each file through
    ``write(path, draw)``, where ``draw(scratch)`` draws it. The files written."""
    if len(pages) == 1 or out.suffix.lower() == ".svg":
        write(out, lambda path: export_view(view, path, scale=scale))
        return [out]
    files = paged_names(out, len(pages))
    for file, page in zip(files, pages, strict=True):
        write(file, lambda path, page=page: save_page(view, page, scale, path))
    return files
