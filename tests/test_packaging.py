"""The installed package: one top-level name, ``shardscope``, holding every folder of ours."""

import tomllib

from tests.support.inputs import REPO


def _config():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_installed():
    config = _config()
    on_disk = {"shardscope.assets", "shardscope.assets.examples"}
    for top in ("app", "backend", "viewers"):
        for init in (REPO / top).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO).parts
            on_disk.add(".".join(("shardscope", *parts)))
    assert set(config["packages"]) == on_disk


def test_one_top_level_name():
    config = _config()
    assert {name.split(".")[0] for name in config["packages"]} == {"shardscope"}
    assert all(name.startswith("shardscope.") for name in config["package-dir"])


def test_examples_ship_with_the_package():
    config = _config()
    # a listed package installs every .py file in its folder
    assert any((REPO / "assets" / "examples").glob("*.py"))
    assert config["package-dir"]["shardscope.assets"] == "assets"
    assert "shardscope.assets.examples" in config["packages"]
