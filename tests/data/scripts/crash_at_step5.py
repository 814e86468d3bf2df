"""A training loop that fails at step 5 (a bad batch)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(20):
    if step == 5:
        raise RuntimeError("bad batch at step 5: shape mismatch")
    loss = model(torch.randn(8, 32)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
