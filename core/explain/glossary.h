// What event names and table terms mean, in a few plain sentences. The
// verdicts of `explain` refer to these keys; the GUI shows them as tooltips.
#pragma once

#include <span>
#include <string_view>

namespace attnscope {

struct GlossaryEntry {
  std::string_view key;  // an event name, a trace category or a column
  std::string_view text;
};

std::span<const GlossaryEntry> glossary();
// The entry for an event name: exact key, else the longest key the name
// starts with (cudaLaunchKernelExC -> cudaLaunchKernel). Null if none.
const GlossaryEntry* glossaryFor(std::string_view name);

}  // namespace attnscope
