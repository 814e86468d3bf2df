"""Two-process DDP on the CPU (gloo), started the way torchrun starts it: RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT in the environment. --slow-rank R --slow-ms MS: rank R does MS of
extra work on the CPU before each forward (a slow data pipeline), so the others wait for it."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--slow-rank", type=int, default=-1)
p.add_argument("--slow-ms", type=float, default=0)
args = p.parse_args()
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
torch.set_num_threads(1)
model = DDP(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(30):
    if rank == args.slow_rank:
        until = time.perf_counter() + args.slow_ms / 1000
        while time.perf_counter() < until:  # busy, as a slow pipeline is
            pass
    loss = model(torch.randn(16, 64)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("rank %d of %s done" % (rank, os.environ["WORLD_SIZE"]))
dist.destroy_process_group()
