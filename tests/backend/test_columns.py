"""A table's columns declared as records: found by name, sorted by key, tipped per cell."""

import pytest

from shardscope.backend.columns import Column, column_index, column_names

COLUMNS = (
    Column("Name", lambda r: r[0]),
    Column("Bytes", lambda r: f"{r[1]} B", lambda r: r[1], tooltip="bytes moved"),
    Column("Why", lambda r: r[2] or "—", tip=lambda r: r[2] or None),
)


def test_columns_are_found_by_name_and_an_unknown_one_names_the_columns():
    assert column_names(COLUMNS) == ("Name", "Bytes", "Why")
    assert column_index(COLUMNS, "Bytes") == 1
    with pytest.raises(ValueError, match="no column 'Size': the columns are Name, Bytes, Why"):
        column_index(COLUMNS, "Size")


def test_a_cell_reads_its_row_and_sorts_by_its_key_where_it_has_one():
    row = ("x", 1536, "")
    assert [c.cell(row) for c in COLUMNS] == ["x", "1536 B", "—"]
    assert [c.sort_key(row) for c in COLUMNS] == [None, 1536, None]
    assert (
        COLUMNS[2].cell_tip(row) is None and COLUMNS[2].cell_tip(("y", 1, "a cause")) == "a cause"
    )
    assert COLUMNS[1].tooltip == "bytes moved" and COLUMNS[0].cell_tip(row) is None
