"""Eliding long names in the middle, so both ends stay readable.

A key path such as ``params['layers'][10]['w_out']`` loses whole keys from its middle
first (``params…[10]['w_out']``): its root and its most specific keys stay as long as
they fit. The last two keys (a layer's index and its leaf, which tell rows apart) then
keep their place while the root gives up letters (``par…[10]['w_out']``); after that the
root and the last key (``params…['w_out']``). Other text, and a key path too narrow for
those, is elided in the middle by Qt (``Qt.ElideMiddle``).
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QFontMetricsF
from PySide6.QtWidgets import QStyle, QStyledItemDelegate

ELLIPSIS = "\u2026"
# a key path's parts after its root: ['key'], [3], .attr
_PART = re.compile(r"\[[^\[\]]*\]|\.[A-Za-z_]\w*")


def key_path_parts(text: str) -> tuple[str, list[str]] | None:
    """``(root, parts)`` of a key path (``params``, ``["['layers']", '[10]', ...]``), or None
    for text that is not one."""
    match = re.match(r"[A-Za-z_]\w*", text)
    if match is None:
        return None
    root, rest = match.group(0), text[match.end() :]
    parts = _PART.findall(rest)
    if not parts or "".join(parts) != rest:
        return None
    return root, parts


def elide_middle(text: str, metrics: QFontMetrics | QFontMetricsF, width: float) -> str:
    """``text`` as it fits in ``width`` pixels of ``metrics``' font, elided in the middle."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    path = key_path_parts(text)
    if path is not None:
        root, parts = path
        for keep in range(len(parts) - 1, 1, -1):
            shown = root + ELLIPSIS + "".join(parts[-keep:])
            if metrics.horizontalAdvance(shown) <= width:
                return shown
        if len(parts) >= 2:
            # the last two keys (a layer's index and its leaf) tell rows apart: the root
            # gives up letters before they go
            tail = ELLIPSIS + "".join(parts[-2:])
            for n in range(len(root) - 1, 0, -1):
                if metrics.horizontalAdvance(root[:n] + tail) <= width:
                    return root[:n] + tail
        shown = root + ELLIPSIS + parts[-1]
        if metrics.horizontalAdvance(shown) <= width:
            return shown
    return metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, int(width))


class MiddleElideDelegate(QStyledItemDelegate):
    """Draws an item view's text with ``elide_middle``."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        if not option.text:
            return
        style = option.widget.style() if option.widget is not None else None
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1 if style else 3
        width = option.rect.width() - 2 * margin
        if option.features & option.ViewItemFeature.HasDecoration:
            width -= option.decorationSize.width() + 2 * margin
        option.text = elide_middle(option.text, option.fontMetrics, max(0, width))
