"""Two-process DDP on the CPU (gloo), started the way torchrun starts it: RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT in the environment."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
torch.set_num_threads(1)
model = DDP(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(30):
    loss = model(torch.randn(16, 64)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("rank %d of %s done" % (rank, os.environ["WORLD_SIZE"]))
dist.destroy_process_group()
