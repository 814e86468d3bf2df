// Core's UTF-8 strings and durations as QStrings (one helper for the whole ui).
#pragma once

#include <QString>
#include <cstdint>
#include <string_view>

#include "core/text/duration.h"

namespace attnscope::ui {

inline QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
// durationText as a QString: "27.2 us", "1.754 ms".
inline QString durationQ(int64_t ns) { return QString::fromStdString(durationText(ns)); }
// usText as a QString: "298.889 us".
inline QString usQ(int64_t ns) { return QString::fromStdString(usText(ns)); }

}  // namespace attnscope::ui
