"""Sharding kinds both ways (HLO's meaning, PyTorch/XLA's rule) and their one-line text."""

import pytest

from shardscope.backend.sharding.kinds import ShardingKind, hlo_kind, sharding_kind
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import parse_spec


def test_hlo_kinds_of_special_forms():
    assert hlo_kind("{maximal device=0}") == "maximal"
    assert hlo_kind("{replicated}") == "replicated"
    assert hlo_kind("{devices=[2,1,4]<=[8] last_tile_dim_replicate}") == "partially replicated"
    assert hlo_kind("{devices=[2,4]<=[8]}") == "tiled"


@pytest.mark.parametrize(
    ("mesh", "spec", "hlo", "torch"),
    [
        ("data=4,model=2", "_,data", "partially replicated", "partial"),
        ("data=4,model=2", "data,model", "tiled", "tiled"),
        ("data=4,model=2", "_,_", "replicated", "replicated"),
        ("data=1,model=8", "_,model", "tiled", "partial"),
        ("data=4,model=2,x=1", "data,model+x", "tiled", "tiled"),
        ("data=8,model=1", "model,_", "replicated", "partial"),
        ("x=1", "x", "replicated", "maximal"),
    ],
)
def test_kinds_both_ways(mesh, spec, hlo, torch):
    kind = sharding_kind(parse_mesh(mesh), parse_spec(spec))
    assert (kind.hlo, kind.torch_xla) == (hlo, torch)
    assert kind.differs == ({"partially replicated": "partial"}.get(hlo, hlo) != torch)


def test_describe_names_pytorch_xla_only_where_it_differs():
    assert ShardingKind("tiled", "tiled").describe() == "tiled"
    assert ShardingKind("partially replicated", "partial").describe() == "partially replicated"
    assert ShardingKind("tiled", "partial").describe() == "tiled (PyTorch/XLA: partial)"
