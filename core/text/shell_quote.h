// A command as a user would paste it into a POSIX shell: each word quoted only where it needs to be.
#pragma once

#include <string>
#include <vector>

namespace attnscope {

// The word as is when it has only characters a shell leaves alone, else in single quotes ('' -> '\'').
std::string shellQuote(const std::string& word);
// The words, each quoted, joined by spaces.
std::string shellJoin(const std::vector<std::string>& words);

}  // namespace attnscope
