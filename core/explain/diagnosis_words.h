// The diagnosis's words: what each cause is called and what the trace shows of it, fitted to the
// program and the machine the trace comes from (FixFacts), a piece of evidence in a phrase, and the
// sentence a ranked cause becomes. diagnosis.cpp splits the time, fixes.cpp says what to do; this
// file says what was found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/explain/diagnosis.h"
#include "core/explain/fixes.h"

namespace attnscope::diagnosis_words {

std::string pct(double share);

struct CauseWords {
  std::string label;  // what it is, in a few words
  std::string what;   // what the trace shows, in a sentence
};

// `items`: the cause's evidence (set-up names its pieces with their times).
CauseWords wordsFor(Cause c, const FixFacts& f, const std::vector<EvidenceItem>& items = {});
std::string sentence(const DiagnosedCause& c, const CauseWords& w, int64_t wallNs, size_t steps);
// One piece of evidence in a phrase: "1,360 hipFree calls inside aten::miopen_convolution_backward (1,000)
// and aten::miopen_convolution (360), 3.300 s (97% of it)".
std::string itemPhrase(const EvidenceItem& it);

}  // namespace attnscope::diagnosis_words
