"""Inference only: no optimizer, so no step boundary (the whole run is one step)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8))
with torch.no_grad():
    for _ in range(10):
        model(torch.randn(16, 64))
print("done")
