"""The propagation timeline: playback controls, the scrubber, and provenance of a tensor dim."""
