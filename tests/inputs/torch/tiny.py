"""A two-layer MLP, one SGD step on a (2, 2) torch_xla mesh over devices 0, 2, 1, 3: the
script the checked-in torch_xla fixtures come from (``make_fixtures.py``)."""

import numpy as np
import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(16, 8)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


device = torch_xla.device()
mesh = xs.Mesh(np.array([0, 2, 1, 3]), (2, 2), ("data", "model"))
model = MLP().to(device)
xs.mark_sharding(model.up.weight, mesh, ("model", None))
xs.mark_sharding(model.down.weight, mesh, (None, "model"))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batch = torch.randn(4, 8).to(device)
xs.mark_sharding(batch, mesh, ("data", None))
loss = model(batch).square().mean()
loss.backward()
opt.step()
torch_xla.sync()
print("loss", loss.item())
