"""Every text form of one sharding side by side: JAX, Shardy, HLO and its kind."""

from __future__ import annotations

from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.jax_text import jax_spec_text
from shardscope.backend.sharding.kinds import sharding_kind
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.sdy_text import sdy_sharding_text
from shardscope.backend.sharding.spec import Spec


def sharding_texts(mesh: Mesh, spec: Spec, ndim: int) -> dict[str, str]:
    """The ``jax``, ``sdy``, ``hlo`` and ``kind`` texts of ``spec`` over ``mesh``.

    The HLO text numbers devices by mesh position, as JAX prints it. Raises the
    backend's errors (SpecError, MeshError) when the spec does not fit the mesh or rank.
    """
    # The kind first: its checks decide which error a spec with several faults reports.
    kind = sharding_kind(mesh, spec, ndim)
    return {
        "jax": jax_spec_text(spec, ndim),
        "sdy": sdy_sharding_text(mesh, spec, ndim),
        "hlo": hlo_sharding_text(mesh, spec, ndim),
        "kind": kind.describe(),
    }
