"""tests/data/scripts/train_mlp.py with torch.profiler written into it by hand, as a user would:
the same model, data and loop, profile(schedule(wait, warmup, active)) and prof.step() at the loop's
end. Prints the active steps' times (the wall clock between two prof.step() calls) as JSON, the
figure `attnscope-cli record` keeps as profiled_ns."""
import json
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, sys.argv[1])  # tests/data/scripts, for its Net
from train_mlp import Net  # noqa: E402

WAIT, WARMUP, ACTIVE = 2, 1, int(sys.argv[2])
steps = WAIT + WARMUP + ACTIVE + 1
torch.manual_seed(0)
torch.set_num_threads(1)
data = TensorDataset(torch.randn(steps * 32, 64), torch.randint(0, 10, (steps * 32,)))
loader = DataLoader(data, batch_size=32, num_workers=0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
times = []
prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                              schedule=torch.profiler.schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
                              on_trace_ready=lambda p: p.export_chrome_trace("/dev/null"))
prof.start()
last = None
for step, (x, y) in enumerate(loader):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    now = time.perf_counter_ns()
    if WAIT + WARMUP <= step < WAIT + WARMUP + ACTIVE and last is not None:
        times.append(now - last)
    prof.step()
    last = time.perf_counter_ns()
    if step >= WAIT + WARMUP + ACTIVE:
        break
prof.stop()
print(json.dumps(times))
