# attnscope's recorder, its module half (attnscope_record.py imports it): record_function around
# the user's modules, named by their qualified paths, and never inside code that torch.compile
# compiled; what each chosen module did when it is not in the trace, checked against what ran;
# torch.compile's own time (set-up before the first step, or a recompile inside the traced steps).
#
# Compiled code: a module forward hook runs in eager Python, or, inside a region dynamo compiles,
# it is traced into the compiled program (a range there is dropped, and the hook's own work makes
# guards, graph breaks and recompiles: a different program). So both hooks return at once while
# dynamo traces (torch.compiler.is_compiling() is a constant there: the traced hook is empty, the
# compiled program the same as without attnscope), and the modules inside a compiled model are
# never chosen: a compiled model is wrapped as a whole, from outside.
import os
import re
import sys
import time

_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_frame():
    """The innermost frame outside torch and attnscope's own files (the code that called a model)."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if os.path.dirname(os.path.abspath(fn)) != _DIR and "/torch/" not in fn and not fn.startswith("<"):
            return f
        f = f.f_back
    return None


def _variable_name(obj, frame):
    """The name the user's code calls `obj` by where it called it (a local, self.<attr>, a global)."""
    if frame is None:
        return ""
    try:
        local = frame.f_locals
        for k, v in local.items():
            if v is obj and not k.startswith("_"):
                return k
        owner = local.get("self")
        if owner is not None and hasattr(owner, "__dict__"):
            for k, v in vars(owner).items():
                if v is obj and not k.startswith("_"):
                    return k
        for k, v in frame.f_globals.items():
            if v is obj and not k.startswith("_"):
                return k
    except Exception:  # noqa: B902 - a name is a nicety; the class name stands in
        pass
    return ""


def _is_container(torch, m):
    return type(m).forward is torch.nn.Module.forward


