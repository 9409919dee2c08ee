"""A run on 2 hosts of 4 CPU devices each against an independent ``jax.distributed`` job of
the same program, mesh, specs and inputs (written here, run as 2 processes of its own):
each host's shards, the compiled collectives' groups and whether they cross hosts; and
against the one-process run of the same program."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

from shardscope.backend.program.load import load_program
from shardscope.backend.run.dispatch import run_program
from tests.support.inputs import INPUTS

pytestmark = pytest.mark.slow
PROGRAM = INPUTS / "hosts" / "two_axes.py"
# model spans the hosts (device order 0,1,4,5,2,3,6,7): the all-reduce over model
# crosses them, the one over data stays within each.
DCN = "model=2"

# The independent job: argv = process id, port, the mesh's device order (device numbers).
# It numbers devices as the run does (by process, then id) and prints, for this process,
# each array's shards and each all-reduce's groups, read from the compiled HLO text.
_JOB = r"""
import json, re, sys, zlib
k, port, order = int(sys.argv[1]), sys.argv[2], [int(n) for n in sys.argv[3].split(",")]
import jax
jax.config.update("jax_num_cpu_devices", 4)
address = f"127.0.0.1:{port}"
jax.distributed.initialize(address, 2, k, coordinator_bind_address=address,
                           initialization_timeout=60, heartbeat_timeout_seconds=10)
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
grid = np.array([devices[n] for n in order], dtype=object).reshape(2, 4)
mesh = jax.sharding.Mesh(grid, ("data", "model"), axis_types=(AxisType.Auto,) * 2)
xs, ws = NamedSharding(mesh, P("data", "model")), NamedSharding(mesh, P("model", None))
hs = NamedSharding(mesh, P("data", None))

def program(x, w):
    h = jnp.tanh(x @ w)
    return jax.lax.with_sharding_constraint(h, hs), h.sum(axis=0)

data = [np.random.default_rng([0, i]).standard_normal(s).astype(np.float32)
        for i, s in enumerate([(16, 32), (32, 8)])]
args = [jax.make_array_from_callback(d.shape, s, lambda index, d=d: d[index])
        for d, s in zip(data, (xs, ws))]
compiled = jax.jit(program, in_shardings=(xs, ws)).lower(*args).compile()
outs = jax.block_until_ready(compiled(*args))

def shards(array):
    out = []
    for s in array.addressable_shards:
        index = [list(r.indices(n)[:2]) for r, n in zip(s.index, array.shape)]
        piece = np.ascontiguousarray(np.asarray(s.data))
        out.append([devices.index(s.device), jax.process_index(), index,
                    f"{zlib.crc32(piece.tobytes()) & 0xFFFFFFFF:08x}"])
    return sorted(out)

def groups(line):
    # {{0,1},{2,3}} or mesh['a'=2,'b'=4] {'a'}: partition ids.
    m = re.search(r"replica_groups=\{(\{[\d,{}]*\})\}", line)
    if m:
        return [[int(i) for i in g.split(",")] for g in re.findall(r"\{([\d,]+)\}", m[1])]
    m = re.search(r"replica_groups=mesh\[([^\]]*)\] \{([^}]*)\}", line)
    axes = [(a.split("=")[0].strip("'"), int(a.split("=")[1])) for a in m[1].split(",")]
    over = [a.strip().strip("'") for a in m[2].split(",")]
    ids = np.arange(np.prod([s for _, s in axes])).reshape([s for _, s in axes])
    keep = [i for i, (name, _) in enumerate(axes) if name in over]
    rest = [i for i in range(len(axes)) if i not in keep]
    moved = ids.transpose(rest + keep).reshape(-1, int(np.prod([axes[i][1] for i in keep])))
    return moved.tolist()

# Partition p of a jit on ``mesh`` runs on mesh.devices.flat[p].
flat = list(np.asarray(mesh.devices).flat)
collectives = []
for line in compiled.as_text().splitlines():
    if " all-reduce(" in line:
        parts = [[devices.index(flat[p]) for p in g] for g in groups(line)]
        procs = [{flat[p].process_index for p in g} for g in groups(line)]
        collectives.append({"groups": parts, "crosses": any(len(s) > 1 for s in procs)})
print(json.dumps({
    "x": shards(args[0]), "w": shards(args[1]),
    "result[0]": shards(outs[0]), "result[1]": shards(outs[1]),
    "collectives": collectives,
}), flush=True)
import os
os._exit(0)
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def independent_job(tmp_path, order: list[int]) -> list[dict]:
    """Each process's printout of the job above; tried again on a fresh port where the
    two processes did not both print theirs (the port found free was taken meanwhile)."""
    for _ in range(3):
        outs = _job_outputs(tmp_path, order)
        if all(any(line.startswith("{") for line in out.splitlines()) for out in outs):
            break
    return _job_lines(outs)


