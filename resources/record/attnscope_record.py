# attnscope's recorder: runs a user's unmodified training script under torch.profiler.
#
# `attnscope-cli record` writes this file to a private folder and starts
#     PYTHON attnscope_record.py
# with ATTNSCOPE_RECORD_CONFIG naming a JSON file (what to run and how). The script runs as
# __main__ with its own argv; this file only adds:
#   - torch.profiler (torch's own collector, so the tables stay torch-exact), started before the
#     script's first line, with a schedule (wait, warmup, active) over the steps;
#   - the steps: a global optimizer step hook (the first optimizer that steps), or the function
#     the user names (--step-fn module:function), else the whole run is one step;
#   - the toggles: record_function around modules (module forward hooks), a device synchronize
#     at each step boundary, CUDA_LAUNCH_BLOCKING (set by the CLI before Python starts);
#   - optionally steps timed without the profiler after the active window (the inflation);
#   - the trace, written atomically with an "attnscope_record" object at its top, and a result
#     file the CLI reads (what happened, in fields).
# Nothing here runs per op: with --wrap-modules none it installs no module hook at all.
import ast
import builtins
import functools
import json
import os
import re
import runpy
import sys
import time
import traceback
import types

RESULT_VERSION = 1


class _Done(BaseException):
    """Raised from the step hook once the trace (and the baseline) are done: ends the script."""


class _OwnProfiler(BaseException):
    """The script started a profiler of its own while ours records."""

    def __init__(self, where):
        super().__init__(where)
        self.where = where


class State:
    def __init__(self, cfg):
        self.cfg = cfg
        self.steps = 0  # step boundaries seen
        self.step_source = "none"
        self.first_optimizer = None
        self.other_optimizers = set()
        self.module_calls = {}
        self.trace_written = False
        self.pre_segment = True  # the profiler records from the start until the first step
        self.profiled_ns = []
        self.baseline_host_ns = []
        self.baseline_sync_ns = []
        self.last_boundary = None
        self.phase = "wait"
        self.wrapped = []
        self.notes = []
        self.prof = None
        self.torch = None
        self.record_function = None
        self.sync_device = False
        self.progress = None


def _emit(state, obj):
    if state.progress is None:
        return
    try:
        state.progress.write(json.dumps(obj) + "\n")
        state.progress.flush()
    except OSError:
        state.progress = None


def _where_in_script(script):
    frames = traceback.extract_stack()
    for f in reversed(frames):
        if script and os.path.abspath(f.filename) == script:
            return "%s:%d" % (os.path.basename(f.filename), f.lineno)
    for f in reversed(frames):
        if os.path.abspath(f.filename) != os.path.abspath(__file__) and "/torch/" not in f.filename:
            return "%s:%d" % (f.filename, f.lineno)
    return "unknown place"


def _schedule(torch, cfg):
    std = torch.profiler.schedule(wait=cfg["wait"], warmup=cfg["warmup"], active=cfg["active"], repeat=1)
    action = torch.profiler.ProfilerAction

    def sched(n):
        # Step 0 is everything before the first step boundary: recorded, so that a script
        # without steps is recorded whole; dropped as soon as a first step comes.
        if n == 0:
            return action.RECORD_AND_SAVE
        return std(n)

    return sched


def _phase_of(cfg, n):
    w, u, a = cfg["wait"], cfg["warmup"], cfg["active"]
    if n < w:
        return "wait"
    if n < w + u:
        return "warmup"
    if n < w + u + a:
        return "record"
    return "after"


def _sync(state):
    # Only a script that uses the GPU has anything to wait for (no context is made for a CPU script).
    if state.sync_device and state.torch.cuda.is_initialized():
        state.torch.cuda.synchronize()


