"""A GAN-style loop: two models, two optimizers (the discriminator's steps first)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)
G = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
D = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optG = torch.optim.Adam(G.parameters(), lr=1e-3)
optD = torch.optim.Adam(D.parameters(), lr=1e-3)
for _ in range(20):
    fake = G(torch.randn(4, 16))
    d_loss = D(fake.detach()).mean() - D(torch.randn(4, 8)).mean()
    optD.zero_grad()
    d_loss.backward()
    optD.step()
    g_loss = -D(fake).mean()
    optG.zero_grad()
    g_loss.backward()
    optG.step()
