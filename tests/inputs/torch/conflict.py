"""Two operands of one add arrive sharded on different mesh axes for the same dimension, on
a (4, 2) torch_xla mesh over devices 0, 2, 4, 6, 1, 3, 5, 7: Shardy and GSPMD settle the
add differently. The script ``capture_conflict.json`` is captured from::

    .venv/bin/python main.py capture --out tests/inputs/torch/capture_conflict.json -- \\
        /path/to/torch-venv/bin/python tests/inputs/torch/conflict.py
"""

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()

device = torch_xla.device()
mesh = xs.Mesh(np.array([0, 2, 4, 6, 1, 3, 5, 7]), (4, 2), ("data", "model"))
x = torch.randn(16, 32).to(device)
y = torch.randn(16, 32).to(device)
xs.mark_sharding(x, mesh, ("data", None))
xs.mark_sharding(y, mesh, ("model", None))
z = torch.sin(x) + y
torch_xla.sync()
print("sum", z.sum().item())
