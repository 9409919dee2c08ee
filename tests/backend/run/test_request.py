"""``RunRequest``: one frozen run, and which requests ask for several hosts."""

import dataclasses

import pytest

from shardscope.backend.run.request import ProgramFile, RunRequest


def _file(tmp_path):
    return ProgramFile(tmp_path / "prog.py", {}, name="prog", source="prog.py", kind="python")


def test_a_request_cannot_be_changed_once_made(tmp_path):
    request = RunRequest(_file(tmp_path), runs=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.runs = 3
    again = dataclasses.replace(request, runs=3)
    assert (request.runs, again.runs) == (2, 3) and again.program is request.program


@pytest.mark.parametrize(
    ("hosts", "dcn", "several"),
    [(None, None, False), (1, None, False), (2, None, True), (None, "data=2", True)],
)
def test_a_request_on_hosts_asks_for_more_than_one_or_for_axes_across_them(
    tmp_path, hosts, dcn, several
):
    assert RunRequest(_file(tmp_path), hosts=hosts, dcn=dcn).on_hosts is several


def test_a_request_leaves_the_seed_to_the_inputs_unless_given(tmp_path):
    assert RunRequest(_file(tmp_path)).seed is None
    assert RunRequest(_file(tmp_path), seed=7).seed == 7
