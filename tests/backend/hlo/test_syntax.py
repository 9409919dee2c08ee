"""The HLO text patterns, on lines of a real compiled module."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from shardscope.backend.hlo.syntax import COMPUTATION, FRAME, HEAD, OP_NAME


def test_the_patterns_read_a_real_modules_lines():
    text = jax.jit(lambda x: jnp.sum(jnp.tanh(x))).lower(jnp.ones((4, 4))).compile().as_text()
    lines = text.splitlines()
    entry = next(line for line in lines if line.startswith("ENTRY"))
    assert COMPUTATION.match(entry)
    root = next(line for line in lines if line.strip().startswith("ROOT"))
    head = HEAD.match(root)
    assert head and head["root"] and head["name"]
    tanh = next(line for line in lines if OP_NAME.search(line) and "tanh" in line)
    assert OP_NAME.search(tanh)[1].endswith("tanh") and FRAME.search(tanh)
    assert HEAD.match("  %add.1 = f32[] add(%a, %b)")["root"] is None


def test_a_module_is_told_from_other_text():
    from shardscope.backend.hlo.syntax import is_hlo_module

    text = jax.jit(lambda x: x * 2).lower(jnp.ones((4,))).compile().as_text()
    assert is_hlo_module(text)
    assert not is_hlo_module("garbage\nnot hlo {{{\n")
    assert not is_hlo_module("HloModule")
