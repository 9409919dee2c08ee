"""The script's own names for the tensors a torch_xla graph reads: module paths without
wrappers' segments, rooted at the script's outermost variable (or a trainer's attribute),
optimizer state indexed by its parameter, plain variables by the innermost frame; and,
with torch_xla, every argument of real scripts' graphs named, each graph as the script
named it."""

import importlib.util
import json
import types
from pathlib import Path

import pytest

from shardscope.backend.program.capture import SITE
from shardscope.backend.program.load import load_program
from tests.support.torch_scripts import SCRIPTS, needs_torch


@pytest.fixture
def names():
    spec = importlib.util.spec_from_file_location(
        "_names_under_test", SITE / "_shardscope_torch_names.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Tensor:
    grad = None


class Module:
    def __init__(self, **parts):
        self.parts = parts

    def named_parameters(self, remove_duplicate=False, prefix=""):
        for name, part in self.parts.items():
            path = f"{prefix}.{name}" if prefix else name
            if isinstance(part, Module):
                yield from part.named_parameters(prefix=path)
            else:
                yield path, part

    def named_buffers(self, remove_duplicate=False):
        return iter(())


class Optimizer:
    def __init__(self, params):
        self.param_groups = [{"params": params}]
        self.state = {}


FAKE_TORCH = types.SimpleNamespace(
    nn=types.SimpleNamespace(Module=Module),
    optim=types.SimpleNamespace(Optimizer=Optimizer),
    Tensor=Tensor,
)


def _is_tensor(value) -> bool:
    return isinstance(value, Tensor)


class Trainer:
    """An object of the script's own class, holding the model and optimizer."""


def test_wrappers_segments_are_left_out_of_a_module_path(names):
    path = "_orig_module.layers.0._orig_module.q_proj._orig_mod.weight"
    assert names.without_wrappers(path) == "layers.0.q_proj.weight"
    assert names.without_wrappers("_fsdp_wrapped_module.module.w") == "module.w"


def test_a_trainers_model_and_optimizer_are_named_from_its_attributes(names):
    weight, moment = Tensor(), Tensor()
    model = Module(_orig_module=Module(layers=Module(**{"0": Module(weight=weight)})))
    optimizer = Optimizer([weight])
    optimizer.state[weight] = {"exp_avg": moment, "step": 3}
    trainer = Trainer()
    trainer.model, trainer.optimizer = model, optimizer
    found = dict(
        (id(t), n) for n, t in names.named_tensors(FAKE_TORCH, [{"self": trainer}], _is_tensor)
    )
    assert found[id(weight)] == "self.model.layers.0.weight"
    assert found[id(moment)] == "self.optimizer.state[self.model.layers.0.weight]['exp_avg']"


def test_the_outermost_variable_names_a_model_and_the_innermost_a_plain_tensor(names):
    weight, batch = Tensor(), Tensor()
    llama = Module(model=Module(w=weight))
    script = {"llama": llama, "batch": batch}
    helper = {"model": llama, "x": batch}
    found = {id(t): n for n, t in names.named_tensors(FAKE_TORCH, [script, helper], _is_tensor)}
    assert found[id(weight)] == "llama.model.w"
    assert found[id(batch)] == "x"


def test_objects_of_librarys_classes_are_not_searched(names):
    assert names._held(types.SimpleNamespace(a=1)) == []
    trainer = Trainer()
    trainer.batch = 1
    assert names._held(trainer) == [("batch", 1)]


# --- with torch_xla: the scripts' own graphs -------------------------------------------

SCRIPT_NAMES = ("megatron_step", "fsdpv2_trainer", "steptrace_checkpoint", "llama_fsdp_tp")


@needs_torch
@pytest.mark.slow
@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_every_argument_of_a_scripts_graphs_is_named(torch_runs, name):
    out, summary, _ = torch_runs(name)
    for function in summary["functions"]:
        program = load_program(f"{out}#{function['name']}")
        unnamed = [a for a in program.arg_names if a.startswith("arg")]
        assert not unnamed, (function["name"], unnamed)
        assert not [a for a in program.arg_names if "_orig_module" in a]


@needs_torch
@pytest.mark.slow
def test_a_trainers_graph_is_named_as_torch_xla_compile_names_it_at_the_steps_call(torch_runs):
    out, summary, _ = torch_runs("fsdpv2_trainer")
    graphs = {f["name"]: f for f in summary["functions"]}
    # the first step's graph builds AdamW's state; the later steps run the second one
    assert list(graphs) == ["decoder_step_fn", "decoder_step_fn.2"]
    assert graphs["decoder_step_fn.2"]["calls"] == 3
    script = (SCRIPTS / "fsdpv2_trainer.py").read_text().splitlines()
    for graph in graphs.values():
        assert Path(graph["file"]).name == "fsdpv2_trainer.py"
        assert "self.compiled_step_fn(input_ids)" in script[graph["line"] - 1]
    names = load_program(f"{out}#decoder_step_fn.2").arg_names
    assert "input_ids" in names
    assert "self.model.layers.0.q_proj.weight" in names
    assert "self.optimizer.state[self.model.layers.0.q_proj.weight]['exp_avg']" in names
    assert json.loads(out.read_text())["framework"] == "torch_xla"
    # each weight sharded by FSDPv2's wrapper, at the line that wraps the model
    program = load_program(f"{out}#decoder_step_fn.2")
    wrap = next(i for i, line in enumerate(script, 1) if "self.model = FSDPv2(" in line)
    by = program.sharded_by["self.model.layers.0.q_proj.weight"]
    assert by == f"FSDPv2 (its parameters) at fsdpv2_trainer.py:{wrap}"


@needs_torch
@pytest.mark.slow
def test_a_model_a_helper_shards_is_named_by_the_scripts_variable_with_the_call_that_sharded_it(
    torch_runs,
):
    out, summary, _ = torch_runs("llama_fsdp_tp")
    program = load_program(f"{out}#sync2")
    names = program.arg_names
    # the helper calls the model ``model`` and each weight ``param``; the script, ``llama``
    assert "llama.model.layers.0.self_attn.q_proj.weight" in names
    assert not [n for n in names if n.startswith(("model.", "param"))]
    script = (SCRIPTS / "llama_fsdp_tp.py").read_text().splitlines()
    mark = next(i for i, line in enumerate(script, 1) if "xs.mark_sharding(param" in line)
    by = program.sharded_by["llama.model.layers.0.self_attn.q_proj.weight"]
    assert by == f"xs.mark_sharding at llama_fsdp_tp.py:{mark}"
    assert "llama.model.norm.weight" not in program.sharded_by  # no rule matched it
