"""A small CUDA training loop with an attention block (the question this product was born from,
in a user's own code): q/k/v projections, QK matmul, scale, softmax, AV matmul, an MLP; AdamW."""
import argparse
import math

import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        return self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d))


class Block(nn.Module):
    def __init__(self, d=256, heads=8):
        super().__init__()
        self.attn = Attention(d, heads)
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.norm(x))
        return x + self.mlp(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    args = p.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Block().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 128, 256, device=dev)
    for _ in range(args.steps):
        loss = model(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
