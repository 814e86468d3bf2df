"""python -m trainpkg.train [--steps N]: a small SGD loop from the package's config."""
import argparse
import os
import sys

import torch

from trainpkg.helpers import load_config, make_model

sys.path.append(os.path.join(os.path.dirname(__file__), "..", ".."))  # tests/data/scripts: identity.py
from identity import identity  # noqa: E402

print(identity(globals()), flush=True)
cfg = load_config()
p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=cfg["steps"])
args = p.parse_args()
torch.manual_seed(0)
torch.set_num_threads(1)
model = make_model(cfg)
opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
for _ in range(args.steps):
    loss = model(torch.randn(8, cfg["width"])).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("trained", args.steps)
