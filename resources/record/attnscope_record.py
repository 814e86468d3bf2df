# attnscope's recorder: runs a user's unmodified training script under torch.profiler.
#
# `attnscope-cli record` writes this file (and attnscope_record_modules.py) to a private folder and
# starts
#     PYTHON attnscope_record.py
# with ATTNSCOPE_RECORD_CONFIG naming a JSON file (what to run and how). The script runs as it
# runs without attnscope: its own __main__ module, __file__, __spec__, argv, sys.path[0] and working
# folder, for `python script.py` and `python -m pkg.mod` alike. This file only adds:
#   - torch.profiler (torch's own collector, so the tables stay torch-exact), started before the
#     script's first line, with a schedule (wait, warmup, active) over the steps;
#   - the steps: a global optimizer step hook (the first optimizer that steps), or the function
#     the user names (--step-fn module:function), else the whole run is one step;
#   - the toggles: record_function around modules (attnscope_record_modules.py), a device
#     synchronize at each step boundary, CUDA_LAUNCH_BLOCKING (set by the CLI before Python starts);
#   - optionally steps timed without the profiler after the active window (the inflation), with the
#     time the process waited for a CPU in each window (the machine's load, measured alongside);
#   - the trace, written atomically with an "attnscope_record" object at its top, and a result
#     file the CLI reads (what happened, in fields).
# Ctrl-C and SIGTERM keep what is complete: nothing before the trace is written; the trace once it
# is (without the baseline when they come during it).
# Nothing here runs per op: with --wrap-modules none it installs no module hook at all.
import ast
import builtins
import functools
import json
import os
import signal
import sys
import time
import traceback
import types

RESULT_VERSION = 1
_RUNNER_DIR = os.path.dirname(os.path.abspath(__file__))


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
        self.trace_written = False  # the .part file holds the whole trace
        self.pre_segment = True  # the profiler records from the start until the first step
        self.profiled_ns = []
        self.baseline_host_ns = []
        self.baseline_sync_ns = []
        self.cpu_wait = {}  # window -> [CPU-wait ns at its start, at its end, steps]
        self.last_boundary = None
        self.phase = "wait"
        self.notes = []
        self.prof = None
        self.torch = None
        self.record_function = None
        self.sync_device = False
        self.progress = None
        self.modules = None
        self.compiles = None
        self.started_ns = 0
        self.setup_ns = -1
        self.cancelled = 0  # the signal that cancelled the run
        self.in_script = False  # a signal raises KeyboardInterrupt only while the script runs

    def where(self):
        """Where a module call falls: the set-up before the first step, the traced steps, or other."""
        if self.steps == 0:
            return "setup"
        return "window" if self.phase == "record" else "other"


def _emit(state, obj):
    if state.progress is None:
        return
    try:
        state.progress.write(json.dumps(obj) + "\n")
        state.progress.flush()
    except OSError:
        state.progress = None


def _ours(filename):
    return os.path.dirname(os.path.abspath(filename)) == _RUNNER_DIR


def _where_in_script(script):
    frames = traceback.extract_stack()
    for f in reversed(frames):
        if script and os.path.abspath(f.filename) == script:
            return "%s:%d" % (os.path.basename(f.filename), f.lineno)
    for f in reversed(frames):
        if not _ours(f.filename) and "/torch/" not in f.filename:
            return "%s:%d" % (f.filename, f.lineno)
    return "unknown place"


def _user_traceback(tb):
    """The traceback without attnscope's frames and runpy's (the user's frames, as Python shows them)."""
    frames = []
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if not _ours(fn) and not fn.endswith(os.sep + "runpy.py") and not fn.startswith("<frozen "):
            frames.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(frames):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def _print_user_traceback(e):
    seen = set()
    x = e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if x.__traceback__ is not None:
            x.__traceback__ = _user_traceback(x.__traceback__) or x.__traceback__
        x = x.__cause__ or x.__context__
    traceback.print_exception(type(e), e, e.__traceback__)


def _cpu_wait_ns():
    """The time this process's threads waited for a CPU (Linux schedstat: run-queue wait), or -1."""
    total = 0
    try:
        for tid in os.listdir("/proc/self/task"):
            with open("/proc/self/task/%s/schedstat" % tid) as f:
                total += int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return -1
    return total


