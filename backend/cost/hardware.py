"""Hardware profiles: the memory and links of one kind of accelerator, with their sources.

The figures live in ``hardware.toml`` beside this module, each with the public page it
came from and the words there, or marked as an assumption where no page gives it.
``profiles()`` reads them once, in the file's order; ``profile(name)`` finds one.

A profile has two links. The fast one joins the devices of one domain (a TPU slice over
ICI, one node's GPUs over NVLink): ``domain`` devices, device ``d`` in domain
``d // domain``. The slow one (DCN, InfiniBand) joins domains; a device's share of it is
the bandwidth the page gives per device, or per host divided by the devices of a host.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from shardscope.backend.errors import ShardscopeError, shortened
from shardscope.backend.json_form import JsonForm

DATA = Path(__file__).with_name("hardware.toml")
DEFAULT_PROFILE = "tpu-v5e"
# Each unit as (multiplier, divisor) to bytes, bytes per second, seconds or a count.
UNITS = {
    "GB": (1e9, 1),
    "GiB": (2**30, 1),
    "GBps": (1e9, 1),
    "Gbps": (1e9, 8),
    "us": (1, 1e6),
    "count": (1, 1),
}
FIGURES = (
    "memory",
    "fast_bandwidth",
    "fast_divide_by",
    "fast_domain",
    "fast_latency",
    "slow_bandwidth",
    "slow_devices",
    "slow_latency",
)


@dataclass(frozen=True)
class Figure(JsonForm):
    """One number of a profile, as its page states it."""

    name: str
    value: float
    unit: str
    url: str
    quote: str
    assumption: bool = False
    note: str = ""

    @property
    def amount(self) -> float:
        """The value in bytes, bytes per second, seconds or a count."""
        times, per = UNITS[self.unit]
        return self.value * times / per

    @property
    def text(self) -> str:
        """``16 GB``, ``400 GBps``, ``4``."""
        number = f"{self.value:g}"
        return number if self.unit == "count" else f"{number} {self.unit}"


@dataclass(frozen=True)
class Link(JsonForm):
    """One of a profile's links: B (bytes per second one device sends in a ring step)
    and a (seconds per ring step)."""

    name: str  # ``ICI``, ``DCN``, ``NVLink``, ``InfiniBand``
    bytes_per_second: float
    latency_s: float
    text: str  # how B follows from the page's figures


@dataclass(frozen=True)
class HardwareProfile(JsonForm):
    """One kind of accelerator: its memory per device, its two links and their sources."""

    name: str
    label: str
    memory_bytes: float
    memory_text: str  # the page's own figure: ``16 GB``, ``95 GiB``
    domain: int  # devices joined by the fast link
    links: tuple[Link, Link]  # (fast, slow)
    sources: tuple[Figure, ...]

    @property
    def fast(self) -> Link:
        return self.links[0]

    @property
    def slow(self) -> Link:
        return self.links[1]

    @property
    def assumptions(self) -> tuple[Figure, ...]:
        """The figures no stored page gives."""
        return tuple(f for f in self.sources if f.assumption)


def _figure(name: str, data: dict) -> Figure:
    return Figure(
        name,
        float(data["value"]),
        data["unit"],
        data.get("url", ""),
        data.get("quote", ""),
        bool(data.get("assumption", False)),
        data.get("note", ""),
    )


def _profile(data: dict) -> HardwareProfile:
    figures = {name: _figure(name, data[name]) for name in FIGURES}
    f = figures
    fast_b = f["fast_bandwidth"].amount / f["fast_divide_by"].amount
    fast = Link(
        data["fast_name"],
        fast_b,
        f["fast_latency"].amount,
        f"{f['fast_bandwidth'].text} / {f['fast_divide_by'].text} = {_rate(fast_b)} per device",
    )
    if data["slow_per"] == "host":
        slow_b = f["slow_bandwidth"].amount / f["slow_devices"].amount
        how = (
            f"{f['slow_bandwidth'].text} per host / {f['slow_devices'].text} devices "
            f"= {_rate(slow_b)} per device"
        )
    else:
        slow_b = f["slow_bandwidth"].amount
        how = f"{f['slow_bandwidth'].text} per device = {_rate(slow_b)}"
    slow = Link(data["slow_name"], slow_b, f["slow_latency"].amount, how)
    return HardwareProfile(
        data["name"],
        data["label"],
        f["memory"].amount,
        f["memory"].text,
        int(f["fast_domain"].amount),
        (fast, slow),
        tuple(figures.values()),
    )


def _rate(bytes_per_second: float) -> str:
    return f"{bytes_per_second / 1e9:.4g} GB/s"


@functools.cache
def profiles() -> tuple[HardwareProfile, ...]:
    """Every profile of ``hardware.toml``, in the file's order."""
    with DATA.open("rb") as f:
        data = tomllib.load(f)
    return tuple(_profile(p) for p in data["profile"])


def names() -> tuple[str, ...]:
    """The profiles' names, in order: ``tpu-v5e``, ``tpu-v5p``, ..."""
    return tuple(p.name for p in profiles())


def profile(name: str | HardwareProfile | None = None) -> HardwareProfile:
    """The profile named ``name`` (``DEFAULT_PROFILE`` for None); a profile is returned as
    it is. An unknown name is a ``ShardscopeError`` naming the choices."""
    if isinstance(name, HardwareProfile):
        return name
    wanted = DEFAULT_PROFILE if name is None else name
    for p in profiles():
        if p.name == wanted:
            return p
    raise ShardscopeError(
        f"no hardware profile {shortened(wanted)}: choose one of {', '.join(names())} "
        f"(e.g. --hardware {DEFAULT_PROFILE})"
    )
