"""A script that starts its own torch.profiler (as many do)."""
import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile

model = nn.Linear(16, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(5):
        model(torch.randn(4, 16)).sum().backward()
        opt.step()
print(prof.key_averages().table(row_limit=5))
