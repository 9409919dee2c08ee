"""The torch_xla half of the capture hook: it waits for torch_xla, reads the user's calls
as written, and tells the user's frames from the libraries'. Run with torch_xla, it is
checked end to end in tests/backend/program/test_torch_capture.py."""

import os
import subprocess
import sys
import types

import pytest

from shardscope.backend.program.capture import SITE
from tests.support.capture_site import load_site_module


@pytest.fixture
def hook(monkeypatch):
    monkeypatch.delenv("SHARDSCOPE_CAPTURE_DIR", raising=False)
    return load_site_module("_shardscope_torch", monkeypatch)


def _frame_at(path, line_text):
    """A frame whose code is ``path`` and whose current line is ``line_text``."""
    path.write_text("x = 1\n" + line_text + "\n")
    code = compile("import sys\nframe = sys._getframe()\n", str(path), "exec")
    scope: dict = {}
    exec(code, scope)
    frame = scope["frame"]
    return types.SimpleNamespace(f_code=frame.f_code, f_lineno=2)


def test_the_tensor_is_read_as_the_call_writes_it(hook, tmp_path):
    frame = _frame_at(
        tmp_path / "s.py", 'xs.mark_sharding(model.block.qkv.weight, mesh, ("model", None))'
    )
    assert hook._call_argument(frame, "mark_sharding") == "model.block.qkv.weight"
    frame = _frame_at(tmp_path / "t.py", "mark_sharding(batch['x'][0], mesh, (0, None))")
    assert hook._call_argument(frame, "mark_sharding") == "batch['x'][0]"
    frame = _frame_at(tmp_path / "u.py", "y = f(")
    assert hook._call_argument(frame, "mark_sharding") is None


def test_library_frames_are_the_installed_packages_and_the_hooks_own(hook, tmp_path):
    assert hook._is_library("/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py")
    assert hook._is_library(str(SITE / "_shardscope_torch.py"))
    assert hook._is_library("<frozen runpy>")
    # a user's own folder named torch is the user's
    assert not hook._is_library(str(tmp_path / "torch" / "train.py"))


def test_specs_and_meshes_are_recorded_as_plain_json(hook):
    assert hook._spec_json(("data", None, ("x", "y"), 1)) == ["data", None, ["x", "y"], 1]
    mesh = types.SimpleNamespace(mesh_shape=(2, 2), axis_names=("a", "b"), device_ids=[0, 2, 1, 3])
    assert hook._mesh_json(mesh) == {
        "shape": [2, 2],
        "axis_names": ["a", "b"],
        "device_ids": [0, 2, 1, 3],
    }
    assert hook._mesh_json(None) is None


def test_without_a_capture_nothing_is_watched(hook):
    before = list(sys.meta_path)
    hook.install()
    assert sys.meta_path == before


def test_a_hooked_python_imports_everything_else_as_before(tmp_path):
    env = dict(os.environ, SHARDSCOPE_CAPTURE_DIR=str(tmp_path), PYTHONPATH=str(SITE))
    code = "import json, email.mime.text; print(json.dumps([1]))"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "[1]"
    # no torch_xla imported: no record of it
    assert not (tmp_path / "torch.json").exists()
