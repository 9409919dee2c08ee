"""The installed package: one top-level name, ``shardscope``, holding every folder of ours."""

import shutil
import subprocess
import sys
import tomllib
import zipfile

import pytest

from tests.support.inputs import REPO


def _config():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_installed():
    config = _config()
    on_disk = {"shardscope", "shardscope.assets", "shardscope.assets.examples"}
    for top in ("app", "backend", "viewers"):
        for init in (REPO / top).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO).parts
            on_disk.add(".".join(("shardscope", *parts)))
    assert set(config["packages"]) == on_disk


def test_the_top_level_package_is_the_repositorys_init():
    # ``import shardscope`` runs the repository's __init__.py (``shardscope.inspect``).
    config = _config()
    assert config["package-dir"]["shardscope"] == "."
    assert (REPO / "__init__.py").is_file()


def test_one_top_level_name():
    config = _config()
    assert {name.split(".")[0] for name in config["packages"]} == {"shardscope"}
    assert all(name.split(".")[0] == "shardscope" for name in config["package-dir"])


def test_examples_ship_with_the_package():
    config = _config()
    # a listed package installs every .py file in its folder
    assert any((REPO / "assets" / "examples").glob("*.py"))
    assert config["package-dir"]["shardscope.assets"] == "assets"
    assert "shardscope.assets.examples" in config["packages"]


@pytest.mark.slow
def test_built_wheel_holds_only_shardscope(tmp_path):
    # Built from a copy so the checkout gets no build/ folder; without build isolation so
    # no index is needed (setuptools is a test dependency).
    src = tmp_path / "src"
    for name in ("app", "backend", "viewers", "assets"):
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "__init__.py"):
        shutil.copy(REPO / name, src / name)
    out = tmp_path / "wheel"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = out.glob("shardscope-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"shardscope"}
    assert "shardscope/backend/propagation/propagate.py" in names
    for hook in ("sitecustomize.py", "_shardscope_torch.py", "_shardscope_hosts.py"):
        assert f"shardscope/backend/program/capture_site/{hook}" in names
    # ``import shardscope; shardscope.inspect``: the top-level package, and only once.
    assert "shardscope/__init__.py" in names
    assert "shardscope/app/api/inspection.py" in names
    assert not any(n.startswith("shardscope/tests/") for n in names)
    assert "shardscope/assets/examples/mlp.py" in names
