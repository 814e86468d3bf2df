#pragma once

#include "cli_args.h"

namespace attnscope::cli {

int cmdTable(Args& a);
int cmdInfo(Args& a);

}  // namespace attnscope::cli
