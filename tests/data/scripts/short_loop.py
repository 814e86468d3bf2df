"""Four training steps, then an evaluation: the loop ends inside the default schedule."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(4):
    model(torch.randn(8, 32)).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
with torch.no_grad():
    for _ in range(50):
        model(torch.randn(64, 32))
