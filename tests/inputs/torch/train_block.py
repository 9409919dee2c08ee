"""An MLP and a transformer block trained with AdamW on a (4, 2) torch_xla mesh over devices
in another order: the script shardscope's torch_xla capture is checked on, run unmodified
(``capture -- python train_block.py``)."""

import numpy as np
import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()


class Block(nn.Module):
    def __init__(self, d=64, h=4):
        super().__init__()
        self.h = h
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        q = q.view(b, s, self.h, d // self.h).transpose(1, 2)
        k = k.view(b, s, self.h, d // self.h).transpose(1, 2)
        v = v.view(b, s, self.h, d // self.h).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // self.h) ** 0.5, dim=-1) @ v
        return x + self.proj(a.transpose(1, 2).reshape(b, s, d))


class Model(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        self.block = Block(d)

    def forward(self, x):
        x = x + self.down(torch.relu(self.up(x)))
        return self.block(x)


device = torch_xla.device()
mesh = xs.Mesh(np.array([0, 2, 4, 6, 1, 3, 5, 7]), (4, 2), ("data", "model"))
model = Model().to(device)
xs.mark_sharding(model.up.weight, mesh, ("model", None))
xs.mark_sharding(model.down.weight, mesh, (None, "model"))
xs.mark_sharding(model.block.qkv.weight, mesh, ("model", None))
xs.mark_sharding(model.block.proj.weight, mesh, (None, "model"))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    tokens = torch.randn(8, 16, 64).to(device)
    target = torch.randn(8, 16, 64).to(device)
    xs.mark_sharding(tokens, mesh, ("data", None, None))
    out = model(tokens)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
    print("step", step, loss.item())
