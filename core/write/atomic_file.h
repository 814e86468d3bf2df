// Atomic writes: temp file in the target directory, fsync, rename.
#pragma once

#include <string>
#include <string_view>

namespace attnscope {

// Writes `data` to `path` atomically. On failure returns false, sets `error`
// to a message naming the path and the reason, and leaves no partial file.
bool writeFileAtomic(const std::string& path, std::string_view data, std::string* error);

}  // namespace attnscope
