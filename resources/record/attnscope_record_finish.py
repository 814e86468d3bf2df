# attnscope's recorder, its last part (attnscope_record.py calls finish() once the script has
# ended, whichever way): what is kept, what is said, and the result file the CLI reads.
#   - a failure before the first step: nothing is kept (no step ran to the end, so there is nothing
#     to diagnose), and the failure is the script's;
#   - Ctrl-C or SIGTERM before the trace is complete: nothing is kept; during the baseline timing:
#     the trace is kept without the baseline; after it: kept. A signal from here on only sets a flag,
#     so the trace and the result are written whole or not at all.
import os
import signal

_META_KEYS = ("version", "python", "python_version", "torch_version", "device", "status", "exit_code", "detail",
              "steps_seen", "step_source", "wrapped_modules", "partial", "open_step", "profiled_ns",
              "baseline_host_ns", "baseline_sync_ns", "device_sync", "notes", "rank", "world_size", "setup_ns",
              "compiles", "cpu_wait_trace_ns", "cpu_wait_baseline_ns", "cancelled")


def _seconds(ns):
    return "%.1f s" % (ns / 1e9) if ns >= 1e8 else "%.0f ms" % (ns / 1e6)


def _per_step(state, name, steps):
    w = state.cpu_wait.get(name)
    if not w or w[0] < 0 or w[1] < w[0] or steps <= 0:
        return -1
    return (w[1] - w[0]) // steps


def _compile_notes(state):
    events = state.compiles.events if state.compiles else []
    notes = []
    if state.setup_ns >= 0:
        setup = [e for e in events if e["step"] == 0]
        c = sum(e["ns"] for e in setup)
        notes.append("set-up before the first step: %s (not in the trace)%s" % (
            _seconds(state.setup_ns), (", of which torch.compile %s (%d compile pass%s)" % (
                _seconds(c), len(setup), "" if len(setup) == 1 else "es")) if setup else ""))
    traced = [e for e in events if e["traced"]]
    if traced:
        steps = sorted({e["profiler_step"] for e in traced})
        notes.append("torch.compile compiled again inside the traced steps (%s: %s in all): those steps hold "
                     "compile time, not the model's steady state (a recompile: new shapes, or a guard that "
                     "failed; TORCH_LOGS=recompiles says why)" % (
                         ", ".join("ProfilerStep#%d" % s for s in steps), _seconds(sum(e["ns"] for e in traced))))
    return notes


def finish(state, result, outcome, exit_code, detail, part, write_result, finish_trace, hint):
    cfg = state.cfg
    prof = state.prof
    in_step = state.phase
    open_step = ""
    before_first_step = outcome == "failed" and state.steps == 0
    if outcome != "cancelled" and not state.trace_written and not before_first_step:
        try:
            prof.stop()
            # The step in flight when the script stopped ends where the script did: not a step.
            if state.trace_written and state.steps > 0:
                open_step = "ProfilerStep#%d" % prof.step_num
        except BaseException as e:  # noqa: B902
            state.notes.append("the profiler could not stop: %s" % e)
    cancelled = ""
    if outcome == "cancelled":
        if not state.trace_written:
            cancelled = "before_trace"
        elif in_step in ("baseline_host", "baseline_sync"):
            cancelled = "baseline"
            state.baseline_host_ns, state.baseline_sync_ns = [], []
            state.notes.append("cancelled during the timing without the profiler, after the trace was written: "
                               "the trace is kept without the baseline (the profiler's inflation is not measured)")
        else:
            cancelled = "after_trace"
            state.notes.append("cancelled after the trace was written: the trace is kept")
    keep = state.trace_written and not before_first_step
    partial = outcome not in ("complete", "cancelled") and in_step in ("record", "wait", "warmup")
    if state.steps == 0:
        partial = outcome not in ("complete", "cancelled")
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
    whole_run = state.steps == 0
    compiled_anything = bool(state.compiles and state.compiles.events)
    wrapped = []
    if state.modules is not None:
        state.notes.extend(state.modules.notes(whole_run, compiled_anything))
        wrapped = state.modules.wrapped(whole_run)
    state.notes.extend(_compile_notes(state))
    if whole_run and outcome == "complete" and not cfg.get("step_fn"):
        state.notes.append("no optimizer.step() was called (an inference script?), so the whole run is one step; "
                           "to trace one step at a time, name the function that runs one: --step-fn "
                           "__main__:FUNCTION%s" % hint)
    result.update(
        status=outcome, exit_code=exit_code, detail=detail, steps_seen=state.steps,
        step_source=state.step_source if state.steps > 0 else "whole run (no step boundary: %s)" % (
            "the step function was never called" if cfg.get("step_fn") else "no optimizer.step() call"),
        wrapped_modules=wrapped, trace_written=keep, partial=bool(partial and keep), profiled_ns=state.profiled_ns,
        baseline_host_ns=state.baseline_host_ns, baseline_sync_ns=state.baseline_sync_ns,
        device_sync=state.sync_device, notes=state.notes, open_step=open_step,
        rank=int(os.environ.get("RANK", "0")), world_size=int(os.environ.get("WORLD_SIZE", "1")),
        setup_ns=state.setup_ns, compiles=state.compiles.events if state.compiles else [],
        cpu_wait_trace_ns=_per_step(state, "trace", len(state.profiled_ns)),
        cpu_wait_baseline_ns=_per_step(state, "baseline", len(state.baseline_host_ns)),
        cancelled=cancelled, before_first_step=before_first_step)
    if keep:
        meta = {k: result[k] for k in _META_KEYS}
        if cancelled:
            meta["status"], meta["exit_code"] = "complete", 0  # what the trace holds is whole
        meta["config"] = result["config"]
        try:
            finish_trace(state, part, cfg["out"], meta)
        except BaseException as e:  # noqa: B902
            result.update(trace_written=False, write_error="%s: %s" % (type(e).__name__, e))
    elif os.path.exists(part):
        os.unlink(part)
    if state.cancelled and not cancelled and result["trace_written"]:
        # Ctrl-C while the trace was being written: it was written whole; the cancel is said.
        result.update(status="cancelled", exit_code=130, cancelled="after_trace")
        exit_code = 130
    write_result()
    # What comes after (the script's atexit work) runs as in plain Python: Ctrl-C interrupts it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return exit_code
