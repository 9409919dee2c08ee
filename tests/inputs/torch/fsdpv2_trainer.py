"""A decoder trained with FSDPv2 the way torch_xla's FSDPv2 example does: a trainer object,
transformer_auto_wrap_policy, MpDeviceLoader(input_sharding=...), torch_xla.compile(name=...)."""

import functools

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch_xla.experimental.spmd_fully_sharded_data_parallel import (
    SpmdFullyShardedDataParallel as FSDPv2,
)

xr.use_spmd()


class DecoderLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.input_layernorm = nn.LayerNorm(d)
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        self.post_attention_layernorm = nn.LayerNorm(d)
        self.up_proj = nn.Linear(d, 4 * d, bias=False)
        self.down_proj = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        h = self.input_layernorm(x)
        q, k, v = (
            p(h).view(b, s, self.heads, -1).transpose(1, 2)
            for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o_proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.down_proj(F.silu(self.up_proj(self.post_attention_layernorm(x))))


class Decoder(nn.Module):
    def __init__(self, vocab=512, d=64, heads=4, layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(DecoderLayer(d, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


class Trainer:
    def __init__(self, batch_size=8, seq=32, vocab=512):
        self.device = torch_xla.device()
        num_devices = xr.global_runtime_device_count()
        self.mesh = xs.Mesh(np.arange(num_devices), (num_devices, 1), ("fsdp", "tensor"))
        xs.set_global_mesh(self.mesh)
        self.vocab = vocab
        ids = torch.randint(0, vocab, (4 * batch_size, seq))
        dataset = torch.utils.data.TensorDataset(ids)
        loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, drop_last=True)
        self.train_device_loader = pl.MpDeviceLoader(
            loader, self.device, input_sharding=xs.ShardingSpec(self.mesh, ("fsdp", None))
        )
        policy = functools.partial(
            transformer_auto_wrap_policy, transformer_layer_cls={DecoderLayer}
        )
        self.model = FSDPv2(Decoder().to(self.device), mesh=self.mesh, auto_wrap_policy=policy)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.compiled_step_fn = torch_xla.compile(
            self.decoder_step_fn, full_graph=True, name="decoder_step_fn"
        )

    def decoder_step_fn(self, input_ids):
        self.optimizer.zero_grad()
        logits = self.model(input_ids)
        labels = torch.roll(input_ids, -1, dims=1)
        loss = F.cross_entropy(logits.view(-1, self.vocab), labels.view(-1))
        loss.backward()
        self.optimizer.step()
        return loss

    def start_training(self):
        for step, (input_ids,) in enumerate(self.train_device_loader):
            loss = self.compiled_step_fn(input_ids)
            print("step", step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    Trainer().start_training()
