// The cache's nested records through the archive (archive.h): the trace's metadata, lanes, collectives'
// args and bad counts, torch's tables (their rows; the rows' event lists are columns of their own), and
// the explanation. Each record lists its fields once (records.cpp) for both directions; a static_assert
// on each record's size makes a new field a build error there until it is listed.
#pragma once

#include <string>
#include <string_view>

#include "core/cache/archive.h"
#include "core/explain/explanation.h"
#include "core/snapshot/founding_answer.h"
#include "core/store/event_store.h"
#include "core/tables/key_averages.h"

namespace attnscope::cache {

// The store's small parts (everything but its columns and indexes): bytes of one archive.
std::string storeRecords(const EventStore& s);
// Reads them into `p` (its meta, lanes, comms, counts, times); false when the bytes are damaged.
bool readStoreRecords(std::string_view bytes, EventStore::Parts* p);

// A table without its rows' event lists (each row's count is kept: the lists are stored apart).
std::string tableRecords(const KeyAverages& t);
bool readTableRecords(std::string_view bytes, KeyAverages* t, std::vector<uint64_t>* eventCounts);

std::string explanationRecords(const Explanation& x);
bool readExplanationRecords(std::string_view bytes, Explanation* x);

// The founding answer (core/snapshot/founding_answer.h), or its absence (nullptr).
std::string answerRecords(const FoundingAnswer* x);
bool readAnswerRecords(std::string_view bytes, std::shared_ptr<const FoundingAnswer>* x);

}  // namespace attnscope::cache
