"""A mesh whose devices are not in id order, and the compiler's own answer on it.

``jit_groups`` compiles a loaded Python program with ``jax.jit(...).lower(...).compile()``
on a ``jax.sharding.Mesh`` over the test process's CPU devices in a given order, and
``module_text`` is the module it lowers to; ``placement`` asks JAX where each device's
shard of a ``NamedSharding`` lies. ``write_capture`` writes a capture file of a module with
its mesh in an order, as a torch_xla capture of ``xs.Mesh(np.array(ORDER), ...)`` records
it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# torch_xla's ``xs.Mesh(np.array([0, 2, 4, 6, 1, 3, 5, 7]), (4, 2), ("data", "model"))``.
ORDER = (0, 2, 4, 6, 1, 3, 5, 7)
AXES = {"data": 4, "model": 2}


def jax_mesh(order, axes: dict[str, int] = AXES):
    """A ``jax.sharding.Mesh`` of Auto axes over the CPU devices with ids ``order``."""
    import jax
    import numpy as np
    from jax.sharding import AxisType

    by_id = {d.id: d for d in jax.devices()}
    devices = np.array([by_id[i] for i in order], dtype=object).reshape(tuple(axes.values()))
    return jax.sharding.Mesh(devices, tuple(axes), axis_types=(AxisType.Auto,) * len(axes))


def _lowered(program: Any, order):
    """``jax.jit`` of the loaded Python ``program`` lowered with its SPECS on the mesh over
    devices ``order``."""
    import jax
    from jax.sharding import NamedSharding

    from shardscope.backend.sharding.spec import Spec
    from tests.support.compile_oracle import jit_arguments

    fn, args, _ = jit_arguments(program)
    jmesh = jax_mesh(order, dict(program.mesh))
    leaves, tree = jax.tree.flatten(args)
    placed = []
    for a, name in zip(leaves, program.arg_names, strict=True):
        spec = program.specs.get(name)
        sharding = (
            NamedSharding(jmesh, Spec.from_json(spec).padded(a.ndim).to_jax()) if spec else None
        )
        placed.append(jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding))
    with jax.set_mesh(jmesh):
        return jax.jit(fn).lower(*jax.tree.unflatten(tree, placed))


def jit_groups(program: Any, order) -> list[tuple[tuple[int, ...], ...]]:
    """The device groups (device ids) of each collective of ``jax.jit`` compiling the
    loaded Python ``program`` with its SPECS on the mesh over devices ``order``."""
    from shardscope.backend.hlo.hlo_collectives import read_collectives

    compiled = _lowered(program, order).compile()
    assignment = [d.id for d in compiled._executable.xla_executable.local_devices()]
    assert assignment == list(order)
    return [
        tuple(tuple(g) for g in c["groups"])
        for c in read_collectives(compiled.as_text(), assignment, len(order))
    ]


def module_text(program: Any, order=ORDER) -> str:
    """The StableHLO ``jax.jit`` lowers the loaded Python ``program`` to, its SPECS on the
    arguments (what a JAX capture or an exported ``.mlir`` file holds)."""
    return _lowered(program, order).as_text(debug_info=True)


def placement(shape, spec_dims, order, axes: dict[str, int] = AXES) -> dict[int, list]:
    """Device id -> ``[[start, stop], ...]`` of its shard, as JAX places a
    ``NamedSharding`` of ``spec_dims`` (axes per dim) on the mesh over devices ``order``."""
    from jax.sharding import NamedSharding, PartitionSpec

    entries = [tuple(d) if len(d) > 1 else (d[0] if d else None) for d in spec_dims]
    sharding = NamedSharding(jax_mesh(order, axes), PartitionSpec(*entries))
    out = {}
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        out[device.id] = [
            [s.start or 0, n if s.stop is None else s.stop]
            for s, n in zip(index, shape, strict=True)
        ]
    return out


def write_capture(
    path: Path, text: str, mesh: dict[str, int], order=ORDER, name: str = "step"
) -> Path:
    """A capture file at ``path`` of the module ``text`` on ``mesh`` laid out in ``order``."""
    from shardscope.backend.program.capture_file import Capture, CapturedFunction
    from shardscope.backend.session.persistence import write_json

    function = CapturedFunction(
        name,
        f"jit_{name}",
        text,
        text.count("\n"),
        dict(mesh),
        None,
        None,
        1,
        device_order=list(order),
    )
    write_json(path, Capture(["python", "t.py"], len(order), "finished", [function]).to_json())
    return path
