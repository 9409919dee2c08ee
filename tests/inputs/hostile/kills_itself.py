"""Kills its own process while being imported."""

import os
import signal

os.kill(os.getpid(), signal.SIGKILL)
