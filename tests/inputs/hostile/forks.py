"""Forks a child that would outlive the load, then defines a working program."""

import os
import time

import jax.numpy as jnp

if os.fork() == 0:
    time.sleep(300)
    os._exit(0)


def f(x):
    return jnp.tanh(x)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4, 4)),)
