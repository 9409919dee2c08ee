"""Where the tests' input files live: tests/inputs/ (programs, .mlir modules, a corpus)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INPUTS = REPO / "tests" / "inputs"
CORPUS = INPUTS / "corpus"  # real-world program shapes: pytrees, loops, calls, shard_map
MLIR = INPUTS / "mlir"  # StableHLO modules: plain, Shardy- and GSPMD-annotated
PROGRAMS = INPUTS / "programs"  # small programs for loading tests