class Modules:
    """The wrapping of --wrap-modules children|REGEX (global forward hooks, eager calls only)."""

    def __init__(self, state, mode):
        torch = state.torch
        self.state = state
        self.torch = torch
        self.pattern = None if mode == "children" else re.compile(mode)
        self.names = {}  # id(module) -> the range's name
        self.modules = {}  # id(module) -> module (chosen ones)
        self.parent = {}  # id(module) -> id(parent), for every module of a named root
        self.ran = set()  # ids of modules that ran eagerly
        self.calls = {"setup": {}, "window": {}, "other": {}}  # where -> id(chosen module) -> eager calls
        self.roots = []  # [label, [(qualified name, module)], compiled]
        self.seen_roots = set()
        self.compiled_inside = []  # qualified names inside a compiled model (never chosen)
        self.compiled_roots = []  # labels of compiled models
        self.open_ranges = {}
        self.depth = 0
        self.wrappers = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)
        try:
            from torch._dynamo.eval_frame import OptimizedModule  # imported by torch.compile anyway

            self.optimized = OptimizedModule
        except Exception:  # noqa: B902 - a torch without dynamo compiles nothing
            self.optimized = ()
        is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
        self.is_compiling = is_compiling or (lambda: False)
        try:
            self.graph_module = torch.fx.GraphModule
        except Exception:  # noqa: B902
            self.graph_module = ()

    # -- which modules, and their names ------------------------------------------------------
    def _unwrap(self, m):
        """(the model inside DDP/DataParallel/OptimizedModule wrappers, whether it is compiled)."""
        compiled = False
        for _ in range(8):
            if isinstance(m, self.wrappers):
                m = m.module
            elif self.optimized and isinstance(m, self.optimized):
                m, compiled = m._orig_mod, True
            else:
                break
        return m, compiled or getattr(m, "_compiled_call_impl", None) is not None

    def _name_root(self, root):
        self.seen_roots.add(id(root))
        if self.graph_module and isinstance(root, self.graph_module):
            return  # compiled code's own runtime module, not the user's
        inner, compiled = self._unwrap(root)
        self.seen_roots.add(id(inner))
        if not any(True for _ in inner.parameters()):
            return
        label = _variable_name(root, _user_frame()) or type(inner).__name__
        same = sum(1 for r in self.roots if r[0].split("#")[0] == label)
        label = label if same == 0 else "%s#%d" % (label, same + 1)
        if compiled:
            self.compiled_roots.append(label)
        # Qualified names as the user's own model has them: a compiled submodule's "_orig_mod" left out.
        inside = set()  # ids inside a compiled region
        named = []
        for q, m in inner.named_modules(remove_duplicate=True):
            parts = [p for p in q.split(".") if p and p != "_orig_mod"]
            q = ".".join(parts)
            for c in m.children():
                self.parent.setdefault(id(c), id(m))
            if id(m) in inside or (compiled and m is not inner):
                inside.add(id(m))
            if q and (self.optimized and isinstance(m, self.optimized) or
                      getattr(m, "_compiled_call_impl", None) is not None):
                for d in m.modules():
                    if d is not m:
                        inside.add(id(d))
            if q and (not named or named[-1][0] != q):
                named.append((q, m))
        if self.pattern is None:
            tops = {q for q, _ in named if "." not in q}
            chosen = [(q, m) for q, m in named if q in tops]
            if compiled:
                self.compiled_inside.extend(q for q, _ in chosen)
                chosen = [("", root)]  # the compiled model as a whole, from outside
        else:
            chosen = [(q, m) for q, m in named if self.pattern.search(q)]
            if compiled and self.pattern.search(label):
                chosen = [("", root)] + chosen
        for q, m in chosen:
            if id(m) in inside:
                self.compiled_inside.append(q)
        chosen = [(q, m) for q, m in chosen if id(m) not in inside and id(m) not in self.names]
        if not chosen:
            return
        self.roots.append([label, chosen, compiled])
        several = len(self.roots) > 1
        for lab, ch, _ in self.roots:
            for q, m in ch:
                self.modules[id(m)] = m
                # One model: its modules' qualified names; a name that is only an index (an nn.Sequential
                # model's "0") and every name once there are several models: after the model's name.
                if not q:
                    self.names[id(m)] = lab
                elif several or q.split(".")[0].isdigit():
                    self.names[id(m)] = "%s.%s" % (lab, q)
                else:
                    self.names[id(m)] = q

    # -- the hooks ---------------------------------------------------------------------------
    def pre(self, module, args):
        if self.is_compiling():
            return
        if self.depth == 0 and id(module) not in self.seen_roots:
            self._name_root(module)
        self.depth += 1
        i = id(module)
        self.ran.add(i)
        q = self.names.get(i)
        if q:
            counts = self.calls[self.state.where()]
            counts[i] = counts.get(i, 0) + 1
            rf = self.state.record_function(q)
            rf.__enter__()
            self.open_ranges.setdefault(i, []).append(rf)

    def post(self, module, args, output):
        if self.is_compiling():
            return
        self.depth = max(0, self.depth - 1)
        stack = self.open_ranges.get(id(module))
        if stack:
            stack.pop().__exit__(None, None, None)

    def install(self):
        torch = self.torch
        from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

        register_module_forward_pre_hook(self.pre)
        register_module_forward_hook(self.post, always_call=True)
        # torch warns that global hooks fire once more for an OptimizedModule: they return at once
        # inside compiled code, and the compiled model itself is the one range, so nothing fires twice.
        import warnings

        warnings.filterwarnings("ignore", message=r"Using `torch.compile\(module\)` when there are global hooks")
        # module.compile() compiles in place: its calls skip the eager hooks, so its call is wrapped.
        orig = torch.nn.Module.compile
        me = self

        def compile_in_place(module, *a, **k):
            r = orig(module, *a, **k)
            inner = getattr(module, "_compiled_call_impl", None)
            if inner is not None:

                def call(*args, **kwargs):
                    me.pre(module, args)
                    try:
                        return inner(*args, **kwargs)
                    finally:
                        me.post(module, args, None)

                module._compiled_call_impl = call
            return r

        torch.nn.Module.compile = compile_in_place

    # -- what the trace has, and why the others are not there --------------------------------
    def _traced(self, whole_run):
        """The chosen modules' calls in the trace: its steps', or the whole run's when it is one step."""
        if not whole_run:
            return self.calls["window"]
        both = dict(self.calls["setup"])
        for i, n in self.calls["window"].items():
            both[i] = both.get(i, 0) + n
        return both

    def wrapped(self, whole_run):
        traced = self._traced(whole_run)
        return [self.names[i] for i in self.names if i in traced]

    def notes(self, whole_run, compiled_anything):
        notes = []
        if self.compiled_roots:
            notes.append("compiled by torch.compile: %s, wrapped as a whole from outside (the modules inside "
                         "a compiled model run as one compiled program; a record_function there would change "
                         "what is compiled)" % ", ".join(self.compiled_roots))
        if self.compiled_inside:
            inside = sorted(set(self.compiled_inside))
            notes.append("inside compiled code, so not wrapped: %s" % _some(inside))
        outside, container, skipped, compiled, never = [], [], [], [], []
        traced = self._traced(whole_run)
        for i, q in self.names.items():
            if i in traced:
                continue
            m = self.modules[i]
            n = sum(c.get(i, 0) for c in self.calls.values())
            if n:
                outside.append("%s (%d call%s)" % (q, n, "" if n == 1 else "s"))
            elif _is_container(self.torch, m):
                container.append((q, m))
            elif self.parent.get(i) in self.ran:
                skipped.append(q)
            elif compiled_anything:
                compiled.append(q)
            else:
                never.append(q)
        if outside:
            notes.append("ran, but not in the traced steps (in the set-up, or between steps such as a "
                         "validation pass): %s" % _some(outside))
        if container:
            names = [q for q, _ in container]
            example = self._member_pattern(container)
            notes.append("containers are not called themselves, so not in the trace: %s%s" % (
                _some(names), ("; to wrap the members that ran: --wrap-modules '%s'" % example) if example else ""))
        if skipped:
            notes.append("never called, though the module holding it ran (it uses their weights directly, as "
                         "nn.MultiheadAttention does with out_proj, or took a fused path, as "
                         "nn.TransformerEncoderLayer does in inference): %s" % _some(skipped))
        if compiled:
            notes.append("did not run outside compiled code (torch.compile compiled parts of this run), so not "
                         "wrapped: %s" % _some(compiled))
        if never:
            notes.append("never called in this run: %s" % _some(never))
        return notes

    def _member_pattern(self, containers):
        """A pattern naming the containers' own members, offered only where members of them ran."""
        ran = [q for q, m in containers if any(id(c) in self.ran for c in m.children())]
        if not ran:
            return ""
        alts = [re.escape(q) for q in ran]
        return ("(%s)" % "|".join(alts) if len(alts) > 1 else alts[0]) + "\\.[^.]+$"


