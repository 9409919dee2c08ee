"""Colours shared by every view: one per mesh axis, one per device, and two themes.

Axis colours come from the Okabe-Ito palette, which stays distinguishable under the
common forms of colour blindness; an axis keeps its colour by its NAME (``AxisPalette``),
so ``model`` looks the same in the mesh editor, the spec palette, the graph's badges, the
tile grid, the timeline, renders and the legend, before and after a preset reorders or
adds axes.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

REPLICATED = "replicated"

# Okabe-Ito without black, ordered so that the first axes get the most distinct hues.
AXIS_PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
)
REPLICATED_COLOR = "#8C8C8C"
UNKNOWN_AXIS_COLOR = "#5A5A5A"


# The slot the usual axis names take when first seen, if no other name holds it: the
# same mesh then gets the same colours in every process (a render from the command line
# as in the window that saved the session), whatever order the window met its axes in.
PREFERRED_SLOTS = {"data": 0, "model": 1, "fsdp": 2, "pipe": 3}


class AxisPalette:
    """Which palette slot each mesh axis NAME has, for the life of the process.

    An axis keeps its colour by its name: reordering the mesh, a preset that adds or
    drops axes, or another program with the same axis names leave ``model`` the colour it
    had. A name seen for the first time takes its ``PREFERRED_SLOTS`` slot if no name
    holds it, else the first slot no axis of its mesh holds, preferring a slot no name
    has taken yet, so the axes of a first mesh get the palette's first colours in mesh
    order. Only when two names of one mesh hold the same
    slot (they met in no mesh before) does the one named later move to a free slot."""

    def __init__(self) -> None:
        self.slots: dict[str, int] = {}
        self._resolved: dict[tuple[str, ...], dict[str, int]] = {}

    def slots_for(self, names: tuple[str, ...], *, remember: bool = True) -> dict[str, int]:
        """Each of ``names``'s slot (``remember=False``: what a new name would get, without
        giving it the slot)."""
        found = self._resolved.get(names)
        if found is not None:
            return found
        slots = self.slots if remember else dict(self.slots)
        unique = list(dict.fromkeys(names))
        order = list(slots)
        out: dict[str, int] = {}
        moved = False
        # names seen before keep their slot, the earliest seen first where two collide
        for name in sorted((n for n in unique if n in slots), key=order.index):
            if slots[name] in out.values():
                slots[name] = self._free(set(out.values()), set(slots.values()), len(unique))
                moved = True
            out[name] = slots[name]
        # new names: the usual mesh axes first, to their own slot where it is free
        fresh = [n for n in unique if n not in out]
        for name in sorted(fresh, key=lambda n: n not in PREFERRED_SLOTS):
            slot = PREFERRED_SLOTS.get(name)
            if slot is None or slot in out.values() or slot in slots.values():
                slot = self._free(set(out.values()), set(slots.values()), len(unique))
            slots[name] = out[name] = slot
        if remember:
            if moved:
                self._resolved.clear()  # meshes resolved before may hold the moved name
            self._resolved[names] = out
        return out

    @staticmethod
    def _free(in_mesh: set[int], used: set[int], count: int) -> int:
        """The first slot free in this mesh, preferring one no name holds."""
        for slot in range(max(count, len(AXIS_PALETTE))):
            if slot not in in_mesh and slot not in used:
                return slot
        slot = 0
        while slot in in_mesh:
            slot += 1
        return slot


AXIS_SLOTS = AxisPalette()


def axis_color(mesh_or_axis_names: object, axis: str | None, *, remember: bool = True) -> QColor:
    """The colour of ``axis``, fixed by its name (``AxisPalette``).

    ``mesh_or_axis_names`` is a backend Mesh or a sequence of axis names (major to
    minor): the names that must look distinct from ``axis``. ``None`` or ``"replicated"``
    gives the neutral grey; an axis the mesh lacks gives a dark grey so a stale spec
    stands out instead of borrowing a colour. ``remember=False`` previews the colour a
    name not yet in any mesh would get (a row being typed in the mesh editor).
    """
    if axis is None or axis == REPLICATED:
        return QColor(REPLICATED_COLOR)
    names = _axis_names(mesh_or_axis_names)
    if axis not in names:
        return QColor(UNKNOWN_AXIS_COLOR)
    return _palette_color(AXIS_SLOTS.slots_for(names, remember=remember)[axis])


def _palette_color(index: int) -> QColor:
    base = QColor(AXIS_PALETTE[index % len(AXIS_PALETTE)])
    cycle = index // len(AXIS_PALETTE)
    if cycle:
        # Beyond seven axes, repeat the hues darker so they remain distinct from the first round.
        return base.darker(100 + 35 * cycle)
    return base


def _axis_names(mesh_or_axis_names: object) -> tuple[str, ...]:
    names = getattr(mesh_or_axis_names, "axis_names", None)
    if names is not None:
        return tuple(names)
    if isinstance(mesh_or_axis_names, str):
        return (mesh_or_axis_names,)
    return tuple(str(n) for n in mesh_or_axis_names)  # type: ignore[union-attr]


def text_color_on(background: QColor) -> QColor:
    """Black or white, whichever reads better on ``background`` (WCAG relative luminance)."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    lum = (
        0.2126 * channel(background.redF())
        + 0.7152 * channel(background.greenF())
        + 0.0722 * channel(background.blueF())
    )
    # Contrast against black (lum + 0.05) / 0.05 vs. white 1.05 / (lum + 0.05).
    return QColor("#000000") if lum > 0.179 else QColor("#FFFFFF")


