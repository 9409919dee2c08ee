"""A linear model trained under xp.StepTrace / xp.Trace, gradient checkpointing, integer specs."""

import numpy as np
import torch
import torch.nn as nn
import torch_xla
import torch_xla.debug.profiler as xp
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.utils.checkpoint import checkpoint

xr.use_spmd()
num_devices = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(num_devices), (num_devices // 2, 2))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.relu(self.fc(x))


class LinearModel(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(2 * d, d)
        self.block = Block(d)
        self.fc3 = nn.Linear(d, 1)

    def forward(self, x):
        x = self.fc2(self.relu(self.fc1(x)))
        x = checkpoint(self.block, x, use_reentrant=True)
        return self.fc3(x)


device = torch_xla.device()
model = LinearModel().to(device)
xs.mark_sharding(model.fc1.weight, mesh, (1, None))
xs.mark_sharding(model.fc2.weight, mesh, (None, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.MSELoss()


def train_linear_model(step):
    data = torch.randn(16, 64).to(device)
    target = torch.randn(16, 1).to(device)
    xs.mark_sharding(data, mesh, (0, None))
    with xp.Trace("forward"):
        output = model(data)
        loss = loss_fn(output, target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss


for step in range(3):
    with xp.StepTrace("train_linear_model", step_num=step):
        loss = train_linear_model(step)
    print("step", step, loss.item())
