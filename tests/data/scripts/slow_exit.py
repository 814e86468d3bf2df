"""A short training loop whose exit work is slow (a checkpoint, a logger flushing): an atexit
handler that says it started, then waits. Ctrl-C while it waits comes after the trace is written."""
import atexit
import sys
import time

import torch
import torch.nn as nn


def cleanup():
    print("cleanup started", flush=True)
    time.sleep(60)


atexit.register(cleanup)
model = nn.Linear(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
    model(torch.randn(2, 8)).sum().backward()
    opt.step()
    opt.zero_grad()
