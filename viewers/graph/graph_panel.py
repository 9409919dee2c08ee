"""The graph view's frame: breadcrumb, back button and find box; and export to PNG or SVG."""

from __future__ import annotations

import contextlib
import html
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QAction, QImage, QKeySequence, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QVBoxLayout, QWidget

from shardscope.viewers.graph.find_list import Finder
from shardscope.viewers.graph.view import GraphView

if TYPE_CHECKING:
    from shardscope.backend.session.document import Session


class GraphPanel(QWidget):
    """The graph view with a breadcrumb (back, frames) and a find box above it."""

    def __init__(self, session: Session, parent: QWidget | None = None, **view: Any) -> None:
        """``view``: the graph view's options (``restore``, ``navigation``: see
        ``GraphView``)."""
        super().__init__(parent)
        self.view = GraphView(session, self, **view)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 4)
        self.back_button = QToolButton(self)
        self.back_button.setText("◂ Back")
        self.back_button.setToolTip("Leave the region or function (Alt+Left)")
        self.back_button.clicked.connect(lambda: self.view.back())
        self.crumbs = QLabel(self)
        self.crumbs.setTextFormat(Qt.TextFormat.RichText)
        self.crumbs.linkActivated.connect(self._on_crumb)
        self.find_box = QLineEdit(self)
        self.find_box.setPlaceholderText("Find op, scope, tensor, axis:NAME… (Ctrl+F)")
        self.find_box.setToolTip(
            "Matches are listed as you type; Enter shows the next one.\n"
            "axis:model — tensors sharded on model\n"
            "collective:all-gather — ops with an all-gather\n"
            "conflict — ops where propagation settled a conflict"
        )
        self.find_box.setClearButtonEnabled(True)
        self.find_box.setMaximumWidth(340)
        self.find_status = QLabel(self)
        self.finder = Finder(self.find_box, self.find_status, self.view, self)
        bar.addWidget(self.back_button)
        bar.addWidget(self.crumbs, 1)
        bar.addWidget(self.find_status)
        bar.addWidget(self.find_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)
        self.view.frameChanged.connect(self._update_crumbs)
        # through the view: the connection goes with it
        self.view.programShown.connect(self._on_program)
        back = QAction("Back", self)
        back.setShortcut(QKeySequence("Alt+Left"))
        back.triggered.connect(lambda: self.view.back())
        self.addAction(back)
        self._update_crumbs()

    def _on_program(self) -> None:
        self.find_box.clear()
        self.find_status.setText("")
        self._update_crumbs()

    def _on_crumb(self, link: str) -> None:
        target = int(link)
        self.view.back(len(self.view.frames) - 1 - target)

    def _update_crumbs(self, *_args) -> None:
        graph = self.view.session.graph
        frames = self.view.frames
        self.back_button.setEnabled(len(frames) > 1)
        if graph is None or not frames:
            self.crumbs.setText("")
            return
        parts = []
        for i, frame in enumerate(frames):
            title = html.escape(frame.title(graph), quote=False)
            parts.append(title if i == len(frames) - 1 else f'<a href="{i}">{title}</a>')
        self.crumbs.setText(" ▸ ".join(parts))


MAX_EXPORT_PIXELS = 8000


def _draw_image(view: GraphView, size: QSize, target: QRectF, rect, background: bool) -> QImage:
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(view.style_.theme.background if background else Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    view.scene().render(painter, target, rect)
    painter.end()
    return image


@contextlib.contextmanager
def drawn_plain(scene) -> Iterator[None]:
    """While the block runs, ``scene`` has no selection outline and no cached items: cached
    items would be pasted as bitmaps, so they are drawn afresh (vector in SVG, sharp at any
    scale in PNG). Both are put back afterwards."""
    selected = scene.selectedItems()
    scene.clearSelection()
    cached = [item for item in scene.items() if item.cacheMode() != item.CacheMode.NoCache]
    modes = [item.cacheMode() for item in cached]
    for item in cached:
        item.setCacheMode(item.CacheMode.NoCache)
    try:
        yield
    finally:
        for item, mode in zip(cached, modes, strict=True):
            item.setCacheMode(mode)
        for item in selected:
            item.setSelected(True)


def export_view(view: GraphView, path, *, scale: float = 1.0, background: bool = True) -> None:
    """Write the whole current frame of ``view`` as PNG (or any raster Qt writes) or SVG."""
    path = Path(path)
    scene = view.scene()
    rect = scene.sceneRect()
    if rect.isEmpty():
        raise ValueError("the view is empty: open a program first")
    scale = min(scale, MAX_EXPORT_PIXELS / max(rect.width(), rect.height()))
    size = QSize(max(1, int(rect.width() * scale)), max(1, int(rect.height() * scale)))
    target = QRectF(0, 0, size.width(), size.height())
    with drawn_plain(scene):
        if path.suffix.lower() == ".svg":
            gen = QSvgGenerator()
            gen.setFileName(str(path))
            gen.setSize(size)
            gen.setViewBox(target)
            gen.setTitle("shardscope program graph")
            painter = QPainter(gen)
            if background:
                painter.fillRect(target, view.style_.theme.background)
            scene.render(painter, target, rect)
            painter.end()
            return
        image = _draw_image(view, size, target, rect, background)
        if not image.save(str(path)):
            raise OSError(f"Qt could not write {path.name}: use a .png, .jpg or .svg name")
