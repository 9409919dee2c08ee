"""Raises while being imported."""

raise ValueError("the program's own failure")
