// Summary of a loaded trace for `attnscope-cli info` and the GUI status line.
#pragma once

#include <string>
#include <string_view>

#include "core/store/event_store.h"

namespace attnscope {

std::string traceInfoText(const EventStore& store);
// `extraMembers`: raw JSON members appended to the object (e.g. "\"ledger\": {...}").
std::string traceInfoJson(const EventStore& store, std::string_view extraMembers = {});
// One line: "201,087 events · 3 lanes · 12.3 ms · 0 bad"
std::string traceSummaryLine(const EventStore& store);

}  // namespace attnscope
