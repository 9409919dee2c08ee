"""HLO dumps: the compile options that make XLA write a module after a pass, and reading it.

A compile given ``dump_options(folder, PASS)`` writes text files into ``folder``;
``dumped_after(folder, PASS)`` is the module as it stood after that pass.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from shardscope.backend.files import MAX_MODULE_BYTES, read_text


def dump_options(folder: str | Path, pass_name: str) -> dict[str, object]:
    """XLA compile options that dump the HLO module as text around ``pass_name``."""
    return {
        "xla_dump_to": str(folder),
        "xla_dump_hlo_pass_re": pass_name,
        "xla_dump_hlo_as_text": True,
    }


def dumped_after(folder: str | Path, pass_name: str) -> str:
    """The text of the last module dumped after ``pass_name`` into ``folder``.

    Raises ``RuntimeError`` when there is none.
    """
    files = sorted(glob.glob(os.path.join(folder, f"*after_{pass_name}*.txt")))
    if not files:
        raise RuntimeError(f"XLA wrote no module after {pass_name}")
    return read_text(files[-1], MAX_MODULE_BYTES, "compile the module again", what="XLA's dump")
