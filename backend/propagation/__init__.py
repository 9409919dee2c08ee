"""Shardy's propagation, read back: annotation, timeline, conflicts, predicted collectives."""
