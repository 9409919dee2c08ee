"""The tests mirror the source tree: ``app/cli/main.py`` is tested in ``tests/app/cli/test_main.py``."""

from tests.support.inputs import REPO

ROOMS = ("app", "backend", "viewers")


def _modules() -> set[str]:
    return {
        str(path.relative_to(REPO))
        for room in ROOMS
        for path in (REPO / room).rglob("*.py")
        if path.name != "__init__.py"
    }


def _tested() -> set[str]:
    out = set()
    for room in ROOMS:
        for path in (REPO / "tests" / room).rglob("test_*.py"):
            folder = path.parent.relative_to(REPO / "tests")
            out.add(str(folder / path.name.removeprefix("test_")))
    return out


def test_every_module_has_its_test_file():
    missing = sorted(_modules() - _tested())
    assert not missing, "add tests/<folder>/test_<module>.py for: " + ", ".join(missing)


def test_every_test_file_names_a_module():
    orphans = sorted(_tested() - _modules())
    assert not orphans, "no module of that name for the tests of: " + ", ".join(orphans)