def _some(names, n=6):
    return ", ".join(names[:n]) + (", ... (%d in all)" % len(names) if len(names) > n else "")


class CompileClock:
    """torch.compile's compilations, timed by dynamo's own start/end callbacks, registered at the first
    torch.compile call (importing dynamo earlier would cost every script seconds)."""

    def __init__(self, state):
        self.state = state
        self.events = []  # {"trigger", "ns", "step", "traced"}
        self.started = None
        self.registered = False

    def install(self):
        torch = self.state.torch
        orig = getattr(torch, "compile", None)
        if orig is None:
            return
        me = self

        def compile(*a, **k):
            me._register()
            return orig(*a, **k)

        for attr in ("__doc__", "__name__", "__qualname__", "__module__", "__wrapped__"):
            try:
                setattr(compile, attr, getattr(orig, attr))
            except AttributeError:
                pass
        compile.__wrapped__ = orig
        torch.compile = compile

    def _register(self):
        if self.registered:
            return
        self.registered = True
        try:
            from torch._dynamo.callback import callback_handler
        except Exception:  # noqa: B902 - an older torch: compile time is not said
            return
        callback_handler.register_start_callback(self._start)
        callback_handler.register_end_callback(self._end)

    def _start(self, args):
        self.started = (time.perf_counter_ns(), self.state.steps, self.state.where() == "window",
                        getattr(self.state.prof, "step_num", 0))

    def _end(self, args):
        if self.started is None:
            return
        t0, steps, traced, step_num = self.started
        self.started = None
        trigger = getattr(getattr(args, "callback_trigger", None), "name", "DYNAMO")
        self.events.append({"trigger": trigger.lower(), "ns": time.perf_counter_ns() - t0, "step": steps,
                            "traced": bool(traced), "profiler_step": step_num})
