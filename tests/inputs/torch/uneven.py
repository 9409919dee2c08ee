"""A sharding that does not divide its dimension: w's 3 rows split 2 ways over a (2, 4)
torch_xla mesh, which torch_xla holds in tiles of 2 rows (the second: row 2 and a row of
padding). The script ``capture_uneven.json`` is captured from::

    .venv/bin/python main.py capture --out tests/inputs/torch/capture_uneven.json -- \\
        /path/to/torch-venv/bin/python tests/inputs/torch/uneven.py
"""

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()
device = torch_xla.device()
mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
w = torch.randn(3, 32).to(device)
x = torch.randn(8, 32).to(device)
xs.mark_sharding(w, mesh, ("data", None))
xs.mark_sharding(x, mesh, ("data", "model"))
y = x @ w.T
torch_xla.sync()
print(y.sum().item())
