"""Where the tests' input files live: tests/inputs/ (programs, .mlir modules, a corpus)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INPUTS = REPO / "tests" / "inputs"
CORPUS = INPUTS / "corpus"  # real-world program shapes: pytrees, loops, calls, shard_map
MLIR = INPUTS / "mlir"  # StableHLO modules: plain, Shardy- and GSPMD-annotated
PROGRAMS = INPUTS / "programs"  # small programs for loading tests


def write_input(folder: Path, name: str, text: str) -> str:
    """Write a test's own input file (a program, a module) into ``folder``; its path."""
    path = folder / name
    path.write_text(text)
    return str(path)
