"""A three-layer MLP sharded with DTensor's placements on a (4, 2) "xla" DeviceMesh, one
SGD step on torch_xla SPMD: ``distribute_module`` hands each module to ``shard_params``,
whose ``distribute_tensor`` calls give the weights their placements.

On an "xla" mesh ``distribute_tensor`` marks the tensor it is given (an XLA tensor) and
returns an ``XLAShardedTensor`` over it. The script computes with the marked tensors, not
with what it returns: with torch_xla 2.9 an ``XLAShardedTensor`` parameter or input stops
the step with "The composite op functionalization fallback expects its inputs all not to
be functional tensors"."""

import torch
import torch.nn as nn
import torch_xla
import torch_xla.runtime as xr
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Replicate, Shard, distribute_module, distribute_tensor

xr.use_spmd()

# One placement per mesh dimension (data, model), as DTensor writes them.
PLACEMENTS = {
    "up.weight": [Replicate(), Shard(0)],
    "down.weight": [Replicate(), Shard(1)],
    "head.weight": [Shard(1), Shard(0)],
}


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(16, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.down(torch.relu(self.up(x))))


def shard_params(name, module, mesh):
    for param_name, param in module.named_parameters(recurse=False):
        placements = PLACEMENTS.get(f"{name}.{param_name}")
        if placements is not None:
            distribute_tensor(param, mesh, placements)


device = torch_xla.device()
mesh = DeviceMesh("xla", torch.arange(8).reshape(4, 2), mesh_dim_names=("data", "model"))
model = distribute_module(MLP().to(device), mesh, shard_params)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batch = torch.randn(8, 8).to(device)
distribute_tensor(batch, mesh, [Shard(0), Replicate()])
loss = model(batch).square().mean()
loss.backward()
opt.step()
torch_xla.sync()
print("loss", loss.item())
