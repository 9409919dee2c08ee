"""Imports a module that does not exist."""

import shardscope_no_such_module  # noqa: F401
