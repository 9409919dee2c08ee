"""Pausing the cyclic garbage collector: off inside, as it was afterwards, nested too."""

import gc

import pytest

from shardscope.backend.collector import paused, paused_during


def test_the_collector_is_off_inside_and_back_on_afterwards():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it to the outer one
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_back_on():
    with pytest.raises(ValueError), paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_it_stays_off_when_it_was_off():
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_function_runs_with_it_paused():
    @paused_during
    def state(x):
        """doc"""
        return gc.isenabled(), x

    assert state(3) == (False, 3) and state.__doc__ == "doc"
    assert gc.isenabled()
