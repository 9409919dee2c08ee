"""Starts children in sessions of their own as ``setsid_at_import.py`` does, then hangs at
import: the load or the run times out."""

import time

import setsid_at_import  # noqa: F401 - its children

time.sleep(300)
