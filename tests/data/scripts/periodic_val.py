"""A CPU training loop that validates and checkpoints every 3rd step: the validation pass (evaluate())
runs 40 batches through the model and torch.save writes the weights to memory."""
import io

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
val = [torch.randn(64, 256) for _ in range(40)]


def evaluate():
    model.eval()
    with torch.no_grad():
        s = 0.0
        for x in val:
            s += model(x).sum().item()
    model.train()
    return s


for step in range(12):
    loss = model(torch.randn(64, 256)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 2:
        evaluate()
        torch.save(model.state_dict(), io.BytesIO())
