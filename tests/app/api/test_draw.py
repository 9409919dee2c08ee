"""Drawing a saved session's graph to SVG, offscreen, in its own process."""

import os
import subprocess
import sys

import pytest

from shardscope.app.api.inspection import inspect


def _double_sin(x):
    import jax.numpy as jnp

    return jnp.sin(x) * 2


@pytest.mark.slow
def test_the_worker_draws_the_propagated_graph(tmp_path):
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    result = inspect(
        _double_sin,
        jax.ShapeDtypeStruct((16, 8), jnp.float32),
        mesh={"data": 4},
        in_shardings=(P("data", None),),
    )
    session = result.save(tmp_path / "s.json")
    out = tmp_path / "g.svg"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, "-m", "shardscope.app.api.draw", str(session), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    svg = out.read_text()
    assert svg.startswith("<?xml") and "<svg" in svg
    # The graph names the argument and the ops.
    assert ">x<" in svg or "x" in svg.split("<svg", 1)[1]
