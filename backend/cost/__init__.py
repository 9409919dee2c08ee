"""What compiled collectives and memory cost on a hardware profile (an estimate)."""
