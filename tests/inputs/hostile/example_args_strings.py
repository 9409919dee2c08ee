"""EXAMPLE_ARGS holds strings."""


def f(x):
    return x


PROGRAM = f
EXAMPLE_ARGS = ("a", "b")
