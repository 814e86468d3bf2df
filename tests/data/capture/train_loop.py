# A plain training loop, as users write it (no profiler, nothing of attnscope's): a two-layer MLP
# trained with SGD. The tests start it with KINETO_USE_DAEMON=1 and capture it while it runs.
#   --steps N        stop after N steps (0: run until killed)
#   --sleep S        seconds between steps (a data loader's wait)
#   --log FILE       one line per step: "index start_ns end_ns cpu_ns" (wall clock, and the process's
#                    CPU time over the step, all threads), flushed: the truth the tests compare the
#                    captured trace with
#   --forward-only   a server: forward passes only, no optimizer (nothing for a capture by steps)
#   --profile        run the loop under torch.profiler (another profiler in the process)
#   --hidden H --batch B  the model's width and the batch (bench/capture_cost.py makes steps longer)
#   --device cuda    train on the GPU (scripts/gpu-capture.sh); each step then ends with a synchronize
#                    so that the log's times hold the step's GPU work
import argparse
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=0)
ap.add_argument("--sleep", type=float, default=0.05)
ap.add_argument("--log", default="")
ap.add_argument("--forward-only", action="store_true")
ap.add_argument("--profile", action="store_true")
ap.add_argument("--hidden", type=int, default=128)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--device", default="cpu")
args = ap.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, args.hidden), torch.nn.ReLU(), torch.nn.Linear(args.hidden, 10))
model = model.to(args.device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(args.batch, 64, device=args.device)
y = torch.randint(0, 10, (args.batch,), device=args.device)
sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
log = open(args.log, "a", buffering=1) if args.log else None


def loop():
    i = 0
    while args.steps == 0 or i < args.steps:
        t0 = time.time_ns()
        c0 = time.process_time_ns()
        if args.forward_only:
            with torch.no_grad():
                model(x)
        else:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        sync()
        t1 = time.time_ns()
        c1 = time.process_time_ns()
        if log:
            log.write("%d %d %d %d\n" % (i, t0, t1, c1 - c0))
        i += 1
        time.sleep(args.sleep)


if args.profile:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        loop()
else:
    loop()
