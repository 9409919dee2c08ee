"""Byte counts and durations read the same in every report and view."""

from shardscope.backend.units import bytes_text, seconds_text


def test_bytes_read_in_binary_units_with_one_decimal():
    assert [bytes_text(n) for n in (0, 512, 1023, 1536, 12 * 2**20, 3 * 2**30, 2**20 - 1)] == [
        "0 B",
        "512 B",
        "1023 B",
        "1.5 KiB",
        "12.0 MiB",
        "3.0 GiB",
        "1024.0 KiB",
    ]


def test_seconds_read_in_the_unit_that_keeps_them_between_one_and_a_thousand():
    assert [seconds_text(s) for s in (4e-7, 1.23e-5, 2.002e-5, 4.5e-3, 1.2, 75.0)] == [
        "400 ns",
        "12.3 µs",
        "20.0 µs",
        "4.50 ms",
        "1.20 s",
        "75.00 s",
    ]
