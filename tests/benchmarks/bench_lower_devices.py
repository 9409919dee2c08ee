"""What the lowering worker's fake devices cost, measured in the same run.

    .venv/bin/python tests/benchmarks/bench_lower_devices.py [--repeat 5]

The worker gives every program ``DEFAULT_DEVICES`` fake CPU devices so that scripts which
build a concrete mesh at import (``jax.make_mesh((2, 4), ...)``) load. This runs the
worker (``python -m shardscope.backend.program.lower``, a fresh process each time, as a
load without the fork server) on the mlp example with 1, the default, and 64 devices, and
prints each median wall time and its ratio to 1 device. Target: the default costs at most
5% over 1 device.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from shardscope.backend.isolation.worker_job import worker_env  # noqa: E402
from shardscope.backend.program.lower import DEFAULT_DEVICES  # noqa: E402

EXAMPLE = ROOT / "assets" / "examples" / "mlp.py"


def _once(devices: int, folder: Path) -> float:
    out = folder / f"out{devices}.json"
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "shardscope.backend.program.lower",
            str(EXAMPLE),
            "{}",
            str(out),
            str(devices),
        ],
        env=worker_env(),
        check=True,
        timeout=300,
    )
    seconds = time.perf_counter() - started
    assert json.loads(out.read_text())["ok"]
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    counts = (1, DEFAULT_DEVICES, 64)
    times: dict[int, list[float]] = {n: [] for n in counts}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for n in counts:  # interleaved, so drift hits every count alike
                times[n].append(_once(n, Path(tmp)))
    base = statistics.median(times[1])
    for n in counts:
        median = statistics.median(times[n])
        print(f"{n:3d} devices: {median:.3f} s  ratio {median / base:.3f}")
    ratio = statistics.median(times[DEFAULT_DEVICES]) / base
    print(f"default ({DEFAULT_DEVICES}) over 1 device: {ratio:.3f} (target <= 1.05)")
    return 0 if ratio <= 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())
