"""Exits with a status while being imported."""

import sys

sys.exit(3)
