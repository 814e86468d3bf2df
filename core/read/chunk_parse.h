// Parsing what the chunked reader cut: one chunk of events, and the object around them.
#pragma once

#include <string>

#include "core/read/chunked_reader.h"
#include "core/read/trace_parser.h"

namespace attnscope::reader {

// Parses one chunk into `p`; false when the text is not what we expect. `capacity` is the
// parser's allocation, grown as needed; invalid UTF-8 is repaired in place (*fixed bytes, the
// first at *firstBad).
bool parseChunk(od::parser& parser, size_t& capacity, const Chunk& w, Parser& p, const ReaderLimits& limits,
                size_t* fixed, size_t* firstBad);
// The object around the events; false when it is not exactly one "traceEvents": [] plus metadata
// keys (which go to mp.topMeta).
bool parseMetadata(std::string md, Parser& mp, const ReaderLimits& limits);

}  // namespace attnscope::reader
