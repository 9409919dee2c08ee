"""Hypothesis strategies and JAX counterparts shared by the sharding-core tests."""

import math

import jax
import numpy as np
from hypothesis import strategies as st
from jax.sharding import Mesh as JaxMesh

from shardscope.backend.sharding.mesh import AxisType, Mesh, MeshAxis
from shardscope.backend.sharding.spec import Spec

DEVICES = {d.id: d for d in jax.devices()}
TYPES = [AxisType.AUTO, AxisType.EXPLICIT, AxisType.MANUAL]


@st.composite
def mesh_spec_rank(draw, max_devices: int = 64, manual: bool = False):
    """A random mesh (1-4 axes, device order, axis types), a spec with tuples, and a rank.

    With ``manual``, axes the spec does not use may be Manual (JAX rejects a manual axis
    inside a spec).
    """
    n_axes = draw(st.integers(1, 4))
    sizes, budget = [], max_devices
    for _ in range(n_axes):
        size = draw(st.sampled_from([s for s in (1, 2, 3, 4, 8) if s <= budget]))
        sizes.append(size)
        budget //= size
    names = draw(st.permutations(["a", "b", "c", "d"]))[:n_axes]
    n = math.prod(sizes)
    order = draw(st.one_of(st.just(list(range(n))), st.permutations(range(n))))
    rank = draw(st.integers(0, 4))
    used = draw(st.permutations(names))
    where = [draw(st.integers(-1, rank - 1)) if rank else -1 for _ in used]
    dims = [tuple(a for a, w in zip(used, where, strict=True) if w == i) for i in range(rank)]
    last = max([i + 1 for i, d in enumerate(dims) if d] or [0])
    spec = Spec.of(*dims[: draw(st.integers(last, rank))])
    pool = TYPES if manual else TYPES[:2]
    types = tuple(
        draw(st.sampled_from(pool)) if nm not in spec.used_axes else AxisType.AUTO for nm in names
    )
    mesh = Mesh(
        tuple(MeshAxis(nm, s) for nm, s in zip(names, sizes, strict=True)), tuple(order), types
    )
    return mesh, spec, rank


def jax_mesh(mesh: Mesh) -> JaxMesh:
    """The same mesh over this process's fake CPU devices, in the mesh's device order."""
    devs = np.array([DEVICES[i] for i in mesh.device_order], dtype=object)
    return JaxMesh(devs.reshape(mesh.axis_sizes), mesh.axis_names, axis_types=mesh._jax_types())