def _job_outputs(tmp_path, order: list[int]) -> list[str]:
    script = tmp_path / "job.py"
    script.write_text(_JOB)
    port = str(_port())
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(k), port, ",".join(map(str, order))],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        for k in range(2)
    ]
    try:
        return [p.communicate(timeout=120)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def _job_lines(outs: list[str]) -> list[dict]:
    # Gloo writes "[Gloo] Rank 1 is connected to ..." to the same stdout, at times after
    # the job's own line: the job's line is the last JSON object.
    lines = [
        next((line for line in reversed(out.splitlines()) if line.startswith("{")), None)
        for out in outs
    ]
    assert all(lines), f"the independent job printed no result: {outs}"
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    program = load_program(str(PROGRAM))
    hosts = run_program(program, hosts=2, dcn=DCN, runs=1, timeout=120)
    one = run_program(program, runs=1, timeout=120)
    theirs = independent_job(tmp_path_factory.mktemp("job"), hosts.device_order)
    return hosts, one, theirs


def test_the_mesh_is_laid_out_over_the_hosts_as_dcn_says(runs):
    hosts, _, _ = runs
    assert hosts.hosts == 2
    assert hosts.device_count == 8
    assert hosts.device_order == [0, 1, 4, 5, 2, 3, 6, 7]


def test_each_hosts_shards_are_what_that_process_holds_in_the_independent_job(runs):
    hosts, _, theirs = runs
    for name in ("x", "w", "result[0]", "result[1]"):
        mine = sorted(
            [s.device, s.host, [list(r) for r in s.index], s.checksum]
            for s in hosts.tensor(name).shards
        )
        assert mine == sorted(theirs[0][name] + theirs[1][name]), name
        assert {s.host for s in hosts.tensor(name).shards} == {0, 1}
        for s in hosts.tensor(name).shards:
            assert s.host == s.device // 4


def test_collectives_cross_hosts_where_the_compiled_replica_groups_say(runs):
    hosts, _, theirs = runs
    compiled = [c for c in hosts.collectives if c.kind == "all-reduce"]
    assert len(compiled) == len(theirs[0]["collectives"]) == 2
    for mine, other in zip(compiled, theirs[0]["collectives"], strict=True):
        assert sorted(map(sorted, mine.device_groups)) == sorted(map(sorted, other["groups"]))
        assert mine.crosses_hosts == other["crosses"]
    crossing = {c.device_groups: c.crosses_hosts for c in compiled}
    # Over model (devices 0,1,4,5 at data 0): across hosts; over data: within each.
    assert crossing == {((0, 1, 4, 5), (2, 3, 6, 7)): True, ((0, 2), (1, 3), (4, 6), (5, 7)): False}


def _whole(tensor) -> np.ndarray:
    out = np.zeros(tensor.shape, dtype=np.float64)
    for s in tensor.shards:
        out[tuple(slice(a, b) for a, b in s.index)] = np.array(s.values).reshape(s.shape)
    return out


def test_outputs_equal_the_one_process_run(runs):
    hosts, one, _ = runs
    assert one.hosts == 1
    for name in ("result[0]", "result[1]"):
        np.testing.assert_allclose(
            _whole(hosts.tensor(name)), _whole(one.tensor(name)), rtol=1e-6, atol=1e-6
        )


def test_max_rel_error_covers_every_hosts_shards(runs):
    hosts, _, _ = runs
    rng = [np.random.default_rng([0, i]) for i in range(2)]
    x = rng[0].standard_normal((16, 32)).astype(np.float32)
    w = rng[1].standard_normal((32, 8)).astype(np.float32)
    h = np.tanh(x.astype(np.float64) @ w)
    for name, expected in (("result[0]", h), ("result[1]", h.sum(axis=0))):
        tensor = hosts.tensor(name)
        got = _whole(tensor)
        error = np.max(np.abs(got - expected)) / np.max(np.abs(expected))
        assert tensor.max_rel_error is not None
        # The run's error is against its own float32 reference; this one against float64.
        assert tensor.max_rel_error == pytest.approx(error, abs=2e-6)
        assert tensor.max_rel_error < 1e-5


def test_the_result_says_which_host_ran_what_in_json(runs):
    hosts, _, _ = runs
    data = hosts.to_json()
    assert data["hosts"] == 2
    assert all("host" in s for t in data["outputs"] + data["arguments"] for s in t["shards"])
    assert all("crosses_hosts" in c for c in data["collectives"])
