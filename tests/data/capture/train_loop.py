# A plain training loop, as users write it (no profiler, nothing of attnscope's): a two-layer MLP
# trained with SGD. The tests start it with KINETO_USE_DAEMON=1 and capture it while it runs.
#   --steps N        stop after N steps (0: run until killed)
#   --sleep S        seconds between steps (a data loader's wait)
#   --log FILE       one line per step: "index start_ns end_ns" (wall clock), flushed: the truth the
#                    tests compare the captured trace with
#   --forward-only   a server: forward passes only, no optimizer (nothing for a capture by steps)
#   --profile        run the loop under torch.profiler (another profiler in the process)
import argparse
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=0)
ap.add_argument("--sleep", type=float, default=0.05)
ap.add_argument("--log", default="")
ap.add_argument("--forward-only", action="store_true")
ap.add_argument("--profile", action="store_true")
args = ap.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 64)
y = torch.randint(0, 10, (32,))
log = open(args.log, "a", buffering=1) if args.log else None


def loop():
    i = 0
    while args.steps == 0 or i < args.steps:
        t0 = time.time_ns()
        if args.forward_only:
            with torch.no_grad():
                model(x)
        else:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        t1 = time.time_ns()
        if log:
            log.write("%d %d %d\n" % (i, t0, t1))
        i += 1
        time.sleep(args.sleep)


if args.profile:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        loop()
else:
    loop()
