"""``backend.cost.price``: compiled collectives of real compiles on fake CPU devices, priced
by the ring, pairwise and one-hop formulas, against numbers worked out by hand."""

from __future__ import annotations

import dataclasses
import math

import pytest

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.cost.hardware import profile
from shardscope.backend.cost.price import FORMULAS, memory_fit, price, price_compiled
from shardscope.backend.run.compile import MEMORY_FIELDS
from tests.support.compile_oracle import loaded, lowered
from tests.support.inputs import PROGRAMS

F32 = 4


@pytest.fixture(scope="module")
def mlp():
    # data=4, model=2: layer2's contraction over model is one all-reduce of the (8, 16)
    # f32 piece each device holds, over groups {0,1}, {2,3}, ...
    return analyse(loaded("example:mlp"))


@pytest.fixture(scope="module")
def fsdp():
    # shard_map's all_gather of w (8, 16) and psum_scatter of its gradient, over 4 devices.
    return analyse(loaded(str(PROGRAMS / "compiled_fsdp.py")))


@pytest.fixture(scope="module")
def nested():
    # A gradient whose top-level all-reduces XLA combines into one.
    return analyse(loaded(str(PROGRAMS / "run_collectives_nested.py")))


def _only(result, kind):
    found = [c for c in result.compiled_collectives if c.kind == kind]
    assert len(found) == 1, [c.kind for c in result.compiled_collectives]
    return found[0]


def test_an_all_reduce_is_two_ring_passes(mlp):
    c = _only(mlp, "all-reduce")
    assert c.device_groups == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert c.result_bytes == 8 * 16 * F32 == 512
    cost = price_compiled(mlp.propagation, mlp.compile, "tpu-v5e").collectives[0]
    # N = 2, S = 512 B, B = 400 GBps / 4 ports, a = 1 us: 2(N-1)(a + S/(N B)).
    assert cost.seconds == pytest.approx(2 * 1 * (1e-6 + 512 / (2 * 100e9)), rel=1e-12)
    assert cost.bytes_per_device == 2 * 512 * 1 // 2 == c.bytes
    assert cost.link == "ICI" and cost.group_size == 2 and cost.runs_per_call == 1
    assert "N=2" in cost.formula and "S=512 B" in cost.formula


def test_an_all_gather_and_a_reduce_scatter_on_their_rings(fsdp):
    gather = _only(fsdp, "all-gather")
    scatter = _only(fsdp, "reduce-scatter")
    assert gather.result_bytes == 8 * 16 * F32  # the whole weight
    assert scatter.result_bytes == 2 * 16 * F32  # one device's quarter of the gradient
    pricing = price(fsdp.compiled_collectives, fsdp.memory, "h100")
    by_kind = {c.kind: c for c in pricing.collectives}
    a, b = 2e-6, 450e9  # NVLink: 900 GB/s both ways, a assumed
    assert by_kind["all-gather"].seconds == pytest.approx(3 * (a + 512 / (4 * b)), rel=1e-12)
    # On its input, 4 x 128 B per device: (N-1)(a + S/B) with S the result's 128 B.
    assert by_kind["reduce-scatter"].seconds == pytest.approx(3 * (a + 128 / b), rel=1e-12)
    assert by_kind["all-gather"].bytes_per_device == 512 * 3 // 4 == gather.bytes
    assert by_kind["reduce-scatter"].bytes_per_device == 128 * 3 == scatter.bytes
    assert {c.link for c in pricing.collectives} == {"NVLink"}


def test_the_bytes_agree_with_the_compiled_collectives(mlp, fsdp, nested):
    for result in (mlp, fsdp, nested):
        for name in ("tpu-v5e", "h200", "cpu"):
            pricing = price(result.compiled_collectives, result.memory, name)
            assert len(pricing.collectives) == len(result.compiled_collectives)
            for c, cost in zip(result.compiled_collectives, pricing.collectives, strict=True):
                assert cost.bytes_per_device == c.bytes, (c.kind, name)
                assert cost.kind == c.kind


