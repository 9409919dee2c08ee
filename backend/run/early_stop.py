"""An XLA compile stopped once the partitioned module is final, before code generation.

With ``xla_dump_to`` set, jaxlib 0.10.2's CPU compile writes
``<module>.cpu_after_optimizations.txt`` (the optimized, partitioned module) and then
``<module>.cpu_after_optimizations-buffer-assignment.txt``, and only then generates the
machine code. The module's text is the executable's ``as_text()`` but for the order of
the keys in some ``backend_config`` JSON: its collectives are the same
(``tests/backend/run/test_early_stop.py`` checks it against ``jax.jit(...).compile()``).
For example:transformer?layers=24 on 8 devices it came at 35% of the compile (8.8 s of
25 s, dumping), or 51% under heavier load.

The compile worker (``run.compile``), given an ``early`` job (``early_job``), dumps
there and watches for the parent's ``stop`` file (``PendingCompile.stop_early``): once
both it and the final module are there, ``watch`` hands the module's text on (the worker
then reports it and exits). XLA's memory analysis needs the finished compile: an
early-stopped report has none.

``estimate_s`` says how long a compile will take, from the module's size alone: an
estimate, which the load of the machine and the program's shape move a lot.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

FINAL = ".cpu_after_optimizations.txt"
# written after FINAL is closed
AFTER_FINAL = ".cpu_after_optimizations-buffer-assignment.txt"
DUMP_DIR = "xla-dump"
STOP_FILE = "stop-early"
POLL_S = 0.05
# Seconds of XLA's CPU compile per MB of the annotated module's text, measured here on 8
# devices (2 cores shared, load about 2.5): example:transformer with 4, 8 and 24 layers
# (0.26, 0.48 and 1.36 MB) compiled in 2.5, 4.2 and 17 s.
SECONDS_PER_MB = 12.5
# Dumping the modules (which stopping early needs) made that 17 s compile take 25 s.
DUMP_FACTOR = 1.45
# A compile estimated to take this long or more is dumped, so that it can stop early.
OFFER_S = 10.0


def estimate_s(module_bytes: int, *, dumping: bool = False) -> float:
    """The seconds a compile of a module of ``module_bytes`` bytes of text is estimated
    to take (``dumping``: one that can stop early)."""
    return module_bytes / 1e6 * SECONDS_PER_MB * (DUMP_FACTOR if dumping else 1.0)


def worth_stopping(module_bytes: int) -> bool:
    """Whether a compile of this module is estimated to take long enough to be offered
    the early stop (its dump slows the whole compile)."""
    return estimate_s(module_bytes) >= OFFER_S


def early_job(scratch: Path) -> dict[str, str]:
    """The ``early`` entry of a compile job whose dump and stop file are in ``scratch``."""
    return {"dump": str(scratch / DUMP_DIR), "stop": str(scratch / STOP_FILE)}


def request_stop(early: dict[str, str]) -> None:
    """Ask the worker of the job with ``early`` to stop at the final module (nothing
    where the compile is over and its folder gone)."""
    with contextlib.suppress(OSError):
        Path(early["stop"]).touch()


def final_module(dump: Path) -> Path | None:
    """The dumped final module in ``dump``, once it is written whole; else None."""
    try:
        names = [p.name for p in dump.iterdir()]
    except OSError:
        return None
    for name in names:
        if name.endswith(FINAL) and name[: -len(FINAL)] + AFTER_FINAL in names:
            return dump / name
    return None


def set_dump(debug_options, dump: Path) -> None:
    """Have XLA's compile dump its modules as text into ``dump``."""
    debug_options.xla_dump_to = str(dump)
    debug_options.xla_dump_hlo_as_text = True


def watch(
    early: dict[str, str], on_final: Callable[[str], None], poll: float = POLL_S
) -> threading.Event:
    """Watch, in a thread, for the stop request and the final module of ``early``'s
    dump; ``on_final(text)`` once both are there. Setting the returned event ends the
    watch (the compile finished first)."""
    done = threading.Event()
    dump, stop = Path(early["dump"]), Path(early["stop"])

    def run() -> None:
        while not done.is_set():
            found = final_module(dump) if stop.exists() else None
            if found is not None:
                on_final(found.read_text(errors="replace"))
                return
            time.sleep(poll)

    threading.Thread(target=run, name="early-stop", daemon=True).start()
    return done
