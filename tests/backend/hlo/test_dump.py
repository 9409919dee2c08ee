"""HLO dumps: the options that ask for them and the module after a pass."""

import pytest

from shardscope.backend.hlo.dump import dump_options, dumped_after


def test_dump_options_name_the_folder_and_the_pass(tmp_path):
    assert dump_options(tmp_path, "sharding-propagation") == {
        "xla_dump_to": str(tmp_path),
        "xla_dump_hlo_pass_re": "sharding-propagation",
        "xla_dump_hlo_as_text": True,
    }


def test_the_last_module_after_the_pass_is_read(tmp_path):
    for name, text in [
        ("module_0001.jit_f.0000.before_optimizations.txt", "before"),
        ("module_0001.jit_f.0003.sharding-propagation.after_sharding-propagation.txt", "one"),
        ("module_0001.jit_f.0007.sharding-propagation.after_sharding-propagation.txt", "two"),
    ]:
        (tmp_path / name).write_text(text)
    assert dumped_after(tmp_path, "sharding-propagation") == "two"


def test_no_module_after_the_pass_is_an_error(tmp_path):
    with pytest.raises(RuntimeError, match="XLA wrote no module after sharding-propagation"):
        dumped_after(tmp_path, "sharding-propagation")


def test_a_pipe_where_a_dump_belongs_is_an_error_not_a_wait(tmp_path):
    import os

    from shardscope.backend.errors import ShardscopeError

    os.mkfifo(tmp_path / "module_0001.jit_f.0003.sp.after_sharding-propagation.txt")
    with pytest.raises(ShardscopeError, match="is a pipe"):
        dumped_after(tmp_path, "sharding-propagation")
