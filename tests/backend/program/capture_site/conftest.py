"""Captures of the torch_xla scripts in tests/inputs/torch, each beside a plain run of the
same script, made once for the tests of this folder that need torch_xla."""

import pytest

from tests.support.torch_scripts import SCRIPTS, capture, plain_run


@pytest.fixture(scope="session")
def torch_runs(tmp_path_factory):
    """script name -> (capture file, its summary, the plain run's compiled modules); made
    for a script the first time a test asks for it."""
    made: dict = {}

    def get(name: str):
        if name not in made:
            folder = tmp_path_factory.mktemp(name)
            out = folder / f"{name}.json"
            summary = capture(SCRIPTS / f"{name}.py", out)
            plain = plain_run(SCRIPTS / f"{name}.py", folder / "plain")
            made[name] = (out, summary, plain)
        return made[name]

    return get
