"""A table's columns as data: each column's name, header tooltip, cell text and sort key.

A table declares its columns once as a sequence of ``Column`` records over its row type;
the widget that shows it builds its header and its cells from them, and code that needs
one column finds it by name (``column_index``) rather than by a number written by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Row = TypeVar("Row")


@dataclass(frozen=True)
class Column(Generic[Row]):
    """One column of a table of ``Row``s.

    ``cell`` gives a row's text; ``sort`` the key it sorts by where its text would sort
    wrongly (bytes as numbers; None: by text); ``tip`` a cell's own tooltip where it is
    not the row's (None: the row's). ``tooltip`` is the header's. ``max_width`` caps
    the width the column takes when the table fits its contents (long names are cut, their
    tooltips have them whole); ``several_hosts`` shows the column only on a mesh laid over
    more than one host.
    """

    name: str
    cell: Callable[[Row], str]
    sort: Callable[[Row], object] | None = None
    tooltip: str = ""
    tip: Callable[[Row], str | None] | None = None
    max_width: int | None = None
    several_hosts: bool = False

    def sort_key(self, row: Row) -> object | None:
        """The key ``row`` sorts by in this column (None: by its text)."""
        return self.sort(row) if self.sort is not None else None

    def cell_tip(self, row: Row) -> str | None:
        """The tooltip of ``row``'s cell in this column (None: the row's own)."""
        return self.tip(row) if self.tip is not None else None


def column_names(columns: Sequence[Column]) -> tuple[str, ...]:
    """The header labels of ``columns``, in order."""
    return tuple(c.name for c in columns)


def column_index(columns: Sequence[Column], name: str) -> int:
    """The position of the column called ``name``; ValueError naming the columns if none."""
    for i, c in enumerate(columns):
        if c.name == name:
            return i
    raise ValueError(f"no column {name!r}: the columns are {', '.join(column_names(columns))}")