def _on_step_end(state):
    cfg = state.cfg
    now = time.perf_counter_ns
    if cfg["sync"] == "step":
        with state.record_function("attnscope::step_sync"):
            _sync(state)
    t = now()
    state.steps += 1
    if state.phase == "record" and state.last_boundary is not None:
        state.profiled_ns.append(t - state.last_boundary)
    if state.phase == "baseline_host" or state.phase == "baseline_sync":
        if state.phase == "baseline_sync":
            _sync(state)
            t = now()
        series = state.baseline_host_ns if state.phase == "baseline_host" else state.baseline_sync_ns
        series.append(t - state.last_boundary)
        n = cfg["baseline"]
        if len(state.baseline_host_ns) >= n and state.phase == "baseline_host":
            state.phase = "baseline_sync"
            _sync(state)
        elif len(state.baseline_sync_ns) >= n and state.phase == "baseline_sync":
            state.phase = "done"
            _emit(state, {"phase": "baseline", "message": "timed %d steps without the profiler" % (2 * n)})
            if not cfg["keep_running"]:
                raise _Done()
        state.last_boundary = now()
        return
    if state.phase == "done":
        return
    state.prof.step()
    n = state.prof.step_num
    state.phase = _phase_of(cfg, n)
    total = cfg["wait"] + cfg["warmup"] + cfg["active"]
    _emit(state, {"phase": "step", "step": n, "of": total, "action": state.phase,
                  "message": "step %d of %d (%s)" % (min(n, total), total,
                                                     {"wait": "waiting", "warmup": "warming up",
                                                      "record": "recording", "after": "trace written"}[state.phase])})
    if state.phase == "after":
        if cfg["baseline"] > 0:
            state.phase = "baseline_host"
        else:
            state.phase = "done"
            if not cfg["keep_running"]:
                raise _Done()
    state.last_boundary = now()


def _install_steps(state, script, tree_holder):
    cfg = state.cfg
    fn = cfg.get("step_fn") or ""
    if fn:
        mod, _, name = fn.partition(":")
        if not name:
            raise SystemExit("attnscope: --step-fn wants module:function (got %r)" % fn)
        state.step_source = "step function %s" % fn

        def wrap(f):
            @functools.wraps(f)
            def stepped(*a, **k):
                r = f(*a, **k)
                _on_step_end(state)
                return r

            return stepped

        script_mod = os.path.splitext(os.path.basename(script))[0] if script else ""
        if mod in ("__main__", script_mod) and tree_holder is not None:
            # The script's own function: decorate its definition (nothing runs per call but the
            # step itself).
            parts = name.split(".")
            body = tree_holder.body
            node = None
            for i, part in enumerate(parts):
                want = ast.ClassDef if i < len(parts) - 1 else (ast.FunctionDef, ast.AsyncFunctionDef)
                node = next((n for n in body if isinstance(n, want) and n.name == part), None)
                if node is None:
                    break
                body = node.body
            if node is None:
                raise SystemExit("attnscope: --step-fn %s: no function '%s' at the top level of %s" %
                                 (fn, name, os.path.basename(script)))
            deco = ast.Name(id="__attnscope_step__", ctx=ast.Load())
            ast.copy_location(deco, node)
            node.decorator_list.insert(0, deco)
            return {"__attnscope_step__": wrap}
        import importlib

        target = importlib.import_module(mod)
        owner = target
        parts = name.split(".")
        for part in parts[:-1]:
            owner = getattr(owner, part)
        if not hasattr(owner, parts[-1]):
            raise SystemExit("attnscope: --step-fn %s: module %s has no %s" % (fn, mod, name))
        setattr(owner, parts[-1], wrap(getattr(owner, parts[-1])))
        return {}

    def describe(optimizer):
        params = sum(p.numel() for g in optimizer.param_groups for p in g["params"])
        return "%s, %s parameters" % (type(optimizer).__name__, "{:,}".format(params))

    def post_hook(optimizer, args, kwargs):
        if state.first_optimizer is None:
            # The first optimizer to step defines the step. Its step is wrapped on the instance, outside
            # torch's own Optimizer.step record_function, so the step boundary (the profiler's work, a
            # sync) is never charged to the optimizer; this first boundary (step 0, never kept) is the
            # only one made from inside it.
            state.first_optimizer = id(optimizer)
            state.step_source = "optimizer.step (the first optimizer to step: %s)" % describe(optimizer)
            inner = optimizer.step

            @functools.wraps(inner)
            def stepped(*a, **k):
                r = inner(*a, **k)
                _on_step_end(state)
                return r

            optimizer.step = stepped
            _on_step_end(state)
        elif id(optimizer) != state.first_optimizer and id(optimizer) not in state.other_optimizers:
            state.other_optimizers.add(id(optimizer))
            state.notes.append("another optimizer steps too (%s): steps are the first one's; each step holds "
                               "the other's updates that came since the last" % describe(optimizer))

    from torch.optim.optimizer import register_optimizer_step_post_hook

    register_optimizer_step_post_hook(post_hook)
    return {}


