"""One host of a run on several hosts (``run --hosts``): the run worker's side.

A job with ``"distributed": {"coordinator": "127.0.0.1:PORT", "num_processes": H,
"process_id": k}`` is host ``k`` of ``H`` local processes joined by JAX's own distributed
runtime (``jax.distributed.initialize``), each with ``N / H`` fake CPU devices; CPU
collectives between the processes go through gloo (jax 0.10.2's default
``jax_cpu_collectives_implementation``).

Device numbers are the mesh's own (``sharding.hosts``): device number ``d`` is the
``d``-th device of the global device list sorted by process, then id. Ids are not
positions: process 1's CPU devices are 2048, 2049, ... on this machine. ``jax_mesh``
lays a mesh over device numbers out on the devices, ``place`` builds a global
array from the data every host holds a full copy of, and ``host_tensor`` reports the
shards this host holds, by device number, with their host.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from shardscope.backend.run.inputs import host_array, is_key
from shardscope.backend.run.shards import max_relative_error, replica_mismatches
from shardscope.backend.sharding.mesh import Mesh

# Seconds without a heartbeat after which the runtime's coordinator declares a host dead
# and ends every other host (JAX's default is 100).
HEARTBEAT_S = 10
# Seconds ``initialize`` waits for every host to join.
INIT_TIMEOUT_S = 60
# Seconds the runtime's shutdown waits for the other hosts (a worker leaves with
# ``os._exit`` after its report, which skips it).
SHUTDOWN_TIMEOUT_S = 5


@dataclass(frozen=True)
class HostJob:
    """Which host of how many this worker is, and where the coordinator listens."""

    coordinator: str
    count: int
    index: int

    @classmethod
    def from_job(cls, job: dict) -> HostJob | None:
        """The job's ``distributed`` entry; None for a run on one host."""
        entry = job.get("distributed")
        if not entry:
            return None
        return cls(str(entry["coordinator"]), int(entry["num_processes"]), int(entry["process_id"]))

    @property
    def name(self) -> str:
        """``host 1 of 2``."""
        return f"host {self.index} of {self.count}"


def join(host: HostJob, devices_per_host: int) -> None:
    """Set this process's fake CPU device count and join the runtime: host 0 starts the
    coordinator (listening on the loopback address alone), every host connects to it and
    waits for the others. The other hosts first wait for the coordinator to listen
    (``wait_for_listener``): a client that connects before it does retries after a
    backoff, which cost up to a second here."""
    jax.config.update("jax_num_cpu_devices", int(devices_per_host))
    if host.index > 0:
        wait_for_listener(host.coordinator, INIT_TIMEOUT_S)
    jax.distributed.initialize(
        coordinator_address=host.coordinator,
        num_processes=host.count,
        process_id=host.index,
        coordinator_bind_address=host.coordinator,
        initialization_timeout=INIT_TIMEOUT_S,
        heartbeat_timeout_seconds=HEARTBEAT_S,
        shutdown_timeout_seconds=SHUTDOWN_TIMEOUT_S,
    )


def wait_for_listener(address: str, timeout_s: float) -> bool:
    """Wait until something accepts TCP connections at ``address`` (``host:port``), for
    at most ``timeout_s`` seconds; whether it did."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=0.5):
                return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)


def set_devices_per_host(count: int) -> bool:
    """Give this host ``count`` fake CPU devices if JAX's backend has not started yet
    (``initialize`` does not start it); whether it could."""
    try:
        jax.config.update("jax_num_cpu_devices", int(count))
    except RuntimeError:
        return False
    return True


def global_devices() -> list:
    """Every host's devices, by process then id: device number ``d`` is entry ``d``."""
    return sorted(jax.devices(), key=lambda d: (d.process_index, d.id))


def device_numbers(devices: list) -> dict[int, int]:
    """Device id -> device number, for ``global_devices()``."""
    return {int(d.id): i for i, d in enumerate(devices)}


def jax_mesh(mesh: Mesh, devices: list) -> Any:
    """The ``jax.sharding.Mesh`` of ``mesh`` (its device order in device numbers) over
    ``devices`` (``global_devices()``): number ``n`` is ``devices[n]``, whatever its id."""
    from jax.sharding import Mesh as JaxMesh

    grid = np.empty(mesh.size, dtype=object)
    for position, number in enumerate(mesh.device_order):
        grid[position] = devices[number]
    return JaxMesh(grid.reshape(mesh.axis_sizes), mesh.axis_names, axis_types=mesh._jax_types())


