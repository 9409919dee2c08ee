"""Time tile maps for a 4096-device mesh (16x16x16) and a rank-4 tensor.

Run: ``.venv/bin/python tests/benchmarks/bench_tiles.py``. The baseline, measured in the
same run, is one plain numpy pass that writes a (devices, rank) start/stop table for the
same device count; the ratio says how many such passes a full tile map costs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from shardscope.backend.sharding.mesh import parse_mesh  # noqa: E402
from shardscope.backend.sharding.spec import parse_spec  # noqa: E402
from shardscope.backend.sharding.tiles import TileMap  # noqa: E402


def best_of(fn, repeat: int = 5) -> float:
    """Fastest of ``repeat`` runs, in seconds (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def baseline(n_devices: int, shape: tuple[int, ...]) -> None:
    """One vectorised pass over the devices: a start/stop table, nothing else."""
    idx = np.arange(n_devices)[:, None] % np.asarray(shape)
    np.stack([idx, idx + 1], axis=-1)


def main() -> None:
    mesh = parse_mesh("x=16,y=16,z=16", np.random.default_rng(0).permutation(4096).tolist())
    shape = (1024, 1000, 64, 130)
    spec = parse_spec("x+y,_,z,_")

    def full() -> None:
        tm = TileMap.build(mesh, spec, shape)
        tm.devices_json()
        tm.tiles()

    def build_only() -> None:
        TileMap.build(mesh, spec, shape)

    t_base = best_of(lambda: baseline(mesh.size, shape))
    t_build = best_of(build_only)
    t_full = best_of(full)
    print(
        f"mesh {mesh.describe()} ({mesh.size} devices, shuffled order), shape {shape}, spec {spec}"
    )
    print(f"baseline numpy pass:       {t_base * 1e3:8.2f} ms")
    print(
        f"TileMap.build:             {t_build * 1e3:8.2f} ms  ({t_build / t_base:6.1f}x baseline)"
    )
    print(f"build + JSON + replicas:   {t_full * 1e3:8.2f} ms  ({t_full / t_base:6.1f}x baseline)")
    print("target: well under 1 s:", "ok" if t_full < 1.0 else "TOO SLOW")


if __name__ == "__main__":
    main()
