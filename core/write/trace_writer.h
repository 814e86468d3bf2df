// Writes an EventStore as torch.profiler's Chrome-trace JSON (Kineto
// schema 1): our reader, Perfetto and HTA load it. Used by the engine for
// its runs and by the GUI's Export trace.
#pragma once

#include <string>
#include <string_view>

#include "core/store/event_store.h"

namespace attnscope {

// `extraMembers` is raw JSON inserted as top-level members at the end of the
// document, e.g. "\"attnscope\": {...}" (no leading comma).
std::string chromeTraceJson(const EventStore& store, std::string_view extraMembers = {});

// Python repr (as the reader stores "Input type" / "Concrete Inputs") back to
// JSON: 'x' -> "x", None -> null, True/False -> true/false.
std::string pyReprToJson(std::string_view repr);

}  // namespace attnscope