@lru_cache(maxsize=16)
def _device_rgb(n: int) -> np.ndarray:
    # Golden-angle hue steps keep neighbouring ids far apart in hue; three lightness and
    # two saturation levels multiply the distinct colours well past 256.
    out = np.empty((n, 3), dtype=np.uint8)
    golden = 0.618033988749895
    for i in range(n):
        hue = (0.58 + i * golden) % 1.0
        light = (0.62, 0.48, 0.72)[i % 3]
        sat = (0.70, 0.50)[(i // 3) % 2]
        r, g, b = colorsys.hls_to_rgb(hue, light, sat)
        out[i] = (round(r * 255), round(g * 255), round(b * 255))
    out.setflags(write=False)
    return out


def device_lut(n: int) -> np.ndarray:
    """``(n, 3)`` uint8 RGB, one colour per device id ``0..n-1`` (a pyqtgraph LUT for n <= 256)."""
    return _device_rgb(max(int(n), 1))


LUT_SIZE = 256


def lut_for(n_devices: int) -> np.ndarray:
    """A 256-entry colour table: the device colours, repeated past the device count."""
    base = device_lut(min(max(n_devices, 1), LUT_SIZE))
    reps = -(-LUT_SIZE // len(base))
    return np.ascontiguousarray(np.tile(base, (reps, 1))[:LUT_SIZE])


def device_colors(n: int) -> list[QColor]:
    """One distinct colour per device id ``0..n-1``."""
    return [QColor(int(r), int(g), int(b)) for r, g, b in device_lut(n)]


@dataclass(frozen=True)
class Theme:
    """Colours a view draws with besides axis and device colours."""

    name: str
    background: QColor
    foreground: QColor
    muted: QColor
    grid: QColor
    highlight: QColor  # accents: what the last edit changed, a hovered drop target
    padding: QColor
    error: QColor
    # the selected node or badge and the tensor the inspector shows: a hue of its own,
    # never the changed ring's
    selected: QColor

    @property
    def is_dark(self) -> bool:
        """The background is dark."""
        return self.background.lightness() < 128


THEMES: dict[str, Theme] = {
    "dark": Theme(
        name="dark",
        background=QColor("#1E1E1E"),
        foreground=QColor("#F0F0F0"),
        muted=QColor("#A8A8A8"),
        grid=QColor("#4A4A4A"),
        highlight=QColor("#FFD400"),
        padding=QColor("#2E2E2E"),
        error=QColor("#FF7B72"),
        selected=QColor("#00D8FF"),
    ),
    "light": Theme(
        name="light",
        background=QColor("#FFFFFF"),
        foreground=QColor("#111111"),
        muted=QColor("#555555"),
        grid=QColor("#C4C4C4"),
        # gold, as the dark theme's yellow: a red would read as a conflict's outline
        highlight=QColor("#D19A00"),
        padding=QColor("#E6E6E6"),
        error=QColor("#B00020"),
        selected=QColor("#0050D0"),
    ),
}


def theme_for(widget: QWidget | None) -> Theme:
    """The theme matching ``widget``'s palette: dark when its window colour is dark."""
    if widget is None:
        return THEMES["light"]
    return (
        THEMES["dark"] if widget.palette().window().color().lightness() < 128 else THEMES["light"]
    )


def readable_color(color: QColor, theme: Theme) -> QColor:
    """``color`` for text, lifted or darkened where it would vanish into the background."""
    bg = theme.background.lightness()
    if abs(color.lightness() - bg) >= 90:
        return color
    return color.lighter(160) if theme.is_dark else color.darker(160)
