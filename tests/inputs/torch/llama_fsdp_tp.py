"""A Llama-style model on a 3-D (data, fsdp, tensor) mesh: weights sharded by a table of
name patterns in a helper, activations by mark_sharding_with_gradients wrappers."""

import re

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()
mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (2, 2, 2), ("data", "fsdp", "tensor"))

# name pattern -> partition spec
SHARDING_RULES = [
    (r"embed_tokens\.weight$", ("tensor", "fsdp")),
    (r"(q_proj|k_proj|v_proj|gate_proj|up_proj)\.weight$", ("tensor", "fsdp")),
    (r"(o_proj|down_proj)\.weight$", ("fsdp", "tensor")),
    (r"lm_head\.weight$", ("tensor", "fsdp")),
]


def activation(x, spec):
    return xs.mark_sharding_with_gradients(x, mesh, spec)


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = (
            p(x).view(b, s, self.heads, -1).transpose(1, 2)
            for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(a.transpose(1, 2).reshape(b, s, d))


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.gate_proj = nn.Linear(d, 4 * d, bias=False)
        self.up_proj = nn.Linear(d, 4 * d, bias=False)
        self.down_proj = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        h = F.silu(self.gate_proj(x)) * self.up_proj(x)
        h = activation(h, (("data", "fsdp"), None, "tensor"))
        return self.down_proj(h)


class DecoderLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = Attention(d, heads)
        self.post_attention_layernorm = RMSNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        x = activation(x, (("data", "fsdp"), None, None))
        return x + self.mlp(self.post_attention_layernorm(x))


class Model(nn.Module):
    def __init__(self, vocab, d, heads, layers):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(DecoderLayer(d, heads) for _ in range(layers))
        self.norm = RMSNorm(d)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab=256, d=64, heads=4, layers=2):
        super().__init__()
        self.model = Model(vocab, d, heads, layers)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        return self.lm_head(self.model(ids))


def shard_model(model):
    for name, param in model.named_parameters():
        for pattern, spec in SHARDING_RULES:
            if re.search(pattern, name):
                xs.mark_sharding(param, mesh, spec)
                break


torch.manual_seed(0)
device = torch_xla.device()
llama = LlamaForCausalLM().to(device)
shard_model(llama)
optimizer = torch.optim.AdamW(llama.parameters(), lr=1e-3)
for step in range(3):
    ids = torch.randint(0, 256, (8, 16)).to(device)
    xs.mark_sharding(ids, mesh, (("data", "fsdp"), None))
    logits = llama(ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 256), ids[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    torch_xla.sync()
    print("step", step, loss.item())
