# A data-parallel training loop on gloo, as torchrun runs it (no profiler): each rank logs its steps
# ("index start_ns end_ns", wall clock) to LOG_PREFIX-RANK.txt, the truth the capture test compares
# each rank's captured trace with.
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 0
prefix = sys.argv[2] if len(sys.argv) > 2 else ""
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 64)
y = torch.randint(0, 10, (32,))
log = open("%s-%d.txt" % (prefix, rank), "a", buffering=1) if prefix else None
i = 0
while steps == 0 or i < steps:
    t0 = time.time_ns()
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    t1 = time.time_ns()
    if log:
        log.write("%d %d %d\n" % (i, t0, t1))
    i += 1
    time.sleep(0.05)
dist.destroy_process_group()
