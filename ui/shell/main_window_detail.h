// What MainWindow's three source files share (main_window.cpp builds the window,
// main_window_files.cpp opens, saves and exports, main_window_runs.cpp runs and compares).
#pragma once

#include <cstddef>

namespace attnscope::ui::main_window_detail {

inline constexpr int kMaxRecent = 10;
inline constexpr int kStateVersion = 2;  // 2: the explanation docks at the bottom, the run docks hidden
inline constexpr size_t kMaxCachedTraces = 8;

}  // namespace attnscope::ui::main_window_detail
