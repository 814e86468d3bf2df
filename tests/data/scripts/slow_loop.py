"""A long training loop (for Cancel): each step sleeps 50 ms."""
import time

import torch
import torch.nn as nn

model = nn.Linear(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(100000):
    model(torch.randn(2, 8)).sum().backward()
    opt.step()
    time.sleep(0.05)