def _window(state, name, end):
    w = state.cpu_wait.setdefault(name, [-1, -1, 0])
    w[1 if end else 0] = _cpu_wait_ns()


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
    if state.steps == 1:
        state.setup_ns = t - state.started_ns
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
            _window(state, "baseline", True)
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
    was = state.phase
    state.prof.step()
    n = state.prof.step_num
    state.phase = _phase_of(cfg, n)
    if state.phase == "record" and was != "record":
        _window(state, "trace", False)
    elif was == "record" and state.phase != "record":
        _window(state, "trace", True)
    total = cfg["wait"] + cfg["warmup"] + cfg["active"]
    _emit(state, {"phase": "step", "step": n, "of": total, "action": state.phase,
                  "message": "step %d of %d (%s)" % (min(n, total), total,
                                                     {"wait": "waiting", "warmup": "warming up",
                                                      "record": "recording", "after": "trace written"}[state.phase])})
    if state.phase == "after":
        if cfg["baseline"] > 0:
            state.phase = "baseline_host"
            _window(state, "baseline", False)
        else:
            state.phase = "done"
            if not cfg["keep_running"]:
                raise _Done()
    state.last_boundary = now()


def _function_node(tree, name):
    """The top-level function (or Class.method) `name` in a module's AST, or None."""
    parts = name.split(".")
    body = tree.body
    node = None
    for i, part in enumerate(parts):
        want = ast.ClassDef if i < len(parts) - 1 else (ast.FunctionDef, ast.AsyncFunctionDef)
        node = next((n for n in body if isinstance(n, want) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def _install_steps(state, main_name, main_file, tree):
    """Steps from --step-fn or the first optimizer. `main_name`: the names __main__ answers to."""
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

        if mod in main_name and tree is not None:
            # The script's own function: decorate its definition (nothing runs per call but the
            # step itself).
            node = _function_node(tree, name)
            if node is None:
                raise SystemExit("attnscope: --step-fn %s: no function '%s' at the top level of %s" %
                                 (fn, name, os.path.basename(main_file)))
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


def _main_module(script, module):
    """What the script will run in: (a fresh __main__ module, code or None, AST or None, its names).

    `python script.py`: __file__ the script's absolute path, __spec__ None, sys.path[0] its folder.
    `python -m pkg.mod`: runpy's own resolution (a package's __main__ too), __spec__ the module's,
    sys.path[0] the working folder. Raises runpy's error for a module that is not there."""
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    if script:
        from importlib.machinery import SourceFileLoader

        main.__file__ = script
        main.__loader__ = SourceFileLoader("__main__", script)
        main.__spec__ = None
        main.__package__ = None
        with open(script, "rb") as f:
            source = f.read()
        return main, None, ast.parse(source, filename=script), ("__main__", os.path.splitext(
            os.path.basename(script))[0]), script
    import runpy

    name, spec, code = runpy._get_module_details(module, runpy._Error)
    main.__file__ = spec.origin
    main.__cached__ = spec.cached
    main.__loader__ = spec.loader
    main.__package__ = spec.parent
    main.__spec__ = spec
    tree = None
    if spec.origin and spec.origin.endswith(".py") and os.path.isfile(spec.origin):
        with open(spec.origin, "rb") as f:
            tree = ast.parse(f.read(), filename=spec.origin)
    return main, code, tree, ("__main__", name, module), spec.origin or module


def _inference_hint(tree):
    if tree is None:
        return ""
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return " (this script defines %s)" % ", ".join(names[:6]) if names else ""


def _sibling(name):
    """A recorder file beside this one, loaded by its path (sys.path may not hold this folder: python -I)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(_RUNNER_DIR, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


recmod = _sibling("attnscope_record_modules")
finish = _sibling("attnscope_record_finish").finish


def main():
    cfg_path = os.environ.pop("ATTNSCOPE_RECORD_CONFIG")
    with open(cfg_path) as f:
        cfg = json.load(f)
    state = State(cfg)
    # This module stays importable under its own name once the script's __main__ replaces it.
    sys.modules["attnscope_record"] = sys.modules[__name__]
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

    def on_signal(signum, frame):
        state.cancelled = signum
        if state.in_script:
            raise KeyboardInterrupt()  # SIGTERM too: the script's own clean-up runs as for Ctrl-C

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        import torch
        import torch.profiler
    except BaseException as e:  # noqa: B902 - any failure to import torch is the same answer
        result.update(status="cancelled" if state.cancelled else "no_torch", detail="%s: %s" % (type(e).__name__, e))
        write_result()
        return 130 if state.cancelled else 3
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
    # As Python itself sets it: the script's folder (symbolic links resolved) or, for -m, the working
    # folder; before the module is looked up, and before --step-fn imports anything.
    sys.path[0] = os.path.dirname(os.path.realpath(script)) if script else os.getcwd()
    try:
        main_mod, code, tree, main_names, main_file = _main_module(script, module)
        extra_globals = _install_steps(state, main_names, main_file, tree)
        if tree is not None:
            ast.fix_missing_locations(tree)
            code = compile(tree, main_file, "exec")
    except SyntaxError as e:
        traceback.print_exception(type(e), e, None)
        result.update(status="failed", exit_code=1, detail="SyntaxError: %s (%s:%s)" % (e.msg, os.path.basename(
            e.filename or script), e.lineno), steps_seen=0, trace_written=False, partial=False,
            before_first_step=True)
        write_result()
        return 1
    except SystemExit as e:  # a --step-fn that names nothing: the CLI says it
        result.update(status="bad_step_fn", exit_code=2, detail=str(e.code), steps_seen=0, trace_written=False,
                      partial=False)
        write_result()
        return 2
    except (ImportError, AttributeError, Exception) as e:  # noqa: B902
        import runpy

        if isinstance(e, runpy._Error):  # python -m of a module that is not there: Python's own words
            sys.stderr.write("%s: %s\n" % (sys.executable, e))
            result.update(status="failed", exit_code=1, detail=str(e), steps_seen=0, trace_written=False,
                          partial=False, before_first_step=True)
            write_result()
            return 1
        if cfg.get("step_fn") and isinstance(e, (ImportError, AttributeError)):
            result.update(status="bad_step_fn", exit_code=2, detail="--step-fn %s: %s: %s" % (
                cfg.get("step_fn"), type(e).__name__, e), steps_seen=0, trace_written=False, partial=False)
            write_result()
            return 2
        _print_user_traceback(e)  # importing a -m module's package failed: the script's own failure
        result.update(status="failed", exit_code=1, detail="%s: %s" % (type(e).__name__, e), steps_seen=0,
                      trace_written=False, partial=False, before_first_step=True)
        write_result()
        return 1
    try:
        if cfg["wrap_modules"] != "none":
            state.modules = recmod.Modules(state, cfg["wrap_modules"])
            state.modules.install()
        state.compiles = recmod.CompileClock(state)
        state.compiles.install()
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

    # As Python itself sets it: argv[0] as typed (python -m: the module's file).
    sys.argv = [(cfg.get("argv0") or script) if script else main_file] + list(cfg["args"])
    main_mod.__dict__.update(extra_globals)
    sys.modules["__main__"] = main_mod
    exit_code = 0
    outcome = "complete"
    detail = ""
    _emit(state, {"phase": "start", "message": "running %s" % os.path.basename(script or module)})
    state.started_ns = time.perf_counter_ns()
    prof.start()
    try:
        state.in_script = True
        exec(code, main_mod.__dict__)
        state.in_script = False
    except _Done:
        state.in_script = False
    except _OwnProfiler as e:
        state.in_script = False
        outcome, exit_code, detail = "own_profiler", 4, e.where
    except SystemExit as e:
        state.in_script = False
        code = e.code
        if code is None or code == 0:
            pass
        else:
            exit_code = code if isinstance(code, int) else 1
            outcome, detail = "failed", ("the script called sys.exit(%r)" % (code,) if isinstance(code, int) else
                                         str(code))
            if not isinstance(code, int):
                sys.stderr.write("%s\n" % (code,))
    except KeyboardInterrupt:
        state.in_script = False
        outcome, exit_code = "cancelled", 130
    except BaseException as e:  # noqa: B902 - the script's own failure, reported as such
        state.in_script = False
        if state.cancelled:  # a DataLoader worker or a peer rank ended by the same Ctrl-C
            outcome, exit_code = "cancelled", 130
        else:
            _print_user_traceback(e)
            outcome, exit_code = "failed", 1
            detail = "%s: %s" % (type(e).__name__, e)
    finally:
        state.in_script = False
    if state.cancelled and outcome != "cancelled":
        outcome, exit_code = "cancelled", 130
    return finish(state, result, outcome, exit_code, detail, part, write_result, _finish_trace, _inference_hint(
        tree) if not cfg.get("step_fn") else "")


if __name__ == "__main__":
    sys.exit(main())