@pytest.mark.parametrize(
    ("model", "link", "a", "b"),
    [(8, "NVLink", 2e-6, 450e9), (16, "InfiniBand", 5e-6, 50e9)],
)
def test_a_group_across_nodes_crosses_the_slow_link(model, link, a, b):
    # On h100 a node holds 8 GPUs: a group of 8 consecutive ids stays in one, one of 16
    # spans two and is priced on its InfiniBand share.
    result = analyse(loaded("example:mlp"), {"data": 2, "model": model})
    c = _only(result, "all-reduce")
    assert {len(g) for g in c.device_groups} == {model}
    s = 16 * 16 * F32  # 32 rows over data=2, 16 columns
    assert c.result_bytes == s
    cost = price_compiled(result.propagation, result.compile, "h100").collectives[0]
    assert cost.link == link
    assert cost.seconds == pytest.approx(2 * (model - 1) * (a + s / (model * b)), rel=1e-12)


def test_a_smaller_domain_moves_a_group_to_the_slow_link(mlp):
    # The same compiled groups {0,1}, ... against a profile whose domain is one device.
    one = dataclasses.replace(profile("tpu-v5e"), domain=1)
    cost = price(mlp.compiled_collectives, mlp.memory, one).collectives[0]
    assert cost.link == "DCN"
    assert cost.seconds == pytest.approx(2 * (10e-6 + 512 / (2 * 200e9 / 8 / 8)), rel=1e-12)


def test_a_collective_in_a_loop_costs_each_run(mlp):
    c = dataclasses.replace(mlp.compiled_collectives[0], runs_per_call=3)
    once = price([mlp.compiled_collectives[0]], mlp.memory, "tpu-v5e")
    thrice = price([c], mlp.memory, "tpu-v5e")
    assert thrice.collectives[0].seconds == once.collectives[0].seconds
    assert thrice.collectives[0].seconds_per_call == pytest.approx(3 * once.step_seconds)
    assert thrice.step_seconds == pytest.approx(3 * once.step_seconds)
    assert thrice.step_bytes == 3 * once.step_bytes == 3 * 512
    assert thrice.ops[0].seconds_per_call == pytest.approx(thrice.step_seconds)
    assert "x3 runs per call" in thrice.collectives[0].formula


def test_a_held_collective_is_counted_on_its_holder(mlp):
    c = dataclasses.replace(mlp.compiled_collectives[0], holder=2)
    pricing = price([c], mlp.memory, "tpu-v5e", {2: "while"})
    assert [(o.op, o.name, o.collectives) for o in pricing.ops] == [(2, "while", 1)]


def test_ops_share_a_combined_collective_and_add_up_to_the_step(nested):
    pricing = price_compiled(nested.propagation, nested.compile, "tpu-v5p")
    combined = [c for c in nested.compiled_collectives if c.operands > 1]
    assert combined
    ops = {o.op for o in pricing.ops}
    for c in combined:
        assert {t.op for t in c.tensors} <= ops
    assert sum(o.seconds_per_call for o in pricing.ops) == pytest.approx(pricing.step_seconds)
    assert abs(sum(o.bytes for o in pricing.ops) - pricing.step_bytes) <= len(pricing.ops)
    assert pricing.step_seconds == pytest.approx(
        sum(c.seconds * c.runs_per_call for c in pricing.collectives)
    )
    assert [o.seconds_per_call for o in pricing.ops] == sorted(
        (o.seconds_per_call for o in pricing.ops), reverse=True
    )


def _stats_of(compiled) -> dict[str, int]:
    """``compiled.memory_analysis()``'s figures by ``MEMORY_FIELDS`` name."""
    stats = compiled.memory_analysis()
    return {
        key: getattr(stats, "peak_memory_in_bytes" if key == "peak" else f"{key}_size_in_bytes")
        for key in MEMORY_FIELDS
    }


