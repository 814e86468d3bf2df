"""A small transformer language model as users write one: an embedding, nn.TransformerEncoder
layers (each with self_attn, whose out_proj nn.MultiheadAttention uses by its weights, never
calling it), a head; gradient accumulation over --accum micro-batches and gradient clipping."""
import argparse

import torch
import torch.nn as nn


class LM(nn.Module):
    def __init__(self, vocab=100, d=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=64, batch_first=True, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--accum", type=int, default=2)
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = LM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(args.steps):
        for _ in range(args.accum):
            tokens = torch.randint(0, 100, (4, 16))
            logits = model(tokens[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, 100), tokens[:, 1:].reshape(-1)) / args.accum
            loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