def place(data: np.ndarray, leaf: Any, sharding: Any) -> Any:
    """The global array of flat argument ``leaf`` with host ``data`` (each host holds
    all of it) laid out as ``sharding``: each host fills its own devices' pieces. A key
    array's key data is placed replicated and wrapped into keys of that sharding."""
    if is_key(leaf):
        impl = leaf.dtype._impl
        replicated = NamedSharding(sharding.mesh, PartitionSpec())
        words = jax.make_array_from_callback(data.shape, replicated, lambda index: data[index])
        wrap = jax.jit(lambda w: jax.random.wrap_key_data(w, impl=impl), out_shardings=sharding)
        return wrap(words)
    data = np.asarray(data)
    return jax.make_array_from_callback(data.shape, sharding, lambda index: data[index])


def barrier(name: str, timeout_s: float) -> None:
    """Wait until every host reaches the barrier ``name`` (the runtime's own, not a
    collective: a host far behind holds the others here rather than in gloo's first
    collective, whose context waits 30 s for its peers on this machine)."""
    from jax._src import distributed

    client = distributed.global_state.client
    if client is not None:
        client.wait_at_barrier(name, max(1, int(timeout_s * 1000)))


def host_tensor(
    entry: dict, array: Any, expected: np.ndarray | None, numbers: dict[int, int], host: int
) -> dict:
    """``entry`` (``shards.tensor_report`` of ``array`` without a reference) with each
    shard's device as its device number and its host, and the error against
    ``expected`` (the whole unsharded array) over the shards this host holds: the
    largest difference on them over the largest magnitude of the whole array, so the
    largest of the hosts' errors is the error of the whole run."""
    records = []
    for record in entry["shards"]:
        source = record.get("values_from")
        records.append(
            {
                **record,
                "device": numbers[int(record["device"])],
                "values_from": None if source is None else numbers[int(source)],
                "host": host,
            }
        )
    records.sort(key=lambda r: r["device"])
    error, finite = None, True
    if expected is not None:
        error = _local_error(array, expected)
        finite = bool(np.isfinite(error))
        error = error if finite else None
    return {
        **entry,
        "shards": records,
        "replica_mismatches": replica_mismatches(records),
        "max_rel_error": error,
        "error_not_finite": not finite,
    }


def _local_error(array: Any, expected: np.ndarray) -> float:
    """``shards.max_relative_error`` of the unsharded array with this host's shards put
    in their places: where this host holds nothing, nothing differs. (A key array
    compares its key data; a boolean one gives the share of this host's elements that
    differ among all of the array's.)"""
    expected = np.asarray(expected)
    if tuple(expected.shape) != tuple(host_array_shape(array)):
        return float("inf")
    mixed = expected.copy()
    for shard in array.addressable_shards:
        try:
            mixed[shard.index] = host_array(shard.data)
        except ValueError:
            return float("inf")
    if is_key(array):
        return float(np.mean(mixed != expected))
    return max_relative_error(mixed, expected)


def host_array_shape(array: Any) -> tuple[int, ...]:
    """The shape of ``array``'s host data (a key array's key data has the key's words
    after its own shape)."""
    if is_key(array):
        return tuple(array.shape) + tuple(array.dtype._impl.key_shape)
    return tuple(array.shape)


def partition_numbers(compiled: Any, jmesh: Any, numbers: dict[int, int]) -> list[int]:
    """The device number of each partition of ``compiled`` (the position in its device
    assignment that its HLO's replica groups name): the assignment its shardings carry,
    else ``jmesh``'s devices in order, which is where a ``jax.jit`` on that mesh puts
    partition ``p``."""
    size = int(jmesh.size)
    shardings = jax.tree.leaves(
        (compiled.input_shardings, compiled.output_shardings),
        is_leaf=lambda x: isinstance(x, jax.sharding.Sharding),
    )
    for sharding in shardings:
        assignment = getattr(sharding, "_device_assignment", None)
        if assignment is not None and len(assignment) == size:
            return [numbers[int(d.id)] for d in assignment]
    return [numbers[int(d.id)] for d in np.asarray(jmesh.devices).flat]