def test_memory_against_the_profile(mlp):
    fit = price_compiled(mlp.propagation, mlp.compile, "tpu-v5e").memory
    assert fit is not None and fit.fits
    # The figures are those of jax's own compile of the same program.
    own = _stats_of(lowered(loaded("example:mlp")).compile())
    assert (fit.argument, fit.output, fit.alias, fit.temp, fit.peak) == (
        own["argument"],
        own["output"],
        own["alias"],
        own["temp"],
        own["peak"],
    )
    held = own["argument"] + own["output"] - own["alias"] + own["temp"]
    assert fit.held == fit.needs == held > 0
    assert fit.text.startswith("fits in 16 GB: ") and fit.text.endswith("%")
    assert f"(needs {held} B per device: arguments + outputs + temporaries - aliased" in fit.line()
    assert "CPU buffer assignment" in fit.source and "estimate" in fit.source
    v5p = profile("tpu-v5p")
    gib = 2**30
    assert memory_fit({"temp": math.ceil(0.31 * 95 * gib)}, v5p).text == "fits in 95 GiB: 31%"
    over = memory_fit({"argument": 100 * gib, "temp": 20 * gib}, v5p)
    assert not over.fits and over.text == "does not fit: needs 120 GiB of 95 GiB"
    assert memory_fit(None, v5p) is None


@pytest.mark.parametrize("donate", [False, True])
def test_memory_is_judged_on_what_the_buffers_hold_not_on_xla_cpus_peak(donate):
    import jax
    import jax.numpy as jnp

    def step(w, x):
        return jnp.tanh(w @ x) @ x + jnp.sin(w @ x).sum()

    x = jax.ShapeDtypeStruct((256, 256), jnp.float32)
    jitted = jax.jit(step, donate_argnums=(0,) if donate else ())
    memory = _stats_of(jitted.lower(x, x).compile())
    assert memory["temp"] > 0 and (memory["alias"] > 0) == donate
    # XLA CPU's peak is the arguments and outputs, less aliased: the temporaries are out.
    assert memory["peak"] == memory["argument"] + memory["output"] - memory["alias"]
    held = memory["argument"] + memory["output"] - memory["alias"] + memory["temp"]
    v5e = profile("tpu-v5e")
    fit = memory_fit(memory, v5e)
    assert fit.held == fit.needs == held and fit.peak == memory["peak"]
    assert "leaves the temporaries out" in fit.line()
    # On a device with room for the peak but not for the temporaries too, it does not fit.
    small = dataclasses.replace(v5e, memory_bytes=float(memory["peak"] + memory["temp"] // 2))
    assert not memory_fit(memory, small).fits
    assert memory_fit(memory, dataclasses.replace(small, memory_bytes=float(held))).fits


def test_a_peak_above_what_the_buffers_hold_is_judged_and_named():
    fit = memory_fit({"argument": 100, "output": 50, "temp": 10, "peak": 400}, profile("h100"))
    assert fit.held == 160 and fit.needs == 400 and "XLA's peak, above 160 B" in fit.measure
    assert "(no peak given)" in memory_fit({"argument": 100}, profile("h100")).measure


def test_the_result_carries_its_pricing_as_cost(mlp):
    pricing = price_compiled(mlp.propagation, mlp.compile, "h200")
    cost = mlp.with_parts(pricing=pricing).to_json()["cost"]
    assert cost["hardware"] == "h200" and cost["formulas"] == FORMULAS
    assert cost["collectives"][0]["seconds"] == pricing.collectives[0].seconds
    assert cost["memory"]["text"].startswith("fits in 141 GB")
    assert any("latency" in a for a in cost["assumed"])


def test_nothing_compiled_costs_nothing(mlp):
    pricing = price([], None, None)
    assert pricing.hardware == "tpu-v5e" and pricing.step_seconds == 0 and pricing.memory is None
