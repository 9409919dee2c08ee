"""Table: Shardy's predicted collectives, ``propagate --json``'s compiled ones, and jax's own.

Run: ``.venv/bin/python tests/benchmarks/compare_collectives.py``

For every built-in example and each ``tests/inputs/programs/compiled_*.py``, per
collective kind, it prints:

- predicted: Shardy's explicit-reshard prediction (``predicted_collectives``; an
  all-slice moves no data and is no instruction of the compiled module);
- compiled: ``propagate --json``'s ``collectives`` (the annotated module compiled by
  ``propagate_compiled`` on fake CPU devices, read by ``hlo.hlo_collectives``);
- jax: instructions of that kind in ``jax.jit(PROGRAM).lower(...).compile().as_text()``
  (on the program's own mesh and shardings, ``tests/support/compile_oracle``), counted
  here by a pattern of their own, not by ``hlo.hlo_collectives``;

and whether compiled equals jax for every kind of the program.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("attention", "conflict", "matmul6", "mlp", "scan", "transformer")
# One instruction per line: ``%name = TYPE KIND(`` or its asynchronous ``KIND-start(``.
_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%\S+\s*=\s*.*?\s"
    r"(all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute|"
    r"ragged-all-to-all|collective-broadcast)(?:-start)?\(",
    re.MULTILINE,
)


def jax_counts(text: str) -> Counter:
    """Collective instructions per kind in compiled HLO ``text``."""
    return Counter(m[1] for m in _INSTRUCTION.finditer(text))


def sources() -> list[str]:
    programs = sorted((ROOT / "tests" / "inputs" / "programs").glob("compiled_*.py"))
    return [f"example:{name}" for name in EXAMPLES] + [str(p) for p in programs]


def row(source: str) -> tuple[str, dict[str, tuple[int, int, int]], bool]:
    from shardscope.backend.analysis.analyse import analyse
    from tests.support.compile_oracle import compiled_text, loaded

    program = loaded(source)
    result = analyse(program).to_json()
    predicted = Counter(p["kind"].replace("_", "-") for p in result["predicted_collectives"])
    compiled = Counter(c["kind"] for c in result["collectives"] or [])
    jax = jax_counts(compiled_text(program))
    kinds = sorted(set(predicted) | set(compiled) | set(jax))
    counts = {k: (predicted[k], compiled[k], jax[k]) for k in kinds}
    same = all(compiled[k] == jax[k] for k in kinds)
    name = source if source.startswith("example:") else Path(source).name
    return name, counts, same


def main() -> int:
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=64"
    ).strip()
    sys.path.insert(0, str(ROOT))
    header = (
        f"{'program':34} {'kind':20} {'predicted':>9} {'compiled':>8} {'jax':>5}  compiled == jax"
    )
    print(header)
    print("-" * len(header))
    agree = 0
    all_sources = sources()
    for source in all_sources:
        name, counts, same = row(source)
        agree += same
        if not counts:
            print(f"{name:34} {'(none)':20} {0:>9} {0:>8} {0:>5}  {'yes' if same else 'NO'}")
        for i, (kind, (p, c, j)) in enumerate(counts.items()):
            verdict = ("yes" if same else "NO") if i == 0 else ""
            print(f"{name if i == 0 else '':34} {kind:20} {p:>9} {c:>8} {j:>5}  {verdict}")
    print("-" * len(header))
    print(f"compiled == jax on {agree} of {len(all_sources)} programs")
    return 0 if agree == len(all_sources) else 1


if __name__ == "__main__":
    sys.exit(main())
