"""PROGRAM is None."""

PROGRAM = None
