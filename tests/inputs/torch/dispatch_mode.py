"""A script that syncs under a dispatch mode of its own: the capture says so."""

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch.utils._python_dispatch import TorchDispatchMode

xr.use_spmd()


class Logging(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


mesh = xs.Mesh(np.arange(8), (8,), ("data",))
x = torch.randn(8, 4).to(torch_xla.device())
xs.mark_sharding(x, mesh, ("data", None))
with Logging():
    y = (x.view(4, 8) * 2).sum()
    torch_xla.sync()
print(y.item())
