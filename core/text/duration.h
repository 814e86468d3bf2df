// Durations as text for people: every report, table and label turns int64
// nanoseconds into text here, so a figure reads the same everywhere.
#pragma once

#include <cstdint>
#include <string>

namespace attnscope {

// "298.889 us": microseconds with three decimals (explain, why, compare,
// the ledger: figures a reader compares across lines).
std::string usText(int64_t ns);

// The unit that fits (ns, us, ms, s) with three significant-ish decimals:
// "1.754 ms", "27.2 us", "850 ns" (timeline labels, tooltips, legends).
std::string durationText(int64_t ns);

// A span: the unit that fits (us, ms, s; never ns) with three decimals: "6.141 ms" (info).
std::string spanDurationText(int64_t ns);

// A ruler label: the unit of `step` and enough decimals to tell ticks that
// far apart ("4200 us", "4200.5 us").
std::string tickText(int64_t ns, int64_t step);

// torch's own table format (torch.autograd.profiler_util._format_time):
// "540.410us", "1.754ms", "2.000s" from microseconds, no space.
std::string torchTimeText(double us);

// Byte counts for people: "512.00 MiB", "10.13 KiB", "8 B" (views, the app's tables).
std::string bytesText(int64_t bytes);

// `text` cut to at most `max` bytes with "..." (UTF-8 safe: never inside a multi-byte character):
// explain's and compare's line bounds, long kernel names.
std::string clipText(const std::string& text, size_t max);

}  // namespace attnscope
