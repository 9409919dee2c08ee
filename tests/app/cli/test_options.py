"""Options shared by the commands that load a program: PROGRAM, --mesh, --spec, --timeout."""

import argparse

import pytest

from shardscope.app.cli.options import (
    add_program_options,
    parse_spec_args,
    positive_number,
    timeout_seconds,
)
from shardscope.backend.errors import SpecError
from shardscope.backend.program.load import DEFAULT_TIMEOUT
from shardscope.backend.sharding.spec import Spec, parse_spec


def test_spec_items_become_specs_by_name():
    specs = parse_spec_args(["x=data,_", " params['w1'] =_,data+model?", "result[0]="])
    assert specs == {
        "x": Spec.of("data", None),
        "params['w1']": parse_spec("_,data+model?"),
        "result[0]": Spec(),
    }
    assert list(specs) == ["x", "params['w1']", "result[0]"]


def test_a_later_item_for_the_same_name_wins():
    assert parse_spec_args(["x=data,_", "x=_,model"]) == {"x": Spec.of(None, "model")}


@pytest.mark.parametrize("item", ["x", "=data,_", "  =data"])
def test_an_item_without_a_name_is_a_one_line_error_with_an_example(item):
    with pytest.raises(SpecError) as info:
        parse_spec_args([item])
    message = str(info.value)
    assert message == f'--spec {item!r} is not NAME=SPEC; write e.g. --spec "x=data,_"'


def test_a_malformed_spec_is_the_spec_parsers_error():
    with pytest.raises(SpecError, match="bad axis name 'da ta'") as info:
        parse_spec_args(["x=da ta,_"])
    assert "\n" not in str(info.value)


def test_program_options_and_their_defaults():
    parser = argparse.ArgumentParser()
    add_program_options(parser)
    args = parser.parse_args(["example:mlp"])
    assert (args.program, args.mesh, args.spec, args.timeout) == (
        "example:mlp",
        None,
        [],
        DEFAULT_TIMEOUT,
    )
    args = parser.parse_args(
        ["m.py", "--mesh", "a=2", "--spec", "x=a", "--spec", "y=_", "--timeout", "5"]
    )
    assert (args.mesh, args.spec, args.timeout) == ("a=2", ["x=a", "y=_"], 5.0)


def test_the_timeout_help_is_the_commands_own():
    parser = argparse.ArgumentParser()
    add_program_options(parser, timeout_help="seconds allowed to load and propagate")
    assert "seconds allowed to load and propagate" in parser.format_help()


@pytest.mark.parametrize("text", ["-5", "0", "nan", "inf", "-inf", "x", ""])
def test_positive_number_refuses_what_is_not_a_finite_number_above_zero(text):
    with pytest.raises(argparse.ArgumentTypeError, match="give e.g. 1.5"):
        positive_number(text)


def test_positive_number_and_timeout_read_numbers():
    assert positive_number("2.5") == 2.5
    assert timeout_seconds("1e3") == 1000.0
    with pytest.raises(argparse.ArgumentTypeError, match="at most"):
        timeout_seconds("1e308")


def test_hardware_option_names_the_profiles_and_checks_the_name():
    import argparse

    from shardscope.app.cli.options import add_hardware_option, hardware_profile
    from shardscope.backend.errors import ShardscopeError

    parser = argparse.ArgumentParser()
    add_hardware_option(parser)
    assert "h100" in parser.format_help() and "tpu-v5e" in parser.format_help()
    assert hardware_profile(parser.parse_args([])).name == "tpu-v5e"
    assert hardware_profile(parser.parse_args(["--hardware", "h200"])).name == "h200"
    with pytest.raises(ShardscopeError, match="choose one of tpu-v5e, tpu-v5p"):
        hardware_profile(parser.parse_args(["--hardware", "H100 "]))


def _mesh_args(*argv):
    parser = argparse.ArgumentParser()
    add_program_options(parser)
    return parser.parse_args(["p.json", *argv])


def _program(mesh, order=None):
    from types import SimpleNamespace

    return SimpleNamespace(mesh=mesh, device_order=order)


TORCH_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


def test_the_programs_own_device_order_applies_to_a_mesh_of_as_many_devices():
    from shardscope.app.cli.options import program_mesh

    own = _program({"data": 4, "model": 2}, TORCH_ORDER)
    assert program_mesh(_mesh_args(), own) is None  # the program's own mesh, in its order
    same = program_mesh(_mesh_args("--mesh", "a=8"), own)
    assert (same.describe(), same.device_order) == ("a=8", TORCH_ORDER)
    other = program_mesh(_mesh_args("--mesh", "a=4"), own)
    assert other.device_order == (0, 1, 2, 3)
    given = program_mesh(_mesh_args("--mesh", "a=2,b=4", "--device-order", "7,6,5,4,3,2,1,0"), own)
    assert given.device_order == (7, 6, 5, 4, 3, 2, 1, 0)
    alone = program_mesh(_mesh_args("--device-order", "1,0,2,3,4,5,6,7"), own)
    assert (alone.shape, alone.device_order) == ({"data": 4, "model": 2}, (1, 0, 2, 3, 4, 5, 6, 7))


@pytest.mark.parametrize(
    ("argv", "program", "message"),
    [
        (["--device-order", "0,1"], _program({"data": 4}), "has 2 ids but the mesh has 4"),
        (["--device-order", "0,1"], _program(None), "give one with --mesh"),
        (["--device-order", "0,0"], _program({"data": 2}), "repeats [0]"),
        (["--device-order", "0,-1"], _program({"data": 2}), "is not 0..N-1"),
        (["--device-order", "1.0,0"], _program({"data": 2}), "is not a list of integers"),
        (["--mesh", "a=2", "--device-order", "0;1"], None, "is not a list of integers"),
    ],
)
def test_a_bad_device_order_is_one_line_naming_the_fix(argv, program, message):
    from shardscope.app.cli.options import given_mesh, program_mesh
    from shardscope.backend.errors import MeshError

    args = _mesh_args(*argv)
    with pytest.raises(MeshError) as info:
        given_mesh(args)
        program_mesh(args, program)
    assert message in str(info.value) and "\n" not in str(info.value)
