// The Ranks view's words: the line under the headline (ranks, world size, backend, step time with its
// spread) and the findings (stragglers with their reason, hangs with the missing ranks, the clock
// offsets and their uncertainty, collectives not matched, missing, doubled or mixed ranks) as the
// rich text the findings pane shows.
#pragma once

#include <QString>

#include "core/ranks/job.h"

namespace attnscope::ui {

QString jobSubtitle(const ranks::JobReport& r);
QString jobFindingsHtml(const ranks::JobReport& r);

}  // namespace attnscope::ui
