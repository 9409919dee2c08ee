"""How the Run dock words a run: its summary line, shard index ranges, device groups,
what a compiled collective was matched with, and which devices each host holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardscope.backend.units import bytes_text

if TYPE_CHECKING:
    from shardscope.backend.run.result import PredictedRef, RunResult

ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "float16": 2, "bfloat16": 2, "int16": 2}


def index_text(index: tuple[tuple[int, int], ...]) -> str:
    """``[0:2, 0:16]``: a shard's [start, stop) per dimension."""
    return "[" + ", ".join(f"{a}:{b}" for a, b in index) + "]"


def itemsize(dtype: str) -> int:
    """Bytes per element of a dtype named as numpy names it (``float32``: 4)."""
    if dtype in ITEMSIZE:
        return ITEMSIZE[dtype]
    digits = "".join(ch for ch in dtype if ch.isdigit())
    return max(1, int(digits) // 8) if digits else 4


def groups_text(groups: tuple[tuple[int, ...], ...] | None, limit: int = 8) -> str:
    """``{0,1} {2,3}``, cut after ``limit`` groups; ``?`` when the HLO did not say."""
    if groups is None:
        return "?"
    text = " ".join("{" + ",".join(map(str, g)) + "}" for g in groups[:limit])
    return text + (f" … ({len(groups)} groups)" if len(groups) > limit else "")


def predicted_text(refs: tuple[PredictedRef, ...]) -> str:
    """What a compiled collective was matched with, or ``unmatched``."""
    if not refs:
        return "unmatched"
    return ", ".join(f"{p.kind} {'+'.join(p.axes) or '—'}" for p in refs)


def summary_text(result: RunResult) -> str:
    """One line: where it ran, how long it took, what it held per device."""
    mesh = ", ".join(f"{k}={v}" for k, v in result.mesh.items())
    memory = ", ".join(
        f"{k} {bytes_text(v)}" for k, v in result.memory.items() if k != "generated_code"
    )
    hosts = int(getattr(result, "hosts", 1) or 1)
    on_hosts = (
        f" on {hosts} hosts ({hosts} processes of {result.device_count // hosts} devices)"
        if hosts > 1
        else ""
    )
    return (
        f"{result.program}: {result.platform.upper()}, {result.device_count} devices "
        f"(mesh {mesh}){on_hosts} · compile {result.compile_s:.3f} s · run {result.run_s * 1e3:.3f} ms "
        f"(median of {len(result.run_times)})" + (f" · per device: {memory}" if memory else "")
    )


def host_devices_text(shards) -> str:
    """``h0: devices 0-3 · h1: devices 4-7`` (each host's devices, as its shards say)."""
    by_host: dict[int, list[int]] = {}
    for s in shards:
        by_host.setdefault(int(s.host), []).append(int(s.device))
    parts = []
    for host, devices in sorted(by_host.items()):
        devices.sort()
        run = devices == list(range(devices[0], devices[-1] + 1))
        named = (
            f"{devices[0]}–{devices[-1]}"
            if run and len(devices) > 2
            else ",".join(map(str, devices))
        )
        parts.append(f"h{host}: devices {named}")
    return " · ".join(parts)
