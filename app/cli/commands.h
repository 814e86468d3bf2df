#pragma once

#include <string>
#include <vector>

#include "cli_args.h"

namespace attnscope::cli {

int cmdTable(Args& a);
int cmdInfo(Args& a);
int cmdRun(const std::vector<std::string>& args);

}  // namespace attnscope::cli
