"""``backend.cost.hardware``: the profiles of hardware.toml, each figure with its source."""

from __future__ import annotations

import pytest

from shardscope.backend.cost.hardware import (
    DEFAULT_PROFILE,
    FIGURES,
    UNITS,
    names,
    profile,
    profiles,
)
from shardscope.backend.errors import ShardscopeError


def test_the_profiles_the_issue_names_in_order():
    assert names() == ("tpu-v5e", "tpu-v5p", "tpu-v6e", "h100", "h200", "cpu")
    assert DEFAULT_PROFILE in names()
    assert profile().name == DEFAULT_PROFILE == "tpu-v5e"
    assert profiles()[0] is profile(DEFAULT_PROFILE)


@pytest.mark.parametrize("name", names())
def test_every_figure_has_a_source_or_says_it_is_assumed(name):
    hw = profile(name)
    assert tuple(f.name for f in hw.sources) == FIGURES
    for f in hw.sources:
        assert f.value > 0 and f.unit in UNITS, (name, f)
        if f.assumption:
            # An assumption says why, in words.
            assert len(f.note) > 20, (name, f)
        else:
            assert f.url.startswith("https://"), (name, f)
            assert f.quote, (name, f)
            # The page's own number is in its words, or the note says how it follows.
            assert f"{f.value:g}" in f.quote or f.note, (name, f)


@pytest.mark.parametrize("name", names())
def test_every_profile_has_memory_and_two_links(name):
    hw = profile(name)
    assert hw.memory_bytes >= 16e9 and hw.domain >= 8
    assert len(hw.links) == 2
    for link in hw.links:
        assert link.bytes_per_second > 0 and 0 < link.latency_s < 1e-3, link
    # The fast link is the fast one.
    assert hw.fast.bytes_per_second > hw.slow.bytes_per_second
    assert hw.fast.latency_s <= hw.slow.latency_s


def test_figures_convert_their_units():
    v5e = profile("tpu-v5e")
    assert v5e.memory_bytes == 16e9 and v5e.memory_text == "16 GB"
    # 400 GBps over 4 ports; 2 x 100 Gbps per host over 8 chips.
    assert v5e.fast.bytes_per_second == 100e9
    assert v5e.slow.bytes_per_second == 200e9 / 8 / 8
    v5p = profile("tpu-v5p")
    assert v5p.memory_bytes == 95 * 2**30 and v5p.memory_text == "95 GiB"
    assert v5p.slow.bytes_per_second == 50e9 / 8  # per chip, as the page gives it
    assert profile("h100").fast.bytes_per_second == 450e9
    assert profile("h100").fast.latency_s == 2e-6


def test_a_profile_is_returned_as_it_is():
    hw = profile("h200")
    assert profile(hw) is hw


def test_an_unknown_name_is_one_line_naming_the_choices():
    with pytest.raises(ShardscopeError) as e:
        profile("nope")
    text = str(e.value)
    assert "\n" not in text and "'nope'" in text
    for name in names():
        assert name in text
