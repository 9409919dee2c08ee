"""Defines a program that hangs when traced."""

import time

import jax.numpy as jnp


def f(x):
    time.sleep(10_000)
    return x


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4, 4)),)
