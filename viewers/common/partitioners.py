"""What the window calls the partitioners it compares, for one program.

shardscope propagates every program with Shardy and compares GSPMD's shardings with
Shardy's. A program its framework partitions with Shardy (JAX) reads "Shardy" and
"GSPMD". A program its framework partitions with another partitioner (a torch_xla capture:
``Program.partitioner == "gspmd"``) says whose each side is: GSPMD is the framework's own
partitioner, Shardy shardscope's comparison. Its compiled collectives may be the
framework's own compile (``Analysis.compiled_by``: the capture as the script ran it)
rather than shardscope's compile with Shardy, and the comparison's GSPMD compile is then
shardscope's recompile of the same module.

Plain text, no Qt: the GSPMD and Collectives docks, the side-by-side panes, the legend and
the window's titles word the two sides from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class HasPartitioner(Protocol):
    """A program or its analysis: the framework that built it and the partitioner that
    framework compiles it with (``Program.framework``, ``Program.partitioner``)."""

    framework: str
    partitioner: str


# The partitioners' own names, by ``Program.partitioner``.
PARTITIONER_NAMES = {"shardy": "Shardy", "gspmd": "GSPMD"}


@dataclass(frozen=True)
class Partitioners:
    """The names of the two sides of the comparison for a program of ``framework``,
    which it partitions with ``partitioner``."""

    framework: str = "jax"
    partitioner: str = "shardy"

    @property
    def foreign(self) -> bool:
        """Whether the framework partitions the program with another partitioner than
        Shardy, shardscope's."""
        return self.partitioner != "shardy"

    @property
    def own(self) -> str:
        """The framework's own partitioner, by name: ``GSPMD``."""
        return PARTITIONER_NAMES.get(self.partitioner, self.partitioner)

    @property
    def shardy(self) -> str:
        """Shardy's side: its propagation's shardings and prediction."""
        return "Shardy (shardscope's comparison)" if self.foreign else "Shardy"

    @property
    def gspmd(self) -> str:
        """GSPMD's side: the shardings GSPMD's propagation gives."""
        return f"GSPMD ({self.framework}'s partitioner)" if self.foreign else "GSPMD"

    @property
    def gspmd_compile(self) -> str:
        """The comparison's own compile with GSPMD, by shardscope."""
        return "GSPMD (shardscope's recompile)" if self.foreign else "GSPMD"

    @property
    def shardy_short(self) -> str:
        """Shardy's side where room is short (a pane's picker, the dock's title)."""
        return "Shardy (shardscope)" if self.foreign else "Shardy"

    @property
    def gspmd_short(self) -> str:
        """GSPMD's side where room is short."""
        return f"GSPMD ({self.framework})" if self.foreign else "GSPMD"

    @property
    def title(self) -> str:
        """The GSPMD dock's title."""
        return f"{self.gspmd_short} vs {self.shardy_short}"

    def compiled(self, compiled_by: str | None) -> str:
        """Who compiled the program's compiled collectives (``Analysis.compiled_by``):
        ``torch_xla (GSPMD)`` for the framework's own compile, else Shardy's side
        (shardscope's compile of Shardy's propagation)."""
        return f"{compiled_by} ({self.own})" if own_compile(compiled_by) else self.shardy


JAX = Partitioners()


def own_compile(compiled_by: str | None) -> bool:
    """Whether ``compiled_by`` (``Analysis.compiled_by``) names the framework's own
    compile rather than shardscope's."""
    return bool(compiled_by) and compiled_by != "shardscope"


def partitioners(program: HasPartitioner | None) -> Partitioners:
    """The names for ``program`` (a ``Program`` or an ``Analysis``; None: JAX's)."""
    if program is None:
        return JAX
    return Partitioners(
        str(getattr(program, "framework", "jax") or "jax"),
        str(getattr(program, "partitioner", "shardy") or "shardy"),
    )
