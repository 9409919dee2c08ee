"""Running a program for real: compile and execute on devices, read back shards and the
compiled collectives."""