def _install_wrapping(state):
    cfg = state.cfg
    mode = cfg["wrap_modules"]
    if mode == "none":
        return
    torch = state.torch
    pattern = None if mode == "children" else re.compile(mode)
    names = {}  # id(module) -> qualified name ("" = not wrapped)
    seen_roots = set()
    open_ranges = {}
    depth = [0]
    wrappers = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)

    roots = []  # (label, [qualified names]) of each model with wrapped modules

    def name_root(root):
        inner = root.module if isinstance(root, wrappers) else root
        for m in (root, inner):
            seen_roots.add(id(m))
        if not any(True for _ in inner.parameters()):
            return
        if pattern is None:
            chosen = list(inner.named_children())
        else:
            chosen = [(q, m) for q, m in inner.named_modules() if q and pattern.search(q)]
        chosen = [(q, m) for q, m in chosen if id(m) not in names]
        if not chosen:
            return
        # One model: its modules' own names. Several (a GAN's generator and discriminator): each name
        # after its model's class, numbered when classes repeat, so two models' "0" stay apart.
        label = type(inner).__name__
        same = sum(1 for l, _ in roots if l.split("#")[0] == label)
        label = label if same == 0 else "%s#%d" % (label, same + 1)
        roots.append((label, chosen))
        if len(roots) == 2:  # the first model's names get their label too
            first_label, first = roots[0]
            for q, m in first:
                names[id(m)] = "%s.%s" % (first_label, q)
        for q, m in chosen:
            names[id(m)] = q if len(roots) == 1 else "%s.%s" % (label, q)

    def pre(module, args):
        if depth[0] == 0 and id(module) not in seen_roots:
            name_root(module)
        depth[0] += 1
        q = names.get(id(module))
        if q:
            state.module_calls[id(module)] = state.module_calls.get(id(module), 0) + 1
            rf = state.record_function(q)
            rf.__enter__()
            open_ranges.setdefault(id(module), []).append(rf)

    def post(module, args, output):
        depth[0] = max(0, depth[0] - 1)
        stack = open_ranges.get(id(module))
        if stack:
            stack.pop().__exit__(None, None, None)

    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    register_module_forward_pre_hook(pre)
    register_module_forward_hook(post, always_call=True)
    state.wrap_names = names


def _guard_own_profiler(state, script):
    torch = state.torch
    ours = []

    kineto_start = torch.profiler.profile.start

    def start(self):
        if ours and self is not ours[0]:
            raise _OwnProfiler(_where_in_script(script))
        return kineto_start(self)

    torch.profiler.profile.start = start
    legacy_enter = torch.autograd.profiler.profile.__enter__

    def enter(self):
        if getattr(self, "enabled", True):
            raise _OwnProfiler(_where_in_script(script))
        return legacy_enter(self)

    torch.autograd.profiler.profile.__enter__ = enter
    return ours


def _finish_trace(state, part, out, meta):
    """Writes out = part with the attnscope_record object first, atomically; removes part."""
    head = json.dumps({"attnscope_record": meta})[1:-1]
    tmp = out + ".tmp-%d" % os.getpid()
    with open(part, "rb") as src, open(tmp, "wb") as dst:
        first = src.read(1 << 16)
        i = first.find(b"{")
        if i < 0:
            raise ValueError("torch wrote no JSON object to %s" % part)
        dst.write(first[: i + 1] + head.encode() + b"," + first[i + 1:])
        while True:
            chunk = src.read(1 << 20)
            if not chunk:
                break
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    os.replace(tmp, out)
    os.unlink(part)


