"""Where compiled collectives move their bytes on a slice of several hosts.

``mark_crossing(collectives, hosts)`` sets each ``CompiledCollective.crosses_hosts`` from
its device groups (``sharding.hosts.Hosts.crosses``): the same answer for a run of
several processes (``run --hosts``) and for a compile that runs nothing
(``propagate --hosts``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from shardscope.backend.run.result import CompiledCollective
from shardscope.backend.sharding.hosts import Hosts


def mark_crossing(
    collectives: Sequence[CompiledCollective], hosts: Hosts
) -> list[CompiledCollective]:
    """``collectives`` with ``crosses_hosts`` set for ``hosts``."""
    return [
        dataclasses.replace(c, crosses_hosts=hosts.crosses(c.device_groups)) for c in collectives
    ]
