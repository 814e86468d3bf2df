"""A small CPU training loop a user could have written: a DataLoader over a synthetic dataset,
an MLP with named parts, SGD. `--workers N` sets the DataLoader's num_workers."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--steps", type=int, default=40)
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    data = TensorDataset(torch.randn(args.steps * 32, 64), torch.randint(0, 10, (args.steps * 32,)))
    loader = DataLoader(data, batch_size=32, num_workers=args.workers)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    print("trained %d steps, last loss %.3f" % (step + 1, loss.item()))


if __name__ == "__main__":
    main()