def main():
    cfg_path = os.environ.pop("ATTNSCOPE_RECORD_CONFIG")
    with open(cfg_path) as f:
        cfg = json.load(f)
    state = State(cfg)
    fd = os.environ.pop("ATTNSCOPE_RECORD_FD", "")
    if fd:
        try:
            state.progress = os.fdopen(int(fd), "w", buffering=1)
        except OSError:
            state.progress = None
    result = {"version": RESULT_VERSION, "python": sys.executable,
              "python_version": sys.version.split()[0], "status": "running",
              "config": {k: cfg[k] for k in ("script", "module", "args", "cwd", "wrap_modules", "sync", "wait",
                                             "warmup", "active", "baseline", "step_fn", "record_shapes",
                                             "profile_memory", "with_stack", "keep_running", "command")}}

    def write_result():
        tmp = cfg["result"] + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f)
        os.replace(tmp, cfg["result"])

    try:
        import torch
        import torch.profiler
    except BaseException as e:  # noqa: B902 - any failure to import torch is the same answer
        result.update(status="no_torch", detail="%s: %s" % (type(e).__name__, e))
        write_result()
        return 3
    state.torch = torch
    # Two profiling cycles (the set-up before the first step, then the schedule's) are by design.
    import warnings

    warnings.filterwarnings("ignore", message="Warning: Profiler clears events at the end of each cycle")
    state.record_function = torch.profiler.record_function
    result["torch_version"] = torch.__version__
    cuda = bool(torch.cuda.is_available())
    result["device"] = torch.cuda.get_device_name(0) if cuda else "cpu"

    script = os.path.abspath(cfg["script"]) if cfg.get("script") else ""
    module = cfg.get("module") or ""
    tree = None
    try:
        if script:
            with open(script, "rb") as f:
                source = f.read()
            tree = ast.parse(source, filename=script)
        extra_globals = _install_steps(state, script, tree)
        if tree is not None:
            ast.fix_missing_locations(tree)
    except SyntaxError as e:
        traceback.print_exc()
        result.update(status="failed", exit_code=1, detail="SyntaxError: %s (%s:%s)" % (e.msg, os.path.basename(
            e.filename or script), e.lineno), steps_seen=0, trace_written=False, partial=False)
        write_result()
        return 1
    except SystemExit as e:  # a --step-fn that names nothing: the CLI says it
        result.update(status="bad_step_fn", exit_code=2, detail=str(e.code), steps_seen=0, trace_written=False,
                      partial=False)
        write_result()
        return 2
    except (ImportError, AttributeError) as e:
        if not cfg.get("step_fn"):
            raise
        result.update(status="bad_step_fn", exit_code=2, detail="--step-fn %s: %s: %s" % (
            cfg.get("step_fn"), type(e).__name__, e), steps_seen=0, trace_written=False, partial=False)
        write_result()
        return 2
    try:
        _install_wrapping(state)
        ours = _guard_own_profiler(state, script)
    except Exception as e:  # noqa: B902 - attnscope's own failure, said as such
        traceback.print_exc()
        result.update(status="recorder_error", exit_code=1, detail="%s: %s" % (type(e).__name__, e), steps_seen=0,
                      trace_written=False, partial=False)
        write_result()
        return 1
    state.sync_device = cuda

    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    part = cfg["out"] + ".part"

    def on_ready(p):
        if p.step_num >= 1 and state.pre_segment:
            state.pre_segment = False  # the set-up before the first step: not kept
            return
        state.pre_segment = False
        p.export_chrome_trace(part)
        state.trace_written = True

    prof = torch.profiler.profile(activities=activities, schedule=_schedule(torch, cfg), on_trace_ready=on_ready,
                                  record_shapes=cfg["record_shapes"], profile_memory=cfg["profile_memory"],
                                  with_stack=cfg["with_stack"])
    state.prof = prof
    ours.append(prof)

    sys.argv = [script or module] + list(cfg["args"])
    if script:
        sys.path[0] = os.path.dirname(script)
    exit_code = 0
    outcome = "complete"
    detail = ""
    _emit(state, {"phase": "start", "message": "running %s" % os.path.basename(script or module)})
    prof.start()
    try:
        if script:
            main_mod = types.ModuleType("__main__")
            main_mod.__file__ = script
            main_mod.__builtins__ = builtins
            main_mod.__dict__.update(extra_globals)
            sys.modules["__main__"] = main_mod
            code = compile(tree, script, "exec")
            exec(code, main_mod.__dict__)
        else:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
    except _Done:
        pass
    except _OwnProfiler as e:
        outcome, exit_code, detail = "own_profiler", 4, e.where
    except SystemExit as e:
        code = e.code
        if code is None or code == 0:
            pass
        else:
            exit_code = code if isinstance(code, int) else 1
            outcome, detail = "failed", "the script called sys.exit(%r)" % (code,)
            if not isinstance(code, int):
                sys.stderr.write("%s\n" % (code,))
    except KeyboardInterrupt:
        outcome, exit_code = "cancelled", 130
    except BaseException as e:  # noqa: B902 - the script's own failure, reported as such
        traceback.print_exc()
        outcome, exit_code = "failed", 1
        detail = "%s: %s" % (type(e).__name__, e)
    finally:
        in_step = state.phase
        open_step = ""
        if outcome != "cancelled" and not state.trace_written:
            try:
                prof.stop()
                # The step in flight when the script stopped ends where the script did: not a step.
                if state.trace_written and state.steps > 0:
                    open_step = "ProfilerStep#%d" % prof.step_num
            except BaseException as e:  # noqa: B902
                state.notes.append("the profiler could not stop: %s" % e)

    partial = outcome != "complete" and in_step in ("record", "wait", "warmup")
    if state.steps == 0:
        partial = outcome != "complete"
    elif outcome == "complete" and in_step in ("wait", "warmup", "record"):
        partial = True
        fit = "--wait 1 --warmup %d --active %d" % (min(cfg["warmup"], 1), max(1, state.steps - 1 - min(cfg["warmup"], 1)))
        state.notes.append("the script ended after %d step%s, inside the schedule (wait %d + warmup %d + active %d)%s"
                           % (state.steps, "" if state.steps == 1 else "s", cfg["wait"], cfg["warmup"], cfg["active"],
                              (": %s ran from the last step to the script's end and is left out; to trace more of "
                               "its steps: %s" % (open_step, fit)) if state.trace_written and open_step else
                              ": nothing was recorded; to trace its steps: %s" % fit))
        if cfg["baseline"] > 0:
            state.notes.append("no steps were timed without the profiler: the script ended first")
    if getattr(state, "wrap_names", None) is not None:
        never = [q for i, q in state.wrap_names.items() if i not in state.module_calls]
        if never:
            state.notes.append("never called, so not in the trace: %s (containers such as nn.ModuleList are not "
                               "called themselves; name their members, e.g. --wrap-modules '%s\\.\\d+$')"
                               % (", ".join(never[:6]) + (", ..." if len(never) > 6 else ""), never[0]))
        state.wrapped = [state.wrap_names[i] for i in state.module_calls]
    result.update(
        status=outcome, exit_code=exit_code, detail=detail, steps_seen=state.steps,
        step_source=state.step_source if state.steps > 0 else "whole run (no step boundary: %s)" % (
            "the step function was never called" if cfg.get("step_fn") else "no optimizer.step() call"),
        wrapped_modules=state.wrapped, trace_written=state.trace_written and outcome != "cancelled",
        partial=bool(partial and state.trace_written), profiled_ns=state.profiled_ns,
        baseline_host_ns=state.baseline_host_ns, baseline_sync_ns=state.baseline_sync_ns,
        device_sync=state.sync_device, notes=state.notes, open_step=open_step,
        rank=int(os.environ.get("RANK", "0")), world_size=int(os.environ.get("WORLD_SIZE", "1")))
    if state.trace_written and outcome != "cancelled":
        meta = {k: result[k] for k in ("version", "python", "python_version", "torch_version", "device", "status",
                                        "exit_code", "detail", "steps_seen", "step_source", "wrapped_modules",
                                        "partial", "open_step", "profiled_ns", "baseline_host_ns", "baseline_sync_ns",
                                        "device_sync", "notes", "rank", "world_size")}
        meta["config"] = result["config"]
        try:
            _finish_trace(state, part, cfg["out"], meta)
        except BaseException as e:  # noqa: B902
            result.update(trace_written=False, write_error="%s: %s" % (type(e).__name__, e))
    elif os.path.exists(part):
        os.unlink(part)
    write_result()
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
