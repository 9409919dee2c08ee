"""Count the compiled collectives whose cause is unknown, operand by operand.

Run: ``python tests/benchmarks/count_causes.py CHECKOUT SOURCE...``: for each program
(a program file, a ``capture.json#function``, an ``.mlir`` file) ``CHECKOUT``'s own
``main.py propagate SOURCE --json``, and for each compiled collective each operand's cause
(an older checkout's collective-wide cause for each of its operands). Prints the operands
and the unknown ones per program, and the totals: compare two checkouts on the same
programs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def count(checkout: Path, source: str) -> tuple[int, int] | None:
    """(operands, unknown) of ``source`` as ``checkout`` explains it; None if it failed."""
    done = subprocess.run(
        [
            str(checkout / ".venv/bin/python"),
            str(checkout / "main.py"),
            "propagate",
            source,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        print(f"{source}: failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    operands = unknown = 0
    for c in data["collectives"]:
        for t in c["tensors"] or [{}]:
            kind = (t.get("cause") or c.get("cause") or {}).get("kind")
            operands += 1
            unknown += kind == "unknown"
    return operands, unknown


def main(argv: list[str]) -> int:
    checkout, sources = Path(argv[0]).resolve(), argv[1:]
    total = unknown = 0
    for source in sources:
        found = count(checkout, source)
        if found is None:
            continue
        total, unknown = total + found[0], unknown + found[1]
        print(f"{Path(source).name:40} operands {found[0]:4}  unknown {found[1]}")
    print(f"total: {total} operands, {unknown} with an unknown cause")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
