"""A torch.compile'd model trained with SGD, as users write it: model = torch.compile(Net()).
--backend picks the compiler (default: torch's, inductor; the tests use aot_eager, which traces the
same graphs and compiles them in seconds). At the end it prints what torch.compile made of it: the
graphs it compiled and the graph breaks it hit, so a run under `record` can be compared with one
without it."""
import argparse
import json

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU())
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default="inductor")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--in-place", action="store_true", help="model.compile() instead of torch.compile(model)")
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    if args.in_place:
        model = Net().to(args.device)
        model.compile(backend=args.backend)
    else:
        model = torch.compile(Net().to(args.device), backend=args.backend)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64, device=args.device), torch.randint(0, 10, (32,), device=args.device)
    for _ in range(args.steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    from torch._dynamo.utils import counters

    print("compiled: " + json.dumps({"graphs": counters["stats"]["unique_graphs"],
                                     "graph_breaks": sum(counters["graph_break"].values())}))


if __name__ == "__main__":
    main()
