"""Starts children in sessions of their own at import as ``setsid_at_import.py`` does;
loads fine, hangs when it runs (a debug callback that never returns)."""

import time

import jax
from setsid_at_import import EXAMPLE_ARGS  # noqa: F401 - and its children


def _hang(x):
    while True:
        time.sleep(1)


def program(x):
    jax.debug.callback(_hang, x)
    return x * 2


PROGRAM = program
