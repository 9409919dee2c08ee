"""The capture hook's modules, loaded as the user's Python loads them: from the hook's
folder on ``sys.path``, under a name of the test's own."""

from __future__ import annotations

import importlib.util

from shardscope.backend.program.capture import SITE


def load_site_module(name: str, monkeypatch):
    """The hook's module ``name`` (``_shardscope_torch_names``), freshly executed."""
    monkeypatch.syspath_prepend(str(SITE))
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", SITE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
