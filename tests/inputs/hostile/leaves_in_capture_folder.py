"""Leaves something hostile where a capture keeps its own files, as argv[1] says:
``record-fifo``, ``functions-fifo``, ``dump-fifo`` (a FIFO where the capture reads torch_xla's
record, the jitted functions' record, or a module of JAX's dump), ``record-deep``,
``functions-deep`` (JSON nested 200,000 deep there), or ``dump-device`` (a link to
/dev/zero as a dump)."""

import os
import sys

FOLDER = os.environ["SHARDSCOPE_CAPTURE_DIR"]
DUMP = os.environ["JAX_DUMP_IR_TO"]
KIND = sys.argv[1]
NAMES = {"record": "torch.json", "functions": "functions.json"}

what, how = KIND.split("-")
if what == "dump":
    os.makedirs(DUMP, exist_ok=True)
    path = os.path.join(DUMP, "jax_ir0_jit_f_compile.mlir")
else:
    path = os.path.join(FOLDER, NAMES[what])
if how == "fifo":
    os.mkfifo(path)
elif how == "device":
    os.symlink("/dev/zero", path)
else:
    with open(path, "w") as f:
        f.write("[" * 200_000 + "]" * 200_000)
print("left", KIND, flush=True)
os._exit(0)  # before the capture hook writes its own records at exit
