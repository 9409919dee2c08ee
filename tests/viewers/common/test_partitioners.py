"""The window names the two sides of the GSPMD comparison after the program's
partitioners: plain Shardy and GSPMD for JAX, whose each is for a torch_xla capture."""

from dataclasses import dataclass

from shardscope.viewers.common.partitioners import JAX, Partitioners, own_compile, partitioners


@dataclass
class _Program:
    framework: str
    partitioner: str


def test_a_jax_program_reads_shardy_and_gspmd():
    names = partitioners(_Program("jax", "shardy"))
    assert names == JAX == partitioners(None)
    assert not names.foreign
    assert (names.shardy, names.gspmd, names.gspmd_compile) == ("Shardy", "GSPMD", "GSPMD")
    assert names.title == "GSPMD vs Shardy"
    assert names.compiled("shardscope") == names.compiled(None) == "Shardy"


def test_a_torch_xla_capture_says_whose_each_side_is():
    names = partitioners(_Program("torch_xla", "gspmd"))
    assert names == Partitioners("torch_xla", "gspmd") and names.foreign
    assert names.shardy == "Shardy (shardscope's comparison)"
    assert names.gspmd == "GSPMD (torch_xla's partitioner)"
    assert names.gspmd_compile == "GSPMD (shardscope's recompile)"
    assert names.title == "GSPMD (torch_xla) vs Shardy (shardscope)"
    # the capture as the script ran it: torch_xla's own compile; an edit: shardscope's
    assert names.compiled("torch_xla") == "torch_xla (GSPMD)"
    assert names.compiled("shardscope") == names.shardy


def test_only_the_frameworks_own_compile_is_its_own():
    assert own_compile("torch_xla")
    assert not own_compile("shardscope") and not own_compile(None)
