"""Sleeps far longer than any timeout while being imported."""

import time

time.sleep(10_000)
