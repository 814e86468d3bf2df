// Small argument parser shared by the attnscope-cli commands.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cache/open_trace.h"
#include "core/read/trace_reader.h"

namespace attnscope::cli {

// Thrown for bad usage or bad input: main() prints it and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;

class Args {
 public:
  Args(std::string command, std::vector<std::string> args) : command_(std::move(command)), args_(std::move(args)) {}

  bool flag(const std::string& name);  // --asc
  std::optional<std::string> value(const std::string& name, const std::string& alias = {});
  std::optional<uint64_t> number(const std::string& name);
  bool wantsHelp() const;
  // Remaining positional arguments; throws on unknown --options.
  std::vector<std::string> positionals(size_t min, size_t max);

 private:
  std::string command_;
  std::vector<std::string> args_;
};

// --max-decompressed, --max-depth, --max-string, --max-events: the reader's limits.
ReaderLimits readerLimits(Args& a);
inline constexpr const char* kLimitsHelp =
    "  --max-decompressed BYTES  refuse .gz files that inflate beyond this (default 8 GiB)\n"
    "  --max-depth N             JSON nesting limit (default 256)\n"
    "  --max-string BYTES        longest name or string argument (default 1 MiB)\n"
    "  --max-events N            load at most N events, count the rest (default 200,000,000)\n"
    "  --no-cache                read the JSON, neither reading nor writing the trace's columnar cache\n"
    "                            (TRACE.attnscope/trace/; ATTNSCOPE_CACHE=off does the same for every command)\n";

// Loads a trace or throws UsageError with the reader's message. Prints the
// reader's warning, if any, to stderr.
EventStore loadOrThrow(const std::string& path, const ReaderLimits& limits);

// The reader's limits and --no-cache; `snapshot`: what the command needs when there is no cache.
cache::OpenOptions openOptions(Args& a, const SnapshotOptions& snapshot = {});
// Opens a trace from its columnar cache when it has a valid one, else reads it (and writes the cache);
// throws UsageError with the reader's message. Prints the reader's warning, and why the cache could not
// be written, to stderr.
std::shared_ptr<const TraceSnapshot> openOrThrow(const std::string& path, const cache::OpenOptions& options);

// --format: one of `allowed` (the first is the default); throws UsageError
// naming the command otherwise.
std::string formatOption(Args& a, const std::string& command, std::initializer_list<const char*> allowed);

// Writes to -o FILE atomically, or to stdout. Throws UsageError on failure.
void emit(const std::optional<std::string>& outPath, const std::string& text);

}  // namespace attnscope::cli
