"""A Megatron-style data + tensor parallel training step on torch_xla SPMD."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()
mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (2, 4), ("data", "model"))


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)  # column parallel
        self.out = nn.Linear(d, d, bias=False)  # row parallel

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(a.transpose(1, 2).reshape(b, s, d))


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=256, d=64, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Layer(d, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def shard_megatron(model):
    xs.mark_sharding(model.embed.weight, mesh, ("model", None))
    for layer in model.layers:
        xs.mark_sharding(layer.attn.qkv.weight, mesh, ("model", None))
        xs.mark_sharding(layer.attn.out.weight, mesh, (None, "model"))
        xs.mark_sharding(layer.mlp.fc1.weight, mesh, ("model", None))
        xs.mark_sharding(layer.mlp.fc1.bias, mesh, ("model",))
        xs.mark_sharding(layer.mlp.fc2.weight, mesh, (None, "model"))
    xs.mark_sharding(model.head.weight, mesh, ("model", None))


torch.manual_seed(0)
device = torch_xla.device()
model = GPT().to(device)
shard_megatron(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(3):
    ids = torch.randint(0, 256, (8, 16)).to(device)
    xs.mark_sharding(ids, mesh, ("data", None))
    labels = torch.roll(ids, -1, dims=1)
    logits = model(ids)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    torch_xla.sync()
    print("step", step, loss.item())
