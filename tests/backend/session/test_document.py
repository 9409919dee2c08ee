"""The session document: program defaults, events on real changes, no Qt, cheap to import."""

import subprocess
import sys

import pytest

from shardscope.backend.cost.traffic import HostTraffic
from shardscope.backend.errors import SpecError
from shardscope.backend.gspmd.compare import GspmdComparison
from shardscope.backend.program.load import load_program
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.run.result import NotCompiled
from shardscope.backend.session.document import DEFAULT_MESH, Session
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import Spec, parse_spec
from tests.support.inputs import MLIR, REPO

ROOT = REPO
SESSION_MODULES = (
    "shardscope.backend.session.document",
    "shardscope.backend.session.edits",
    "shardscope.backend.session.display",
    "shardscope.backend.session.persistence",
    "shardscope.backend.session.find",
)


@pytest.fixture(scope="module")
def mlp():
    return load_program("example:mlp")


def test_program_brings_its_mesh_and_specs(mlp):
    s = Session()
    fired = {name: [] for name in ("source", "program", "mesh", "specs", "view", "propagation")}
    for name, seen in fired.items():
        getattr(s.events, name).connect(seen.append)
    s.set_program(mlp)
    assert s.source == "example:mlp" and s.program is mlp and s.graph is mlp.graph
    assert s.mesh == parse_mesh("data=4,model=2")
    x = mlp.graph.value_by_name("x").id
    assert s.spec(x) == Spec.of("data", None) and len(s.specs) == 3
    assert fired["source"] == ["example:mlp"] and fired["program"] == [mlp]
    assert fired["specs"] == [tuple(sorted(s.specs))]
    assert fired["view"] == [{}] and fired["propagation"] == [None]


def test_a_program_without_a_mesh_gets_the_default():
    s = Session()
    s.set_program(load_program(str(MLIR / "plain.mlir")))
    assert s.mesh == DEFAULT_MESH and not s.specs


def test_values_and_specs_need_a_program(mlp):
    s = Session()
    assert s.graph is None and s.program is None and s.propagation is None
    with pytest.raises(SpecError, match="no program is loaded"):
        s.value(0)
    s.set_program(mlp)
    with pytest.raises(SpecError, match="no tensor with id 999 in mlp"):
        s.value(999)
    assert s.value(3) is mlp.graph.values[3]


def test_specs_and_view_are_read_only(mlp):
    s = Session()
    s.set_program(mlp)
    with pytest.raises(TypeError):
        s.specs[0] = Spec()
    with pytest.raises(TypeError):
        s.view["frames"] = []


def test_set_mesh_without_prune_refuses_to_drop_axes(mlp):
    s = Session()
    s.set_program(mlp)
    before = (s.mesh, dict(s.specs))
    with pytest.raises(SpecError, match="uses axis 'model'"):
        s.set_mesh(parse_mesh("data=8"))
    assert (s.mesh, dict(s.specs)) == before
    assert not s.set_mesh(s.mesh)
    assert s.set_mesh(parse_mesh("data=2,model=4"))


def test_prune_keeps_openness_and_priority(mlp):
    s = Session()
    s.set_program(mlp)
    x = mlp.graph.value_by_name("x").id
    s.set_spec(x, parse_spec("data+model?@p1,_"))
    s.set_mesh(parse_mesh("data=8"), prune=True)
    assert s.spec(x) == parse_spec("data?@p1,_")


def test_specs_for_propagation_name_arguments(mlp):
    s = Session()
    s.set_program(mlp)
    s.set_spec(8, Spec.of(None, "model"))
    out = s.specs_for_propagation()
    assert out["x"] == Spec.of("data", None) and out[8] == Spec.of(None, "model")


def test_backend_imports_no_qt():
    code = (
        "import sys, importlib, pkgutil, backend\n"
        f"for m in {SESSION_MODULES!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'pyqtgraph'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_importing_the_session_is_cheap():
    """The program, graph and propagation types are annotations only: no jaxlib, no numpy."""
    code = (
        "import sys, importlib\n"
        f"for m in {SESSION_MODULES!r}:\n"
        "    importlib.import_module(m)\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'numpy')]\n"
        "rooms = ('program', 'propagation', 'gspmd')\n"
        "heavy += [m for m in sys.modules if m.split('.')[2:3] in ([r] for r in rooms)]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_set_compiled_fires_only_for_the_current_result(mlp):
    s = Session()
    s.set_program(mlp)
    fired = []
    s.events.compiled.connect(fired.append)
    first = propagate(mlp, s.mesh, s.specs_for_propagation(), strict=False)
    s.set_propagation(first)
    x = mlp.graph.value_by_name("x").id
    s.set_spec(x, Spec.of("data", "model"))  # the result goes stale
    s.set_compiled(first, NotCompiled("boom"))
    assert s.analysis is None
    second = propagate(mlp, s.mesh, s.specs_for_propagation(), strict=False)
    s.set_propagation(second)
    s.set_compiled(first, NotCompiled("boom"))  # an older compile's report
    assert fired == [] and s.analysis.compile is None
    s.set_compiled(second, NotCompiled("boom"))
    assert [a.propagation for a in fired] == [second]
    assert fired[0] is s.analysis and s.analysis.compile_error == "boom"


def test_the_analysis_keeps_each_steps_record_until_the_propagation_changes(mlp):
    s = Session()
    s.set_program(mlp)
    priced = []
    s.events.priced.connect(priced.append)
    result = propagate(mlp, s.mesh, s.specs_for_propagation(), strict=False)
    s.set_propagation(result)
    assert s.analysis.propagation is result and s.analysis.compile is None
    outcome = NotCompiled("too many devices", failed=False)
    s.set_compiled(result, outcome)
    traffic = HostTraffic(1, None)
    s.set_priced(result, traffic, None)
    s.set_priced(result, traffic, None)  # the same layout again: no event
    assert len(priced) == 1 and s.analysis.traffic is traffic
    assert s.analysis.compile is outcome and s.analysis.compile_error is None
    assert s.analysis.warnings == (*result.warnings, "too many devices")
    s.set_spec(mlp.graph.value_by_name("x").id, Spec.of("data", "model"))
    assert s.analysis is None


def test_gspmds_comparison_is_kept_beside_the_compile_of_the_same_result(mlp):
    s = Session()
    s.set_program(mlp)
    compared = []
    s.events.gspmd.connect(compared.append)
    result = propagate(mlp, s.mesh, s.specs_for_propagation(), strict=False)
    comparison = GspmdComparison([], [], ("traced again",))
    s.set_gspmd(result, comparison)  # not the session's result yet
    assert compared == []
    s.set_propagation(result)
    s.set_gspmd(result, comparison)
    assert [a.gspmd for a in compared] == [comparison]
    s.set_compiled(result, NotCompiled("boom"))
    assert s.analysis.gspmd is comparison and s.analysis.compile_error == "boom"
    assert s.analysis.warnings[-1] == "traced again"
