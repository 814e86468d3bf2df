// What MainWindow's three source files share (main_window.cpp builds the window,
// main_window_files.cpp opens, saves and exports, main_window_runs.cpp runs and compares).
#pragma once

#include <cstddef>

namespace attnscope::ui::main_window_detail {

inline constexpr int kMaxRecent = 10;
inline constexpr int kStateVersion = 3;  // 3: the docks at the right as tabs (2: at the bottom)
inline constexpr size_t kMaxCachedTraces = 8;

}  // namespace attnscope::ui::main_window_detail
